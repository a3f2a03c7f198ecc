"""The progress events an episode emits are exactly those typed in sift.progress: each
name in `EventName`, each payload the keys of its TypedDict and nothing else."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, get_args, get_type_hints

from sift import progress
from sift.graphs import EVENT_NAMES
from sift.types import Decision, ToolCall

from .conftest import call
from .test_budget import TIERS

PAYLOADS = {get_args(get_type_hints(t)["event"])[0]: t for t in get_args(progress.ProgressEvent)}


def _conforms(event: dict[str, Any]) -> None:
    payload = PAYLOADS[event["event"]]
    assert set(event) - payload.__required_keys__ <= payload.__optional_keys__, event
    assert payload.__required_keys__ <= set(event), event
    for key, hint in get_type_hints(payload).items():
        if key in event and typing.get_origin(hint) is typing.Literal:
            assert event[key] in get_args(hint), (key, event)


def test_every_name_has_one_payload_and_the_graph_exports_the_same_names() -> None:
    assert set(PAYLOADS) == set(get_args(progress.EventName)) == set(progress.EVENT_NAMES)
    assert EVENT_NAMES == progress.EVENT_NAMES


async def test_an_episode_emits_only_typed_events(corpus, run) -> None:
    def heavy(view):
        # A prompt close to the budget: the harness prunes by itself.
        return Decision(
            tool_calls=[ToolCall(name="grep_corpus", arguments={"pattern": "x"})],
            prompt_tokens=TIERS["budget_tokens"] - 50,
        )

    turns: list[Any] = [[call("search_corpus", query=q)] for q in ("Vesuvius", "Etna Sicily")]
    turns.append(lambda view: [call("prune_chunks", chunk_ids=list(view.seen)[:1])])
    turns.append(heavy)
    _, _, events = await run(corpus, turns, **TIERS)
    for event in events:
        _conforms(event)
    assert {e["event"] for e in events} == set(EVENT_NAMES)
    assert {e["by"] for e in events if e["event"] == "sift.chunks_pruned"} == {
        "policy",
        "harness",
    }


def test_the_trace_viewer_handles_every_event_and_no_other() -> None:
    import sift.integrations.traceview as traceview

    script = (Path(traceview.__file__).parent / "static" / "ui.js").read_text(encoding="utf-8")
    handled = {name for name in EVENT_NAMES if f'name === "{name}"' in script}
    assert handled == set(EVENT_NAMES)
