"""`sift mcp` over stdio, fed raw lines as a broken or hostile client might write them:
every line gets an answer, and the server goes on serving."""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

# A hang guard only: a loaded CI box may take tens of seconds to start Python.
HANG_GUARD_S = 240


class Wire:
    """A `sift mcp` subprocess spoken to line by line; stdout is read on a thread so a
    missing answer fails the test (after the hang guard) instead of hanging it."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._pump, args=(self.process.stdout,), daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._drain, daemon=True)
        self._stderr_reader.start()

    def _pump(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.lines.put(line)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def send(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def request(self, id_: int, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message, ensure_ascii=False))

    def answer(self) -> dict[str, Any]:
        reply: dict[str, Any] = json.loads(self.lines.get(timeout=HANG_GUARD_S))
        return reply

    def close(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(HANG_GUARD_S)
        self._stderr_reader.join(HANG_GUARD_S)
        return self.stderr.decode("utf-8", "replace")


def cursor_of(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode()


def test_undecodable_lines_get_parse_errors_and_bad_cursors_invalid_params(
    store_path: Path, sift_mcp: Callable[..., list[str]]
) -> None:
    wire = Wire(sift_mcp("--store", str(store_path)))
    try:
        wire.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert wire.answer()["id"] == 1
        wire.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

        request = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}'
        undecodable = {
            "lone surrogate": request % (2, '{"name":"grep","arguments":{"pattern":"\\ud800"}}'),
            "5,000 digits": request
            % (4, '{"name":"grep","arguments":{"top_k":%s}}' % ("9" * 5000)),
            "50,000 deep": request % (5, "[" * 50_000 + "]" * 50_000),
            "not JSON": "kestrel",
            "cut short": request % (6, '{"name":"grep"'),
        }
        for name, line in undecodable.items():
            wire.send(line)
            reply = wire.answer()
            assert reply["id"] is None, name
            assert reply["error"]["code"] == -32700, (name, reply)
            # Short: says what, never echoes the (possibly huge) line.
            assert len(reply["error"]["message"]) < 200, name

        # A surrogate's raw bytes are no UTF-8: read as U+FFFD, the request is answered.
        wire.send(request % (3, '{"name":"grep","arguments":{"pattern":"\ud800"}}'))
        assert wire.answer()["id"] == 3

        # JSON that is no JSON-RPC message is an invalid request, not a parse error.
        wire.send("[1, 2, 3]")
        assert wire.answer()["error"]["code"] == -32600

        # Still serving: a listing, and Japanese both ways.
        wire.request(10, "tools/list")
        listed = wire.answer()
        assert listed["id"] == 10
        assert {tool["name"] for tool in listed["result"]["tools"]} == {
            "search",
            "read_document",
            "grep",
        }
        wire.request(
            11, "tools/call", {"name": "search", "arguments": {"question": "富士山の標高は？"}}
        )
        found = wire.answer()
        assert found["id"] == 11 and not found["result"].get("isError"), found
        report = found["result"]["structuredContent"]
        assert report["question"] == "富士山の標高は？"
        assert "fuji" in [item["doc_id"] for item in report["evidence"]]

        bad_cursors = {
            "huge": "A" * 100_000,
            "malformed": "%%%",
            "offset beyond any store": cursor_of(json.dumps({"offset": 10**30})),
            "50,000 deep": cursor_of("[" * 50_000 + "]" * 50_000)[:190],
            "deep and short": cursor_of("[" * 100 + "]" * 100),
            "5,000-digit offset": cursor_of('{"offset":%s}' % ("9" * 5000)),
            "negative offset": cursor_of('{"offset":-1}'),
        }
        for number, (name, cursor) in enumerate(bad_cursors.items(), start=20):
            wire.request(number, "resources/list", {"cursor": cursor})
            reply = wire.answer()
            assert reply["id"] == number, name
            assert reply["error"]["code"] == -32602, (name, reply)
            assert "invalid cursor" in reply["error"]["message"], name

        # A good listing after all that.
        wire.request(40, "resources/list")
        names = {r["name"] for r in wire.answer()["result"]["resources"]}
        assert {"fuji", "vesuvius"} <= names
    finally:
        stderr = wire.close()
    assert "Traceback" not in stderr, stderr
    assert wire.process.returncode == 0, stderr
