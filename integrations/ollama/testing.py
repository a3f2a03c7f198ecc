"""A loopback Ollama for tests: a real HTTP server on 127.0.0.1 speaking Ollama's API.

We ship our fakes (as httpx ships its test transport): users of sift can test their own
set-ups against this server without a model. It implements `/api/chat` (streamed NDJSON
and whole), `/api/embed`, `/api/show` and `/api/version`, replays scripted gpt-oss-style
replies, injects the faults a real Ollama shows (404 model, 500, 429, slow replies, an
error line in the middle of a stream, `error parsing tool call`), and records every
request so a test can assert exactly what sift sent.

    with FakeOllama() as server:
        server.script(reply(tool_calls=[tool_call("search_corpus", query="x")]),
                      final_answer([("doc_0", "because")]))
        policy = OllamaPolicy(host=server.host)
        ...
        assert server.chat_requests()[0]["options"]["num_ctx"] >= 32768
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeOllama",
    "FakeRequest",
    "Fault",
    "Reply",
    "final_answer",
    "multi_tool_use",
    "refused_host",
    "reply",
    "tool_call",
    "tool_parse_error",
]


@dataclass
class Reply:
    """One assistant turn. `tool_calls` holds (name, arguments) pairs sent as given."""

    content: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    prompt_eval_count: int | None = None  # None: computed from the request
    eval_count: int | None = None
    done_reason: str = "stop"
    # Pieces per field when streaming, as Ollama sends a few tokens per line.
    stream_pieces: int = 3
    # Seconds between stream lines, to pace a stream like a model generating tokens.
    line_seconds: float = 0.0


@dataclass
class Fault:
    """A failure: an HTTP error status, a delay before replying, or a stream that breaks.

    - `status`: answer with this HTTP status and `{"error": error}` (404, 429, 500, ...);
    - `delay`: seconds to wait before answering (then `then`, or an empty final reply);
    - `mid_stream`: send a few stream lines of `then`, then an `{"error": ...}` line.
    """

    status: int | None = None
    error: str = "internal error"
    delay: float = 0.0
    mid_stream: bool = False
    then: Reply | None = None


@dataclass
class FakeRequest:
    method: str
    path: str
    body: Any
    headers: dict[str, str]
    # Seconds the server spent on this request, from its first byte read to its last
    # byte written: what a benchmark subtracts to measure the client's own overhead.
    seconds: float = 0.0


def tool_call(name: str, /, **arguments: Any) -> tuple[str, Any]:
    return (name, arguments)


def multi_tool_use(*calls: tuple[str, Any], shape: str = "object") -> tuple[str, Any]:
    """A `multi_tool_use` call; shape "object" is `{"tool_calls": [...]}`, "uses" is
    OpenAI's `{"tool_uses": [{"recipient_name": "functions.x", "parameters": ...}]}`."""
    if shape == "uses":
        uses = [{"recipient_name": f"functions.{n}", "parameters": a} for n, a in calls]
        return ("multi_tool_use.parallel", {"tool_uses": uses})
    return ("multi_tool_use", {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]})


def reply(
    content: str = "",
    *,
    thinking: str = "",
    tool_calls: Sequence[tuple[str, Any]] = (),
    **extra: Any,
) -> Reply:
    return Reply(content=content, thinking=thinking, tool_calls=list(tool_calls), **extra)


def final_answer(docs: Iterable[tuple[str, str]], *, thinking: str = "") -> Reply:
    """Context-1's final format: `<Document id=...>` blocks with a justification."""
    body = "\n".join(
        f"<Document id={doc_id}>\n<Justification>{why}</Justification>\n</Document>"
        for doc_id, why in docs
    )
    return Reply(content=body, thinking=thinking)


def tool_parse_error(raw: str) -> Fault:
    """What Ollama answers when it cannot parse the arguments gpt-oss wrote: HTTP 500."""
    return Fault(
        status=500,
        error=f"error parsing tool call: raw='{raw}', err=invalid character looking for "
        "beginning of value",
    )


