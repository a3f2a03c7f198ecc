"""A real model's replies, replayed (issue 27, item 2).

benchmarks/real_model.py ran Qwen2.5-Coder-1.5B-Instruct and 0.5B-Instruct (llama.cpp's
llama-server) through both model policies and recorded every reply exactly: text,
structured calls, finish reason, prompt and completion tokens
(tests/fixtures/real_model/replies.json, real_model_0.5b/replies.json), with the passages its
episodes surfaced (passages.jsonl: their ids and digests; the text is read from the
HotpotQA, JSQuAD and MuSiQue dev data of ../shared/benchmarks, and the replays skip,
saying why, where that folder is absent). Here each recorded episode runs again through
the real graph over a real SQLite store of the whole dev corpus with the static embedder,
the store the real run searched, with no model present:
- ChatModelPolicy: the real ChatOpenAI against a loopback server speaking OpenAI's
  /v1/chat/completions (as llama-server does), answering with the recorded replies;
- OllamaPolicy: against the shipped loopback Ollama, answering with the same replies in
  Ollama's shape (finish reason `length` as `done_reason: length`).
Asserted for every episode: every call the model wrote ran or was answered with an error
(none dropped), a cut-off reply was never the final answer and the model was told, the
transcript sent back holds each call once and never the raw text of calls, and the
evidence never holds a chunk the model pruned.

The constrained systems (`*_c`, issue 45) replay through the policies in constrained mode
(ChatModelPolicy(constrained=True); OllamaPolicy against a model whose capabilities lack
"tools", so the mode is chosen by itself): every request carries the decision's schema and
no tools, every recorded reply is the decision's JSON or cut off, a cut-off reply or one
that only repeats a search is asked again (never taken), and the episode ends as the
real one did, on the model's own final list where it wrote one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from langchain_openai import ChatOpenAI

from sift.graphs import HarnessConfig, asearch
from sift.integrations.langchain import ChatModelPolicy
from sift.integrations.ollama import OllamaPolicy
from sift.integrations.ollama.testing import FakeOllama, Reply
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.llm import read_text_calls
from sift.types import Document, SearchResult, pruned_by_policy
from tests.graphs.policies.test_assisted_replay import passage_digest
from tests.integrations.openai_loopback import OpenAICompatible

# One folder a model: real_model (the 1.5B), real_model_<size> for any other.
FIXTURE_DIRS = sorted(
    path
    for path in (Path(__file__).resolve().parents[1] / "fixtures").glob("real_model*")
    if (path / "replies.json").is_file()
)


def load_episodes() -> list[dict[str, Any]]:
    """Every model's recorded episodes, each naming the folder it came from."""
    return [
        {**episode, "fixtures": folder.name}
        for folder in FIXTURE_DIRS
        for episode in json.loads((folder / "replies.json").read_text(encoding="utf-8"))
    ]


EPISODES = load_episodes()


