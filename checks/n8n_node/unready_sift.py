"""A loopback stand-in in front of a live `sift serve` for the answers a check cannot
provoke on demand, in sift's exact wire format (integrations/http/_errors.py):

- under /warming: the first two requests get 503 `{"error_code": 5031, ...}` with
  Retry-After 1, as a server still opening its collections answers; later ones are
  forwarded to the real server and its answer returned;
- under /stalled: every request gets 503 5040 (the search and its single-shot fallback
  missed the deadline), which a client must not retry.

Each request is logged as one JSON line (path, status) so the check can count them.

    python3 unready_sift.py PORT UPSTREAM_URL LOG_FILE
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WARMING = {
    "error_code": 5031,
    "error_msg": "the service is still warming up (opening its collections); retry shortly",
}
_STALLED = {
    "error_code": 5040,
    "error_msg": "the search did not finish within its deadline (30 s) and the single-shot "
    "fallback did not either: the store is stalled or the server is overloaded; retry",
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *_: Any) -> None:
        pass

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        server: Any = self.server
        with server.lock, open(server.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": self.path, "status": status}) + "\n")

    def _error(self, body: dict[str, Any]) -> None:
        headers = {"Content-Type": "application/json", "Retry-After": "1"}
        self._answer(503, json.dumps(body).encode(), headers)

    def _handle(self) -> None:
        server: Any = self.server
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        prefix, _, rest = self.path.lstrip("/").partition("/")
        if prefix == "stalled":
            self._error(_STALLED)
            return
        with server.lock:
            server.warming_left -= 1
            warming = server.warming_left >= 0
        if prefix != "warming" or warming:
            self._error(_WARMING)
            return
        request = urllib.request.Request(
            f"{server.upstream}/{rest}",
            data=data or None,
            method=self.command,
            headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                status, body = answer.status, answer.read()
                kind = answer.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
            kind = exc.headers.get("Content-Type", "application/json")
        self._answer(status, body, {"Content-Type": kind})

    do_GET = _handle
    do_POST = _handle


def main() -> None:
    port, upstream, log_path = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]
    server: Any = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.upstream, server.log_path = upstream, log_path
    server.lock, server.warming_left = threading.Lock(), 2
    server.serve_forever()


if __name__ == "__main__":
    main()
