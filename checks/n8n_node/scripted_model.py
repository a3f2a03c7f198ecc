"""A loopback OpenAI-compatible chat server with scripted replies, the chat model of the
AI Agent workflow in checks/n8n_node.sh: its first reply asks for the Sift tool, its
second quotes what the tool gave back. Every request is logged (one JSON line each) so the check can
assert what n8n sent it: the tool's declaration, then the tool's output.

    python3 scripted_model.py PORT LOG_FILE "the question the model asks the tool"
"""

from __future__ import annotations

import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-sift-agent"


def _tool_name(request: dict[str, Any]) -> str:
    names = [t.get("function", {}).get("name", "") for t in request.get("tools") or []]
    sift = [n for n in names if "sift" in n.lower()]
    if not sift:
        raise ValueError(f"no Sift tool among the tools declared: {names}")
    return sift[0]


def _reply(request: dict[str, Any], question: str) -> dict[str, Any]:
    """The scripted turn: a tool call while no tool output has come back, then an answer
    naming the documents that output holds."""
    results = [m for m in request.get("messages", []) if m.get("role") == "tool"]
    if not results:
        arguments = json.dumps({"question": question}, ensure_ascii=False)
        function = {"name": _tool_name(request), "arguments": arguments}
        call = {"id": "call_sift_1", "type": "function", "function": function}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    content = results[-1].get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    doc_ids = list(dict.fromkeys(re.findall(r'"doc_id"\s*:\s*"([^"]+)"', text)))
    return {"role": "assistant", "content": f"Sift found these documents: {', '.join(doc_ids)}."}


class _Handler(BaseHTTPRequestHandler):
    server_version = "scripted-openai/1"

    def log_message(self, *_: Any) -> None:  # quiet: the log file says what happened
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        with open(self.server.log_path, "a", encoding="utf-8") as log:  # type: ignore[attr-defined]
            log.write(json.dumps({"path": self.path, "body": request}, ensure_ascii=False) + "\n")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            message = _reply(request, self.server.question)  # type: ignore[attr-defined]
        except ValueError as exc:
            self._json(400, {"error": {"message": str(exc)}})
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        head = {"id": "chatcmpl-scripted", "created": int(time.time()), "model": MODEL}
        if not request.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json(
                200, {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
            )
            return
        # The same reply as server-sent chunks, for clients that stream.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": 0, **c} for c in delta["tool_calls"]]
        chunks = [
            {"index": 0, "delta": delta, "finish_reason": None},
            {"index": 0, "delta": {}, "finish_reason": finish},
        ]
        for choice in chunks:
            chunk = {**head, "object": "chat.completion.chunk", "choices": [choice]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


def main() -> None:
    port, log_path, question = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.log_path = log_path  # type: ignore[attr-defined]
    server.question = question  # type: ignore[attr-defined]
    server.serve_forever()


if __name__ == "__main__":
    main()