class OpenAIReplay(OpenAICompatible):
    """A loopback /v1/chat/completions answering each request with the next recorded
    reply, as llama-server sent it."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        super().__init__(*replies)

    def completion(self, body: dict[str, Any], recorded: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": recorded["content"]}
        if recorded["tool_calls"]:
            message["tool_calls"] = [
                {"id": f"call_{len(self.requests)}_{n}", "type": "function", "function": c}
                for n, c in enumerate(recorded["tool_calls"])
            ]
        # The replay searches the store the real run searched, so the recorded usage is
        # this prompt's too (the harness reads the context's size from it).
        return self.envelope(
            body,
            message,
            recorded["finish_reason"],
            prompt_tokens=recorded["prompt_tokens"],
            completion_tokens=recorded["completion_tokens"],
        )


def as_ollama(recorded: dict[str, Any]) -> Reply:
    calls = []
    for c in recorded["tool_calls"]:
        try:
            arguments: Any = json.loads(c["arguments"])
        except ValueError:
            arguments = c["arguments"]
        calls.append((c["name"], arguments))
    return Reply(
        content=recorded["content"],
        tool_calls=calls,
        eval_count=recorded["completion_tokens"],
        done_reason="length" if recorded["finish_reason"] == "length" else "stop",
    )


def shared_corpus(shared: Path, name: str) -> list[Document]:
    """The whole dev corpus `name` of ../shared/benchmarks, as the real runs searched it;
    the passages the recordings hold (their ids and digests) are checked against it."""
    wanted: dict[str, str] = {}
    for folder in FIXTURE_DIRS:
        lines = (folder / "passages.jsonl").read_text("utf-8").splitlines()
        wanted |= {r["id"]: r["digest"] for r in map(json.loads, lines)}
    docs = []
    with (shared / name / "corpus.jsonl").open(encoding="utf-8") as fh:
        for row in map(json.loads, fh):
            if row["id"] in wanted:
                digest = passage_digest(row["title"], row["text"])
                assert digest == wanted[row["id"]], f"{row['id']} differs from the recording"
            docs.append(Document(id=row["id"], title=row["title"], text=row["text"]))
    missing = {i for i in wanted if i.startswith(f"{name}-")} - {d.id for d in docs}
    assert not missing, f"passages missing from the shared {name} corpus: {sorted(missing)[:3]}"
    return docs


@pytest.fixture(scope="module")
def stores(tmp_path_factory, shared_benchmarks: Path) -> dict[str, SqliteCorpus]:
    """The store each recorded run searched: the whole dev corpus with the static
    embedder (benchmarks/real_model.py's `open_store`), so that each replayed search
    returns what the real one did and the contexts, token counts and budget tiers match
    the recording (about a second of ingest a corpus)."""
    out = {}
    for name in sorted({e["set"] for e in EPISODES}):
        store = SqliteCorpus(tmp_path_factory.mktemp(name) / "store", embedder="static")
        assert not store.upsert(shared_corpus(shared_benchmarks, name)).failed
        out[name] = store
    yield out
    for store in out.values():
        store.close()


def written_calls(recorded: dict[str, Any]) -> int:
    return len(recorded["tool_calls"]) + len(
        read_text_calls(recorded["content"], id_prefix="r").calls
    )


def check_episode(
    episode: dict[str, Any], result: SearchResult, sent: list[list[dict[str, Any]]]
) -> None:
    """What must hold for every replayed episode, whatever the policy.

    `sent` is the transcript of each request, as (role, content, call count) dicts."""
    replies = episode["replies"][: len(sent)]
    assert sent, "the policy never asked the model"
    # The replies drive the episode as they did in the real run.
    assert len(sent) == len(episode["replies"])
    assert result.stopped_because == episode["stopped_because"]
    # Every call written ran or was answered: the trace holds one entry per call of each
    # turn that ran tools (a multi_tool_use batch counts its calls).
    traced = [
        [c for c in turn.calls if c.arguments.get("by") != "harness"]
        for turn in result.trace
        if turn.calls
    ]
    if episode["config"].get("seed_search"):
        # Turn 1 was the harness's own search of the question, not a reply's.
        seed = traced.pop(0)
        assert [(c.tool, c.arguments) for c in seed] == [
            ("search_corpus", {"query": episode["question"]})
        ]
    with_calls = [r for r in replies if written_calls(r)]
    assert len(traced) <= len(with_calls)
    for turn_calls, recorded in zip(traced, with_calls, strict=False):
        assert len(turn_calls) >= written_calls(recorded) or any(
            c.tool == "multi_tool_use" for c in turn_calls
        )
    # A cut-off reply is never the final answer, and the model is told after its calls.
    for n, recorded in enumerate(replies):
        if recorded["finish_reason"] == "length":
            assert not (
                result.stopped_because == "final" and n == len(replies) - 1 == len(sent) - 1
            )
            later = [m for request in sent[n + 1 :] for m in request]
            tokens = recorded["completion_tokens"]
            if later and written_calls(recorded):
                assert any(f"cut off at {tokens} tokens" in m["content"] for m in later)
            elif later and "</Document>" in recorded["content"]:
                # A final list cut off: not taken, and the model is told how to fit it.
                told = f"final list was cut off at {tokens} tokens"
                assert any(told in m["content"] for m in later)
    # The transcript sent back holds each call once, as a call, never its raw text.
    for request in sent[1:]:
        for m in request:
            if m["role"] == "assistant":
                assert '"arguments"' not in m["content"], m["content"][:200]
                assert "<tool_call>" not in m["content"]
    # The evidence never holds a chunk the model pruned.
    pruned = pruned_by_policy(result.trace)
    assert not [e.chunk_id for e in result.evidence if e.chunk_id in pruned]


def constrained(episode: dict[str, Any]) -> bool:
    """Whether the episode ran with constrained decisions, as the benchmark recorded it."""
    return bool(episode["constrained"])


def _of(kind: str, *, constrained_only: bool = False) -> list[dict[str, Any]]:
    """The episodes of one policy, with and without seed_search (chat, chat_seed), free
    or (`constrained_only`) constrained."""
    return [
        e
        for e in EPISODES
        if e["system"].split("_")[0] == kind and constrained(e) == constrained_only
    ]


def _ids(kind: str, *, constrained_only: bool = False) -> list[str]:
    return [
        f"{e['fixtures']}-{e['set']}-{e['question_id']}-{e['system']}"
        for e in _of(kind, constrained_only=constrained_only)
    ]


@pytest.mark.parametrize(
    "episode",
    _of("chat"),
    ids=_ids("chat"),
)
async def test_recorded_replies_through_chat_model_policy(episode, stores):
    with OpenAIReplay(episode["replies"]) as server:
        model = ChatOpenAI(
            base_url=server.base,
            api_key="not-needed",
            model="qwen2.5-coder",
            temperature=0,
            max_retries=0,
            timeout=60,
        )
        result = await asearch(
            episode["question"],
            stores[episode["set"]],
            policy=ChatModelPolicy(model),
            # The benchmark's budget, so the replayed episodes meet the same tiers.
            config=HarnessConfig(**episode["config"]),
        )
    sent = [
        [{"role": m["role"], "content": _text(m.get("content"))} for m in body["messages"]]
        for body in server.requests
    ]
    assert len(server.requests) <= len(episode["replies"])
    check_episode(episode, result, sent)


@pytest.mark.parametrize(
    "episode",
    _of("ollama"),
    ids=_ids("ollama"),
)
async def test_recorded_replies_through_the_ollama_policy(episode, stores):
    with FakeOllama(
        models=["qwen2.5-coder:1.5b"], family="qwen2", capabilities=["completion", "tools"]
    ) as fake:
        fake.script(*(as_ollama(r) for r in episode["replies"]))
        result = await _through_ollama(fake, episode, stores)
    bodies = fake.chat_requests()
    assert len(bodies) <= len(episode["replies"])
    sent = [
        [{"role": m["role"], "content": m.get("content") or ""} for m in body["messages"]]
        for body in bodies
    ]
    check_episode(episode, result, sent)


async def _through_ollama(
    fake: FakeOllama, episode: dict[str, Any], stores: dict[str, SqliteCorpus]
) -> SearchResult:
    """The episode's question through OllamaPolicy against the fake, under the recorded
    budget; the policy chooses constrained decisions by the model's capabilities."""
    async with OllamaPolicy(
        "qwen2.5-coder:1.5b",
        host=fake.host,
        stream=False,
        retries=0,
        timeout=60.0,
        num_predict=episode["max_tokens"],
    ) as policy:
        return await asearch(
            episode["question"],
            stores[episode["set"]],
            policy=policy,
            config=HarnessConfig(**episode["config"]),
        )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or () if isinstance(b, dict))


