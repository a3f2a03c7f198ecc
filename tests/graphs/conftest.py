"""Fixtures of the harness tests: a real embedded store (hash embedder) with a small
corpus, and a runner that drives the graph with a ScriptedPolicy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from sift.graphs import HarnessConfig, ScriptedPolicy, asearch
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.types import Document, SearchResult

ATLAS_PARAGRAPHS = [
    "Lava flows move slowly downhill and harden into basalt fields over many years.",
    "Volcanic ash clouds ground aircraft because the glassy particles melt inside engines.",
    "Pyroclastic flows from Vesuvius buried Pompeii and Herculaneum in the year 79.",
    "Calderas form when a magma chamber empties and the summit collapses into the void.",
    "Geothermal springs near volcanoes heat water used for bathing and for electricity.",
    "Seismometers record the tremors that often come before a volcanic eruption starts.",
]

DOCS = [
    Document(
        id="vesuvius",
        title="Mount Vesuvius",
        text="Mount Vesuvius is a volcano near Naples in Italy. It erupted in 79 AD "
        "and buried the Roman town of Pompeii.",
        metadata={"region": "europe"},
    ),
    Document(
        id="etna",
        title="Mount Etna",
        text="Mount Etna is an active volcano on the island of Sicily, among the "
        "tallest volcanoes in Europe.",
        metadata={"region": "europe"},
    ),
    Document(
        id="fuji",
        title="Mount Fuji",
        text="Mount Fuji is a volcano on Honshu and the highest mountain in Japan, "
        "3776 metres tall.",
        metadata={"region": "asia"},
    ),
    Document(
        id="rainier",
        title="Mount Rainier",
        text="Mount Rainier is a glaciated volcano near Seattle in Washington state.",
        metadata={"region": "america"},
    ),
    Document(
        id="pinatubo",
        title="Mount Pinatubo",
        text="Mount Pinatubo in the Philippines erupted in 1991, cooling the planet "
        "by half a degree.",
        metadata={"region": "asia"},
    ),
    Document(
        id="hood",
        title="Mount Hood",
        text="Mount Hood is a volcano in Oregon, popular with climbers and skiers.",
        metadata={"region": "america"},
    ),
    Document(
        id="pompeii",
        title="Pompeii",
        text="Pompeii was a Roman town near Naples, buried under ash when Vesuvius erupted.",
        metadata={"region": "europe"},
    ),
    Document(
        id="naples",
        title="Naples",
        text="Naples is a large city in southern Italy on the Bay of Naples.",
        metadata={"region": "europe"},
    ),
    Document(
        id="danube",
        title="Danube",
        text="The Danube is a river of Central Europe that flows into the Black Sea.",
        metadata={"region": "europe"},
    ),
    Document(
        id="amazon",
        title="Amazon River",
        text="The Amazon is the largest river in South America by discharge.",
        metadata={"region": "america"},
    ),
    Document(
        id="atlas",
        title="Volcano atlas",
        text="\n\n".join(ATLAS_PARAGRAPHS),
        metadata={"region": "world"},
    ),
]


def make_store(path: Path, docs: Sequence[Document] = DOCS) -> SqliteCorpus:
    corpus = SqliteCorpus(path, embedder="hash", chunk_tokens=24)
    if docs:
        report = corpus.upsert(docs)
        assert not report.failed
    return corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> SqliteCorpus:
    store = make_store(tmp_path_factory.mktemp("store") / "s")
    yield store
    store.close()


# A few Japanese pages, for the tests that run each behaviour in Japanese beside English.
JA_DOCS = [
    Document(id="kinkaku", title="金閣寺", text="金閣寺は足利義満が京都に建てた寺である。"),
    Document(id="ginkaku", title="銀閣寺", text="銀閣寺は足利義政が京都の東山に建てた。"),
    Document(id="fuji", title="富士山", text="富士山は日本で最も高い山である。"),
    Document(id="biwa", title="琵琶湖", text="琵琶湖は滋賀県にある日本最大の湖である。"),
]


@pytest.fixture(scope="module")
def ja_corpus(tmp_path_factory: pytest.TempPathFactory) -> SqliteCorpus:
    store = make_store(tmp_path_factory.mktemp("ja") / "s", docs=JA_DOCS)
    yield store
    store.close()


@pytest.fixture
def empty_corpus(tmp_path: Path) -> SqliteCorpus:
    store = make_store(tmp_path / "empty", docs=())
    yield store
    store.close()


Run = Callable[..., Any]

# The deadline of the tests that wait for one to pass: what must happen before it (the
# first turn, a quick store call) is a few milliseconds, and still well inside it on a
# loaded machine. Waiting it out is the price of those tests.
WAITED_DEADLINE_S = 2.0


@pytest.fixture
def run() -> Run:
    """`await run(corpus, turns, question=..., **config)` -> (result, policy, events)."""

    async def _run(
        store: Any,
        turns: Sequence[Any],
        *,
        question: str = "Which volcano buried Pompeii?",
        filters: Any = None,
        top_k: int | None = None,
        **config: Any,
    ) -> tuple[SearchResult, ScriptedPolicy, list[dict[str, Any]]]:
        policy = ScriptedPolicy(turns)
        events: list[dict[str, Any]] = []
        result = await asearch(
            question,
            store,
            policy=policy,
            config=HarnessConfig(**config),
            filters=filters,
            top_k=top_k,
            on_event=events.append,
        )
        return result, policy, events

    return _run


def call(name: str, batch_id: str | None = None, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "batch_id": batch_id}
