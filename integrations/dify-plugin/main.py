from dify_plugin import DifyPluginEnv, Plugin

# A search is given 60 s by the tool (its deadline) plus 15 s for the call: well within
# the 120 s Dify's plugin template allows a request.
plugin = Plugin(DifyPluginEnv(MAX_REQUEST_TIMEOUT=120))

if __name__ == "__main__":
    plugin.run()