def test_the_recording_holds_the_shapes_that_broke_the_harness():
    """The fixtures are the real run's replies, through both policies: the model wrote
    its calls as text (never a structured call), which the harness must read."""
    replies = [r for e in EPISODES if not constrained(e) for r in e["replies"]]
    assert {e["system"].split("_")[0] for e in EPISODES} == {"chat", "ollama"}
    in_text = [r for r in replies if not r["tool_calls"] and written_calls(r)]
    assert in_text, "no reply with calls written as text"
    assert all(r["finish_reason"] in {"stop", "length", "tool_calls"} for r in replies)
    assert all(isinstance(r["completion_tokens"], int) for r in replies)


# --------------------------------------------------------------------------- constrained


def decision_of(recorded: dict[str, Any]) -> dict[str, Any] | None:
    """A recorded constrained reply's decision JSON; None for a reply cut off."""
    if recorded["finish_reason"] == "length":
        return None
    out: dict[str, Any] = json.loads(recorded["content"])
    return out


def check_constrained_episode(
    episode: dict[str, Any],
    result: SearchResult,
    schemas: list[dict[str, Any] | None],
    sent: list[list[dict[str, Any]]],
) -> None:
    """What must hold for a replayed constrained episode. `schemas` is the JSON schema
    each request carried (None: it declared tools instead)."""
    replies = episode["replies"]
    assert len(sent) == len(replies), "every recorded reply was asked for, no more"
    assert result.stopped_because == episode["stopped_because"]
    # Every request was constrained: a schema of calls or a final list, no tools.
    assert schemas and all(s is not None and "anyOf" in s for s in schemas)
    # llama-server decoded every reply against the schema: each is the decision's JSON,
    # or was cut off by the token limit.
    decisions = [decision_of(r) for r in replies]
    for d in decisions:
        assert d is None or set(d) <= {"calls", "final"}
    # Each reply fits the schema its request carries now, ids included (the replay's
    # store is the real run's, so its context shows the same ids), as llama-server decoded
    # it against the one sent then: a recording older than a change of the schema (the
    # last turn's final list only) fails here instead of replaying what the code cannot
    # ask.
    for n, (d, schema) in enumerate(zip(decisions, schemas, strict=True)):
        if d is not None:
            try:
                jsonschema.validate(d, schema)
            except jsonschema.ValidationError as exc:
                raise AssertionError(f"reply {n} does not fit its request's schema") from exc
    # A reply cut off, or one that only repeated searches, was asked again (with a note
    # as the last message of the next request), never taken.
    for n, (recorded, d) in enumerate(zip(replies, decisions, strict=True)):
        if n + 1 < len(sent) and recorded["finish_reason"] == "length":
            assert "cut off" in sent[n + 1][-1]["content"]
        if d is None and n == len(replies) - 1:
            assert result.stopped_because != "final" or episode["config"]["fill_final_list"]
    # Every call the harness ran for the model is one a reply wrote.
    written = [
        (c["name"], c["arguments"]) for d in decisions if d and d.get("calls") for c in d["calls"]
    ]
    seeded = bool(episode["config"].get("seed_search"))
    for turn in result.trace:
        if seeded and turn.turn == 1:
            # The harness's own search of the question, not a reply's.
            assert [(c.tool, c.arguments) for c in turn.calls] == [
                ("search_corpus", {"query": episode["question"]})
            ]
            continue
        for c in turn.calls:
            if c.arguments.get("by") == "harness":
                continue
            assert (c.tool, c.arguments) in written, (c.tool, c.arguments)
    # Ended on a final list: the evidence holds the model's own ids (the harness puts the
    # plain search's first ahead of them).
    if result.stopped_because == "final":
        last = decisions[-1]
        assert last is not None and last.get("final")
        assert set(last["final"]) & {e.chunk_id for e in result.evidence}
    pruned = pruned_by_policy(result.trace)
    assert not [e.chunk_id for e in result.evidence if e.chunk_id in pruned]


