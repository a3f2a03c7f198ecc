"""A loopback server speaking OpenAI's /v1/chat/completions (as llama.cpp's llama-server
and vLLM do), for tests that drive the real ChatOpenAI: it answers each request with the
next scripted reply and keeps every request body."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (content, finish_reason), or a function of the request body that returns them.
Scripted = tuple[str, str] | Callable[[dict[str, Any]], tuple[str, str]]


class OpenAICompatible:
    """Answers each request with `completion(body, next reply)`; by default a reply is
    `Scripted`. A request with no reply left is answered 500."""

    def __init__(self, *replies: Any) -> None:
        self.replies = deque(replies)
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if not fake.replies:
                    self._send(500, {"error": {"message": "no reply left"}})
                    return
                self._send(200, fake.completion(body, fake.replies.popleft()))

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def completion(self, body: dict[str, Any], item: Any) -> dict[str, Any]:
        content, finish = item(body) if callable(item) else item
        message = {"role": "assistant", "content": content}
        return self.envelope(body, message, finish, prompt_tokens=500, completion_tokens=64)

    def envelope(
        self,
        body: dict[str, Any],
        message: dict[str, Any],
        finish: str,
        *,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> dict[str, Any]:
        """A chat.completion answer holding one choice."""
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def __enter__(self) -> OpenAICompatible:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
