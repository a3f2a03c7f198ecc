"""examples/langgraph_subgraph.py: sift composes as a node and its events reach the parent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sift.graphs import EVENT_NAMES

from ..conftest import load_script

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_subgraph.py"


def load_example():
    # LangGraph resolves the state's annotations through sys.modules (load_script).
    return load_script(EXAMPLE, "langgraph_subgraph_example")


async def test_events_reach_the_parent_and_outputs_land_in_its_state():
    example = load_example()
    final, events = await example.run(
        "Who wrote letters about the volcano that buried Pompeii?", embedder="hash"
    )
    names = [event["event"] for _, event in events]
    assert names[0] == "sift.turn_started" and names[-1] == "sift.finished"
    assert set(names) <= set(EVENT_NAMES)
    assert {"sift.tool_call", "sift.chunks_added", "sift.token_usage"} <= set(names)
    assert all(namespace and namespace[0].startswith("sift:") for namespace, _ in events)
    assert final["stopped_because"] == "final"
    assert final["evidence"] and final["usage"].turns >= 1
    assert final["report"].splitlines()[0].startswith(final["evidence"][0].title)
    assert "result" not in final  # only the keys the parent declares are merged


def test_the_example_runs_as_a_script():
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "sift.finished" in done.stdout and "stopped because: final" in done.stdout
