"""`sift eval`'s browsable error analysis: an index of the questions an agentic mode missed
gold on, each linked to its trace page with the gold passages marked."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from sift.integrations.eval import EvalConfig, Question, run_eval, score
from sift.types import Evidence, SearchResult

CORPUS = [
    {"id": "kinkakuji", "title": "金閣寺", "text": "金閣寺は足利義満が建てた寺院で、京都にある。"},
    {"id": "yoshimitsu", "title": "足利義満", "text": "足利義満は1358年に京都で生まれた将軍。"},
    {
        "id": "yoshimitsu-copy",
        "title": "足利義満",
        "text": "足利義満は1358年に京都で生まれた将軍。",
    },
    {"id": "film", "title": "The Glass Orchard", "text": "A 1987 film by Miriam Okonkwo-Hale."},
    {"id": "director", "title": "Miriam Okonkwo-Hale", "text": "A director born in Tallinn."},
    {"id": "noise", "title": "Tallinn", "text": "Tallinn is the capital of Estonia."},
]
QUESTIONS = [
    {
        "id": "ja-1",
        "question": "金閣寺を建てた人物はどこで生まれたか？",
        "answers": ["京都"],
        "supporting_doc_ids": ["kinkakuji", "yoshimitsu"],
        "gold_near_duplicate_doc_ids": {"yoshimitsu": ["yoshimitsu-copy"]},
    },
    {
        "id": "en-1",
        "question": "Where was the director of The Glass Orchard born?",
        "answers": ["Tallinn"],
        "supporting_doc_ids": ["film", "director"],
    },
    {
        # A gold passage that is not in the corpus: every mode misses it.
        "id": "absent",
        "question": "Who founded the Copper Lanterns?",
        "answers": ["Oona Brask"],
        "supporting_doc_ids": ["not-in-corpus"],
    },
]


def _dataset(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, records in (("corpus.jsonl", CORPUS), ("questions.jsonl", QUESTIONS)):
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (folder / name).write_text(lines, encoding="utf-8")
    return folder


def _data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'id="sift-trace-data">(.*?)</script>', text)
    assert found is not None
    return json.loads(found.group(1))


def test_eval_writes_an_index_of_missed_questions_linked_to_their_traces(tmp_path):
    config = EvalConfig(
        dataset=_dataset(tmp_path / "tiny"),
        modes=["bm25", "agentic"],
        top_k=3,
        embedder="hash",
        store_cache=tmp_path / "cache",
        out=tmp_path / "out",
    )
    run = run_eval(config, progress=False)
    index = run.files["traces"]
    assert index == tmp_path / "out" / "traces" / "index.html"
    missed = [o for o in run.outcomes["agentic"] if o.missed or o.error]
    assert any(o.id == "absent" for o in missed)
    document = index.read_text(encoding="utf-8")
    links = [unquote(link) for link in re.findall(r'href="([^"]+)"', document)]
    assert len(links) == len(missed)
    for link, outcome in zip(links, missed, strict=True):
        data = _data(index.parent / link)
        assert data["result"]["question"] == outcome.question
        assert [g["id"] for g in data["gold"]] == outcome.gold
        assert data["back_link"] == "index.html"
        assert data["tiers"]["threshold"] == run.report.config["harness"]["threshold_tokens"]
        assert outcome.id in document and ", ".join(outcome.missed) in document
    assert f"{len(missed)} of 3 agentic episodes" in document
    assert "bm25: all gold @10" in document
    # The per-question file keeps its shape: no episodes in it.
    lines = (tmp_path / "out" / "per_question.jsonl").read_text(encoding="utf-8").splitlines()
    assert all("result" not in json.loads(line) for line in lines)
    assert all("gold_aliases" not in json.loads(line) for line in lines)


def test_episodes_are_kept_only_where_gold_was_missed():
    question = Question.model_validate(QUESTIONS[0])

    def result(*doc_ids: str) -> SearchResult:
        evidence = [
            Evidence(doc_id=d, chunk_id=f"{d}_0", title=d, text="", score=1.0) for d in doc_ids
        ]
        return SearchResult(question=question.question, evidence=evidence)

    found_all = score(question, "agentic", result("kinkakuji", "yoshimitsu-copy"), 0.1)
    assert found_all.missed == [] and found_all.result is None
    assert found_all.gold_aliases == {
        "kinkakuji": ["kinkakuji"],
        "yoshimitsu": ["yoshimitsu", "yoshimitsu-copy"],
    }
    missed = score(question, "agentic", result("kinkakuji"), 0.1)
    assert missed.missed == ["yoshimitsu"] and missed.result == result("kinkakuji")
    assert "result" not in missed.model_dump() and "gold_aliases" not in missed.model_dump()


def test_no_agentic_mode_no_traces(tmp_path):
    config = EvalConfig(
        dataset=_dataset(tmp_path / "tiny"),
        modes=["bm25"],
        embedder="hash",
        store_cache=tmp_path / "cache",
        out=tmp_path / "out",
    )
    run = run_eval(config, progress=False)
    assert "traces" not in run.files
    assert not (tmp_path / "out" / "traces").exists()
