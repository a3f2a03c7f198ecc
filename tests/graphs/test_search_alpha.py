"""search_corpus hands the harness's hybrid weight to the store, and leaves it out when unset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sift.graphs import HarnessConfig, ScriptedPolicy, search
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Decision, Document, ToolCall


class _Recording:
    def __init__(self, inner: SqliteCorpus) -> None:
        self.inner = inner
        self.calls: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, query: str, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.inner.search(query, **kwargs)


def _episode(corpus: Any, config: HarnessConfig) -> None:
    policy = ScriptedPolicy(
        [
            Decision(tool_calls=[ToolCall(name="search_corpus", arguments={"query": "granite"})]),
            Decision(final=[]),
        ]
    )
    search("granite?", corpus, policy=policy, config=config)


def test_search_alpha_reaches_the_store_only_when_set(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "s", embedder="hash") as store:
        store.upsert([Document(id="a", text="granite quarry"), Document(id="b", text="river")])
        recording = _Recording(store)
        # The policy's search, not the harness's plain search of the question (which
        # always runs at the store's weight: HarnessConfig.plain_first).
        _episode(recording, HarnessConfig(search_alpha=0.3))
        assert recording.calls[0]["alpha"] == 0.3
        recording.calls.clear()
        _episode(recording, HarnessConfig(search_alpha=None))
        assert "alpha" not in recording.calls[0]
        assert HarnessConfig().search_alpha == 0.5
