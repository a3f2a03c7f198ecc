"""AssistedPlanner's recorded MuSiQue episodes, replayed with no model and no store
(issue 45, items 3 and 4).

`python benchmarks/planner_assist.py --model-url ... --fixture tests/fixtures/planner_assist`
ran the assisted planner with Qwen2.5-Coder-1.5B-Instruct (llama-server) on MuSiQue dev
questions and kept, for a few episodes, every question put to the model with its reply
exactly, every search, grep and read the episode made with the store's answer, and the
final evidence (tests/fixtures/planner_assist/episodes.json.gz). The passages the
episodes showed are kept there by reference (a digest of each): their text is read from
../shared/benchmarks/musique (MuSiQue, CC BY 4.0), so the replay skips, saying why, where
that folder is absent. Here each episode runs
again through the real graph: the store answers from the recording, the model from the
table of its replies. The planner is deterministic, so every question it asks must be
one the model was asked (the same words, the same options), and the evidence must be the
recorded one: a change in the planner, the prompts or the harness that changes what the
model is asked, or what its answer does, fails here.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pytest

from sift.graphs import asearch
from sift.graphs.policies import AssistedPlanner, HeuristicPlannerConfig
from sift.llm import ConstrainedReply
from sift.types import Chunk, CorpusStats, GrepResult, Hit, Message

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "planner_assist" / "episodes.json.gz"
EPISODES: list[dict[str, Any]] = (
    json.loads(gzip.decompress(FIXTURE.read_bytes())) if FIXTURE.exists() else []
)


def call_key(method: str, **arguments: Any) -> str:
    """The key a recorded store call is found by: benchmarks/planner_assist.py's
    `call_key` (the chunk ids a search excludes by their hash; filters and vectors, which
    these episodes never set, left out)."""
    if "exclude" in arguments:
        exclude = arguments["exclude"] or ()
        digest = hashlib.sha1("\n".join(sorted(exclude)).encode()).hexdigest()[:16]
        arguments["exclude"] = digest
    arguments.pop("filters", None)
    arguments.pop("vector", None)
    return json.dumps([method, arguments], sort_keys=True, ensure_ascii=False)


def passage_digest(title: str, text: str) -> str:
    """benchmarks/planner_assist.py's `passage_digest`: which passage a chunk showed."""
    return hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:16]


@functools.cache
def musique_passages(folder: Path) -> dict[str, tuple[str, str]]:
    """The MuSiQue corpus's (title, text) by passage id."""
    out: dict[str, tuple[str, str]] = {}
    for line in (folder / "musique" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["id"]] = (row["title"], row["text"])
    return out


class ReplayCorpus:
    """Answers each search, grep and read with the recorded store's answer; a call the
    recording does not hold fails the test (the episode went another way). The shown
    passages' text comes from the shared corpus, checked against the recorded digest."""

    def __init__(self, store: dict[str, Any], passages: dict[str, tuple[str, str]]) -> None:
        self.calls: dict[str, list[list[Any]]] = store["calls"]
        chunks = dict(store["chunks"])
        for cid, digest in store["shared"].items():
            title, text = passages[chunks[cid]["doc_id"]]
            assert passage_digest(title, text) == digest, f"{cid} differs from the recording"
            chunks[cid] = {**chunks[cid], "title": title, "text": text}
        self.chunks = {cid: Chunk.model_validate(c) for cid, c in chunks.items()}

    def _hits(self, key: str) -> list[Hit]:
        if key not in self.calls:
            pytest.fail(f"a store call the recording does not hold: {key[:300]}")
        return [Hit(chunk=self.chunks[cid], score=score) for cid, score in self.calls[key]]

    def search(self, query: str, **kw: Any) -> list[Hit]:
        return self._hits(call_key("search", query=query, **kw))

    def grep(self, pattern: str, **kw: Any) -> GrepResult:
        return GrepResult(hits=self._hits(call_key("grep", pattern=pattern, **kw)))

    def read(self, doc_id: str) -> list[Chunk]:
        return [h.chunk for h in self._hits(call_key("read", doc_id=doc_id))]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self.chunks[c] for c in chunk_ids if c in self.chunks]

    def stats(self) -> CorpusStats:
        docs = {c.doc_id for c in self.chunks.values()}
        return CorpusStats(documents=len(docs), chunks=len(self.chunks))

    def close(self) -> None:
        pass

    def delete(self, doc_ids: Collection[str]) -> int:
        raise AssertionError("a replayed episode never deletes")


class ReplayAsk:
    """The model's recorded replies, found by the exact question (messages and schema)."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.table = {self.key(r["messages"], r["schema"]): r["content"] for r in replies}
        self.asked = 0

    @staticmethod
    def key(messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
        return json.dumps([messages, schema], sort_keys=True, ensure_ascii=False)

    async def __call__(self, messages: list[Message], schema: dict[str, Any]) -> ConstrainedReply:
        shown = [{"role": m.role, "content": m.content} for m in messages]
        key = self.key(shown, schema)
        if key not in self.table:
            pytest.fail(f"a question the model was never asked: {shown[-1]['content'][:300]}")
        self.asked += 1
        return ConstrainedReply(content=self.table[key])


def test_the_fixture_holds_episodes() -> None:
    assert len(EPISODES) >= 3, f"record them: see {Path(__file__).name}'s docstring"


@pytest.mark.parametrize("episode", EPISODES, ids=[e["id"] for e in EPISODES])
async def test_recorded_episode_replays(episode: dict[str, Any], shared_benchmarks: Path) -> None:
    ask = ReplayAsk(episode["replies"])
    settings = episode["settings"]
    policy = AssistedPlanner(
        ask,
        # Recorded before the planner's backed first led (docs/decisions/0026): replayed
        # as they ran.
        HeuristicPlannerConfig(confirmed_below=settings.get("confirmed_below", 0)),
        asks=tuple(settings["asks"]),
        passage_options=settings["passage_options"],
        promote=settings["promote"],
        passage_chars=settings["passage_chars"],
    )
    result = await asearch(
        episode["question"],
        ReplayCorpus(episode["store"], musique_passages(shared_benchmarks)),
        policy=policy,
        top_k=30,
    )
    assert result.stopped_because == episode["stopped_because"]
    assert [e.chunk_id for e in result.evidence] == episode["evidence"]
    # Every recorded question was asked again, and answered as recorded (no fallback).
    assert ask.asked == len(episode["replies"]) == len(policy.records)
    assert policy.fallbacks == 0
