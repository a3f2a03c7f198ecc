"""The entity graph as a derived index of the embedded store (issue 32, opt-in)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sift.entities import graph_row
from sift.errors import CorpusError
from sift.integrations.stores.sqlite import SqliteCorpus
from sift.protocols import EntityGraphCorpus
from sift.types import Document

PAGES = [
    Document(id="signmark", title="Signmark", text="Signmark is a rapper from Finland."),
    Document(id="markka", title="Finnish markka", text="The markka was the currency of Finland."),
    Document(id="rome", title="Rome", text="Rome is the capital of Italy."),
    Document(
        id="tower",
        title="東京スカイツリー",
        text="東京スカイツリーは墨田区にある電波塔。設計は日建設計。",
    ),
    Document(id="nikken", title="日建設計", text="日建設計は大阪市に本社を置く設計事務所。"),
]


# One capitalised name: "Signmark Finland" would be one span, a key no page names.
SIGNMARK = "Where is Signmark from?"


def _ranked(store: SqliteCorpus, question: str, **kwargs) -> list[str]:
    return [c for c, _ in store.walk_entities(question, **kwargs).chunks]


def test_the_store_walks_from_a_question_to_the_second_hop(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "s", embedder="hash", entity_graph=True) as store:
        store.upsert(PAGES)
        assert isinstance(store, EntityGraphCorpus)
        walked = store.walk_entities("What currency did the country of Signmark use?")
        ranked = [c for c, _ in walked.chunks]
        assert ranked[:2] == ["signmark_0", "markka_0"]
        assert walked.via["markka_0"] == "finland"
        assert "rome_0" not in ranked
        # Japanese: the tower's page leads to its designer's through 日建設計.
        assert _ranked(store, "東京スカイツリーを設計した会社の本社は？")[:2] == [
            "tower_0",
            "nikken_0",
        ]
        # Seeds and exclusions are chunk ids.
        assert _ranked(store, "", seeds=["signmark_0"], exclude=["signmark_0"]) == ["markka_0"]


def test_writes_and_deletes_reach_the_graph_and_a_reopen_rebuilds_it(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash", entity_graph=True) as store:
        store.upsert(PAGES)
        assert "markka_0" in _ranked(store, SIGNMARK)
        store.delete(["markka"])
        assert _ranked(store, SIGNMARK) == ["signmark_0"]
        # A changed document replaces its chunks' entities.
        store.upsert([Document(id="rome", title="Rome", text="Rome met Signmark in Finland.")])
        assert _ranked(store, SIGNMARK) == ["signmark_0", "rome_0"]
        before = store.walk_entities(SIGNMARK, k=5)
    with SqliteCorpus(path, entity_graph=True) as again:
        assert again.walk_entities(SIGNMARK, k=5) == before


def _index(store: SqliteCorpus):
    index = store._s.indexes().entities  # white-box: how many chunks were extracted
    assert index is not None
    return index


QUESTIONS = [SIGNMARK, "東京スカイツリーを設計した会社の本社は？", "Where is Rome?"]


def _walks(store: SqliteCorpus) -> list:
    walks = [store.walk_entities(q, k=5) for q in QUESTIONS]
    assert all(w.chunks for w in walks[:2])  # the comparisons below compare something
    return walks


def test_a_reopen_reads_the_recorded_rows_and_extracts_only_what_is_new(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash", entity_graph=True) as store:
        store.upsert(PAGES)
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == 0
        assert len(_index(store)) == len(PAGES)
    # Written by an open that keeps no graph: one page more, one deleted, one rewritten.
    with SqliteCorpus(path, entity_graph=False) as store:
        assert store.entity_graph is False
        store.upsert([Document(id="helsinki", title="Helsinki", text="Helsinki is in Finland.")])
        store.delete(["rome"])
        store.upsert(
            [Document(id="markka", title="Finnish markka", text="Signmark paid in markka.")]
        )
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == 2  # helsinki and the new markka chunk
        recorded = _walks(store)
        ids = _index(store).graph().chunk_ids
        assert "rome_0" not in ids and {"helsinki_0", "markka_0"} <= set(ids)
    # The same graph as one made from SQLite alone.
    (path / "entities.json").unlink()
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == len(PAGES)
        assert _walks(store) == recorded
        assert _index(store).graph().chunk_ids == ids


def _long(doc_id: str, title: str, sentence: str, n: int) -> Document:
    return Document(id=doc_id, title=title, text=" ".join(sentence.format(i) for i in range(n)))


def test_the_rows_of_a_write_carry_the_ids_of_its_chunks(tmp_path: Path) -> None:
    """A write's rows are keyed by the chunk ids the writer hands the index (not asked
    of SQLite again): for documents of many chunks, English and Japanese, and a rewrite
    that changes a document's chunk count, they are the store's chunk ids, and a rebuild
    from SQLite gives the same rows."""
    path = tmp_path / "s"
    english = _long("atlas", "Atlas Works", "Atlas Works hired Engineer{} of Tampere.", 400)
    japanese = _long("tokei", "東京時計", "東京時計は技師{}を雇った。本社は墨田区にある。", 300)
    with SqliteCorpus(path, embedder="hash", entity_graph=True) as store:
        store.upsert([english, japanese, *PAGES])
        first = {d: len(store.read(d)) for d in ("atlas", "tokei")}
        assert min(first.values()) > 2  # many chunks each, or this tests nothing
        store.upsert([_long("atlas", "Atlas Works", "Atlas Works left Tampere on day {}.", 150)])
        stored = [c.chunk_id for d in ("atlas", "tokei", "signmark") for c in store.read(d)]
        assert 1 < sum(c.startswith("atlas_") for c in stored) < first["atlas"]
        graph = _index(store).graph()
        made = {c: graph.entities_of(c) for c in graph.chunk_ids}
    assert set(stored) <= set(made)
    assert len(made) == len(stored) + len(PAGES) - 1  # the old atlas chunks are gone
    assert "tampere" in made["atlas_1"]
    assert all("墨田区" in made[c] for c in stored if c.startswith("tokei_"))
    (path / "entities.json").unlink()
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == len(made)
        rebuilt = _index(store).graph()
        assert {c: rebuilt.entities_of(c) for c in rebuilt.chunk_ids} == made


def test_a_torn_append_is_cut_off_and_other_limits_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash", entity_graph=True) as store:
        store.upsert(PAGES)
        walks = _walks(store)
    # A crash in the middle of an append: bytes past the recorded length.
    with (path / "entities.rows").open("ab") as rows:
        rows.write(b'[99, 0, "torn')
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == 0
        assert _walks(store) == walks
        store.upsert([Document(id="helsinki", title="Helsinki", text="Helsinki is in Finland.")])
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == 0
        assert "helsinki_0" in _ranked(store, "Where is Helsinki?")
    assert b"torn" not in (path / "entities.rows").read_bytes()
    # Rows made with other limits are made again.
    monkeypatch.setenv("SIFT_ENTITY_GRAPH_MIN_SPAN_CHARS", "5")
    with SqliteCorpus(path, entity_graph=True) as store:
        assert _index(store).extracted == len(PAGES) + 1


def test_a_store_made_with_the_graph_keeps_it_on_every_open_that_does_not_refuse_it(
    tmp_path: Path,
) -> None:
    with SqliteCorpus(tmp_path / "plain", embedder="hash") as plain:
        plain.upsert(PAGES[:1])
        assert plain.entity_graph is False  # a new store keeps none unless asked
    path = tmp_path / "s"
    with SqliteCorpus(path, embedder="hash", entity_graph=True) as store:
        assert store.entity_graph is True  # empty, and already recorded
    with SqliteCorpus(path) as store:
        assert store.entity_graph is True
        store.upsert(PAGES)
    with SqliteCorpus(path) as store:
        assert store.entity_graph is True
        assert _index(store).extracted == 0
        assert _ranked(store, "Where is Signmark from?")[:2] == ["signmark_0", "markka_0"]


def test_a_store_without_the_graph_says_how_to_get_one(tmp_path: Path) -> None:
    with SqliteCorpus(tmp_path / "s", embedder="hash") as store:
        store.upsert(PAGES[:1])
        with pytest.raises(CorpusError, match="entity_graph=True"):
            store.walk_entities("Signmark")


CHILD = textwrap.dedent(
    """
    import os, sys
    from concurrent.futures import wait
    from sift.integrations.stores.sqlite import SqliteCorpus
    from sift.integrations.stores.sqlite._extractor import Extractor
    from sift.types import Document

    if os.environ["SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS"] == "1":
        # Each batch is answered by the worker before the write goes on: a write of 5
        # documents would otherwise end before the worker's imports, and not use it.
        submit = Extractor.submit
        def patient(self, inputs):
            submit(self, inputs)
            wait([f for f, _, _ in list(self._queue) if f is not None])
        Extractor.submit = patient
    if len(sys.argv) > 2:  # rows saved every few chunks, as a long ingest does
        import sift.integrations.stores.sqlite._entities as entities
        entities._SAVE_EVERY = int(sys.argv[2])
    store = SqliteCorpus(sys.argv[1], embedder="hash", batch_docs=7, entity_graph=True)
    for batch in range(10_000):
        store.upsert(
            Document(id=f"c{batch}-{i}", title=f"Town {batch} {i}",
                     text=f"Town {batch} {i} lies near Marker{batch}x{i} in Finland.")
            for i in range(5)
        )
        print(batch, flush=True)
    """
)


@pytest.mark.parametrize(
    ("save_every", "worker"),
    [(None, False), (7, False), (7, True)],
    ids=["saved-at-close", "saved-every-7", "saved-every-7-worker-process"],
)
def test_sigkill_mid_ingest_leaves_a_graph_that_matches_sqlite(
    tmp_path: Path, save_every: int | None, worker: bool
) -> None:
    path = tmp_path / "s"
    errors = tmp_path / "stderr"
    argv = [sys.executable, "-c", CHILD, str(path), *([str(save_every)] if save_every else [])]
    with errors.open("w") as sink:
        # With `worker`, every write's entities go through the worker process (the
        # default starts one only for writes of 2,048 documents or more).
        env = {**os.environ, "SIFT_ENTITY_GRAPH_WORKER_MIN_CHUNKS": "1" if worker else "0"}
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=sink, text=True, env=env)
        done: list[int] = []
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                done.append(int(line))
                if len(done) >= 6:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
        finally:
            proc.wait(timeout=60)
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, errors.read_text()[-2000:]
    with SqliteCorpus(path, entity_graph=True) as store:
        # The graph holds exactly what SQLite holds: every committed chunk, nothing else.
        conn = sqlite3.connect(path / "sift.db")
        rows = conn.execute(
            "SELECT d.doc_id || '_' || c.idx, d.title, c.text FROM chunks c "
            "JOIN documents d ON d.id = c.doc ORDER BY c.id"
        ).fetchall()
        conn.close()
        graph = _index(store).graph()  # white-box: the index's own rows
        assert graph.chunk_ids == [chunk_id for chunk_id, _, _ in rows]
        if save_every:
            # What was saved before the kill is read back; only what came after the
            # last save (under `save_every`, plus one batch of 5) is extracted again.
            assert len(rows) >= 30
            assert _index(store).extracted < save_every + 5
        else:
            assert _index(store).extracted == len(rows)
        for chunk_id, title, text in rows[:: max(1, len(rows) // 10)]:
            assert graph.entities_of(chunk_id) == sorted(
                set(graph_row(chunk_id, title, text)[1]), key=graph.entity_keys.index
            )
        last = max(done)
        assert _ranked(store, f"Where is Marker{last}x4?")[0] == f"c{last}-4_0"
        # It still takes writes, and they reach the graph.
        store.upsert([Document(id="after", title="Helsinki", text="Helsinki is in Finland.")])
        assert "after_0" in _ranked(store, "Helsinki")