@pytest.mark.parametrize(
    "episode",
    _of("chat", constrained_only=True),
    ids=_ids("chat", constrained_only=True),
)
async def test_recorded_constrained_replies_through_chat_model_policy(episode, stores):
    with OpenAIReplay(episode["replies"]) as server:
        model = ChatOpenAI(
            base_url=server.base,
            api_key="not-needed",
            model="qwen2.5-coder",
            temperature=0,
            max_tokens=episode["max_tokens"],
            max_retries=0,
            timeout=60,
        )
        result = await asearch(
            episode["question"],
            stores[episode["set"]],
            policy=ChatModelPolicy(model, constrained=True),
            config=HarnessConfig(**episode["config"]),
        )
    schemas = [
        b["response_format"]["json_schema"]["schema"] if not b.get("tools") else None
        for b in server.requests
    ]
    sent = [
        [{"role": m["role"], "content": _text(m.get("content"))} for m in body["messages"]]
        for body in server.requests
    ]
    check_constrained_episode(episode, result, schemas, sent)


@pytest.mark.parametrize(
    "episode",
    _of("ollama", constrained_only=True),
    ids=_ids("ollama", constrained_only=True),
)
async def test_recorded_constrained_replies_through_the_ollama_policy(episode, stores):
    # A model without tool calls: the policy turns constrained decisions on by itself.
    with FakeOllama(
        models=["qwen2.5-coder:1.5b"], family="qwen2", capabilities=["completion"]
    ) as fake:
        # With the real run's prompt sizes, from which the harness corrects its estimates
        # (the fake's count runs high on Japanese text and met the budget tier sooner).
        fake.script(
            *(
                dataclasses.replace(as_ollama(r), prompt_eval_count=r["prompt_tokens"])
                for r in episode["replies"]
            )
        )
        result = await _through_ollama(fake, episode, stores)
    bodies = fake.chat_requests()
    # The client sends `tools: null` when none are given.
    schemas = [b.get("format") if not b.get("tools") else None for b in bodies]
    sent = [
        [{"role": m["role"], "content": m.get("content") or ""} for m in body["messages"]]
        for body in bodies
    ]
    check_constrained_episode(episode, result, schemas, sent)


def test_the_recording_holds_constrained_episodes_of_both_policies():
    """At least one constrained episode per policy, and each such reply is the decision's
    JSON or cut off: the schema reached llama-server through both policies."""
    for kind in ("chat", "ollama"):
        assert _of(kind, constrained_only=True), f"no constrained {kind} episode recorded"
    for e in EPISODES:
        if constrained(e):
            for r in e["replies"]:
                d = decision_of(r)
                assert d is None or set(d) <= {"calls", "final"}
                assert not r["tool_calls"]