def refused_host() -> str:
    """An address on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


_WORD = re.compile(r"\w+", re.UNICODE)


def _hash_vector(text: str, dim: int) -> list[float]:
    """The fake's embedding model: words and their character trigrams hashed into `dim`
    signed buckets, so texts sharing words get near vectors (enough for dense search in
    tests). Its own, not sift's HashEmbedder: the embedders use this package's client,
    so this package must not use them."""
    vector = [0.0] * dim
    words = [w.lower() for w in _WORD.findall(text)]
    grams = [w[i : i + 3] for w in words if len(w) > 3 for i in range(len(w) - 2)]
    for feature in words + grams:
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        vector[value % dim] += 1.0 if (value >> 63) else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class FakeOllama:
    """A scripted Ollama on 127.0.0.1. Use as a context manager, or start()/stop()."""

    def __init__(
        self,
        models: Sequence[str] = ("gpt-oss:20b",),
        *,
        family: str = "gptoss",
        capabilities: Sequence[str] = ("completion", "tools", "thinking"),
        embed_dim: int = 64,
        version: str = "0.12.6",
        responder: Callable[[dict[str, Any]], Reply | Fault] | None = None,
    ) -> None:
        self.models = list(models)
        self.family = family
        self.capabilities = list(capabilities)
        self.embed_dim = embed_dim
        self.version = version
        # Used when the script is empty; without one an empty script is a 500 that
        # names the problem, so a test never passes on a reply it did not script.
        self.responder = responder
        self.requests: list[FakeRequest] = []
        self.embed_faults: deque[Fault] = deque()
        self._script: deque[Any] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._address: str | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- control

    @property
    def host(self) -> str:
        """The server's address (still readable after stop(), for assertions)."""
        if self._address is None:
            raise RuntimeError("FakeOllama is not started")
        return self._address

    def start(self) -> FakeOllama:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._address = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._server.daemon_threads = True
        # A short poll interval keeps stop() fast (shutdown waits for one poll).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *items: Reply | Fault | Callable[[dict[str, Any]], Reply | Fault]) -> None:
        """Queue replies for the next /api/chat calls, in order."""
        with self._lock:
            self._script.extend(items)

    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path == "/api/chat"]

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    # ---------------------------------------------------------------- behaviour

    def _next_chat(self, body: dict[str, Any]) -> Reply | Fault:
        with self._lock:
            item = self._script.popleft() if self._script else None
        if item is None:
            if self.responder is None:
                return Fault(status=500, error="FakeOllama: no scripted reply left")
            item = self.responder
        return item(body) if callable(item) else item

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The `prompt_eval_count` this server reports for a chat request body.

        A stand-in for the model's tokenizer, about four characters a token; like the
        real template, the tool declarations count as part of the prompt."""
        text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
        return max(1, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeOllama

    def setup(self) -> None:
        super().setup()
        # Headers and body go out as separate writes; without NODELAY, Nagle's algorithm
        # meets the client's delayed ACK and every reply waits tens of milliseconds.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # ---------------------------------------------------------------- plumbing

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._pending: list[bytes] = []

    def _stream_line(self, payload: Any, pace: float = 0.0) -> None:
        # One HTTP chunk per line, as Ollama sends them. Unpaced lines are written out
        # together at the end, so the server's own time stays apart from the client's.
        data = json.dumps(payload).encode() + b"\n"
        self._pending.append(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        if pace:
            self.wfile.write(b"".join(self._pending))
            self.wfile.flush()
            self._pending.clear()
            time.sleep(pace)

    def _end_stream(self) -> None:
        self.wfile.write(b"".join(self._pending) + b"0\r\n\r\n")
        self.wfile.flush()

    def _record(self, body: Any, started: float) -> FakeRequest:
        request = FakeRequest(
            method=self.command,
            path=self.path,
            body=body,
            headers={k.lower(): v for k, v in self.headers.items()},
        )
        self.server_fake.requests.append(request)
        return request

    def do_GET(self) -> None:
        started = time.perf_counter()
        request = self._record(None, started)
        if self.path == "/api/version":
            self._send_json(200, {"version": self.server_fake.version})
        elif self.path == "/api/tags":
            self._send_json(200, {"models": [{"name": m} for m in self.server_fake.models]})
        else:
            self._send_json(404, {"error": f"404 page not found: {self.path}"})
        request.seconds = time.perf_counter() - started

    def do_POST(self) -> None:
        started = time.perf_counter()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        request = self._record(body, started)
        try:
            if not isinstance(body, dict):
                self._send_json(400, {"error": "invalid JSON body"})
            elif self.path in {"/api/chat", "/api/embed", "/api/show"} and (
                body.get("model") not in self.server_fake.models
            ):
                name = body.get("model")
                self._send_json(404, {"error": f'model "{name}" not found, try pulling it first'})
            elif self.path == "/api/chat":
                self._chat(body)
            elif self.path == "/api/embed":
                self._embed(body)
            elif self.path == "/api/show":
                self._show(body)
            else:
                self._send_json(404, {"error": f"404 page not found: {self.path}"})
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test); nothing to answer.
            pass
        request.seconds = time.perf_counter() - started

    # ---------------------------------------------------------------- endpoints

    def _show(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        self._send_json(
            200,
            {
                "modelfile": f"FROM {body['model']}",
                "parameters": "",
                "template": "{{ .Messages }}",
                "details": {
                    "format": "gguf",
                    "family": fake.family,
                    "families": [fake.family],
                    "parameter_size": "20.9B",
                    "quantization_level": "MXFP4",
                },
                "model_info": {f"{fake.family}.context_length": 131072},
                "capabilities": fake.capabilities,
            },
        )

    def _embed(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        if fake.embed_faults:
            fault = fake.embed_faults.popleft()
            time.sleep(fault.delay)
            if fault.status is not None:
                self._send_json(fault.status, {"error": fault.error})
                return
        inputs = body.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        self._send_json(
            200,
            {
                "model": body["model"],
                "embeddings": [_hash_vector(t, fake.embed_dim) for t in texts],
                "total_duration": 1000,
                "load_duration": 10,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            },
        )

    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        item = fake._next_chat(body)
        stream = body.get("stream", True)
        mid_stream_error: str | None = None
        if isinstance(item, Fault):
            if item.delay:
                time.sleep(item.delay)
            if item.status is not None:
                self._send_json(item.status, {"error": item.error})
                return
            if item.mid_stream:
                mid_stream_error = item.error
            item = item.then or Reply(content="")
        prompt = item.prompt_eval_count
        if prompt is None:
            prompt = fake.prompt_tokens(body)
        completion = item.eval_count
        if completion is None:
            completion = max(1, (len(item.content) + len(item.thinking)) // 4)
        base = {"model": body["model"], "created_at": "2026-01-01T00:00:00Z"}
        done = {
            **base,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": item.done_reason,
            "total_duration": 1_000_000,
            "load_duration": 1_000,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 500_000,
            "eval_count": completion,
            "eval_duration": 400_000,
        }
        calls = [{"function": {"name": n, "arguments": a}} for n, a in item.tool_calls]
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": item.content}
            if item.thinking:
                message["thinking"] = item.thinking
            if calls:
                message["tool_calls"] = calls
            self._send_json(200, {**done, "message": message})
            return
        self._start_stream()
        lines = 0
        for key in ("thinking", "content"):
            for piece in _pieces(getattr(item, key), item.stream_pieces):
                message = {"role": "assistant", "content": ""}
                message[key] = piece
                self._stream_line({**base, "message": message, "done": False}, item.line_seconds)
                lines += 1
                if mid_stream_error is not None and lines >= 2:
                    break
            if mid_stream_error is not None and lines >= 1:
                break
        if mid_stream_error is not None:
            self._stream_line({"error": mid_stream_error})
            self._end_stream()
            return
        if calls:
            message = {"role": "assistant", "content": "", "tool_calls": calls}
            self._stream_line({**base, "message": message, "done": False})
        self._stream_line(done)
        self._end_stream()


def _pieces(text: str, n: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, n)))
    return [text[i : i + size] for i in range(0, len(text), size)]
