"""sift's progress events as MCP progress notifications.

The harness calls its listener synchronously from the episode's own loop; the relay
queues each event and a task of the same request sends it to the client. `progress`
counts turns (a tool call moves it on within its turn) and `total` is the run's
max_turns, so a client can draw a bar; the final event sets progress to total. A
notification that cannot be sent never stops the search.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable

import anyio

from sift.progress import ProgressEvent

__all__ = ["ProgressRelay", "describe"]

log = logging.getLogger("sift.mcp")

Report = Callable[[float, float | None, str | None], Awaitable[None]]


def _short(value: object, width: int = 80) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def describe(typed: ProgressEvent, total: int) -> str | None:
    """The message of one event, or None for events that are not reported."""
    if typed["event"] == "sift.turn_started":
        return f"turn {typed.get('turn')}/{total}: {typed.get('tokens', 0):,} tokens in context"
    if typed["event"] == "sift.tool_call":
        arguments = typed.get("arguments") or {}
        argument = next(iter(arguments.values()), "") if isinstance(arguments, dict) else ""
        text = f"turn {typed.get('turn')}: {typed.get('tool')}({_short(argument)!r})"
        if typed.get("error"):
            text += f" refused: {_short(typed['error'])}"
        return text
    if typed["event"] == "sift.finished":
        text = (
            f"finished after {typed.get('turns')} turns: {typed.get('evidence')} passages, "
            f"stopped because {typed.get('stopped_because')}"
        )
        return text + (f" ({_short(typed['error'])})" if typed.get("error") else "")
    return None


class ProgressRelay:
    """The `on_event` listener of one episode and the task that reports its events."""

    def __init__(self, report: Report, total: int) -> None:
        self._report = report
        self._total = total
        self._send, self._receive = anyio.create_memory_object_stream[ProgressEvent](math.inf)
        self._last = -1.0
        self._turn = 0
        self._calls = 0

    def __call__(self, event: ProgressEvent) -> None:
        self._send.send_nowait(event)

    def close(self) -> None:
        """No more events: `run` returns once the queued ones are sent."""
        self._send.close()

    def _progress(self, typed: ProgressEvent) -> float:
        if typed["event"] == "sift.turn_started":
            self._turn, self._calls = int(typed.get("turn") or self._turn + 1), 0
            value = float(self._turn - 1)
        elif typed["event"] == "sift.tool_call":
            self._calls += 1
            value = self._turn - 1 + self._calls / (self._calls + 1)
        else:
            value = float(self._total)
        # The protocol wants every notification to move forward.
        return value if value > self._last else math.nextafter(self._last, math.inf)

    async def run(self) -> None:
        async with self._receive:
            async for event in self._receive:
                message = describe(event, self._total)
                if message is None:
                    continue
                self._last = self._progress(event)
                try:
                    await self._report(self._last, float(self._total), message)
                except Exception as exc:  # a client gone away must not end the search
                    log.debug("progress notification not sent: %s", exc)
