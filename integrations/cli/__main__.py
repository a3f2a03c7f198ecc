"""`python -m sift.integrations.cli`: the `sift` command."""

from __future__ import annotations

from sift.integrations.cli import main

# Guarded: worker processes (spawned to read PDF and Office files) import this module
# again as `__mp_main__`, and must not run the command a second time.
if __name__ == "__main__":
    main()
