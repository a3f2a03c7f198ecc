"""A question that asks for its parts one by one ("both A and B", 「A」と「B」の両方,
それぞれ) gets one search per part, and its final list takes each part's best in turn
(issue 44: two-place questions). Whole episodes over a real SqliteCorpus, English beside
Japanese; and the parts detector on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.graphs import search
from sift.graphs.policies._plan_parts import question_parts
from sift.graphs.policies.heuristic import HeuristicPlanner, HeuristicPlannerConfig
from sift.types import Document


@pytest.mark.parametrize(
    ("question", "parts", "scope"),
    [
        (
            "For Exim I need both rewriting replacements and disabling IPv6: where is each "
            "explained?",
            ("rewriting replacements", "disabling IPv6"),
            "Exim",
        ),
        (
            "In zsh, what do I need to know about brace expansion and also about complex commands?",
            ("brace expansion", "complex commands"),
            "zsh",
        ),
        (
            "What do time.conf and /etc/skel each do in Linux-PAM?",
            ("time.conf", "/etc/skel"),
            "Linux-PAM",
        ),
        ("In GLE, what are \\DeclareMathSymbol and \\smallint for?", None, None),
        (
            "What are --num-callers and --error-limit for?",
            ("--num-callers", "--error-limit"),
            "",
        ),
        (
            "LilyPondで「小節番号」と「アラブ音楽 音符名」の両方を調べたい。"
            "それぞれどこに書いてありますか?",
            ("小節番号", "アラブ音楽 音符名"),
            "LilyPond",
        ),
        (
            "APTの --no-download と --fix-broken はそれぞれ何をしますか?",
            ("--no-download", "--fix-broken"),
            "APT",
        ),
        (
            "Debian 管理者ハンドブックのSMTP 認証とパッケージ 検索について、それぞれ説明を"
            "探しています。",
            ("SMTP 認証", "パッケージ 検索"),
            "Debian 管理者ハンドブック",
        ),
    ],
)
def test_the_parts_a_question_asks_for(
    question: str, parts: tuple[str, ...] | None, scope: str | None
) -> None:
    found = question_parts(question)
    if parts is None:
        # Two TeX commands joined by "and" are names side by side: they are parts.
        assert found is not None and found.parts == ("\\DeclareMathSymbol", "\\smallint")
        return
    assert found is not None
    assert found.parts == parts
    assert found.scope == scope


@pytest.mark.parametrize(
    "question",
    [
        "What is the history and the cause of the mail queue growing?",
        "How do I rotate and compress the log files?",
        "What is the default of --num-callers?",
        "ログファイルをローテートして圧縮するには?",
        "スタックトレースと呼び出し元の既定値は?",
    ],
)
def test_a_question_of_one_place_has_no_parts(question: str) -> None:
    # "and" or と alone does not ask for two places: only "both", "each", "and also",
    # それぞれ, 両方, 「」 pairs or two typed names side by side do.
    assert question_parts(question) is None


def _section(doc_id: str, heading: str, text: str) -> Document:
    # As sift index records a Markdown or HTML file's heading: the chunk's section.
    return Document(
        id=doc_id,
        title="Mailer manual",
        text=text,
        metadata={"section_starts": [0], "section_titles": [heading]},
    )


# Two sections each explain one part; a dozen notes mention every word of both parts
# (and of the question), so one search of the whole question ranks them first.
ENGLISH = [
    _section(
        "mailer/rewriting-replacements",
        "6. Rewriting replacements",
        "The replacement string of a rule is expanded. Each replacement may refer to the "
        "parts of the address that matched, and an empty replacement removes it.",
    ),
    _section(
        "mailer/disabling-ipv6",
        "7. Disabling IPv6",
        "Support for IPv6 can be turned off at build time or with the disable option: the "
        "daemon then listens on IPv4 interfaces only.",
    ),
    *[
        _section(
            f"mailer/notes-{i}",
            f"Release notes {i}",
            f"For Mailer, notes {i}: rewriting replacements and disabling IPv6 are both "
            f"explained where each option is; rewriting, replacements, disabling and IPv6 "
            f"changed in release {i}. Mailer needs both explained.",
        )
        for i in range(12)
    ],
]

JAPANESE = [
    _section(
        "score/bar-numbers",
        "小節番号",
        "小節番号は各段の最初に表示されます。表示する間隔や位置はプロパティで変更できます。",
    ),
    _section(
        "score/note-names",
        "アラブ音楽の音符名",
        "アラブ音楽では独自の音名を使います。四分音を表す記号も用意されています。",
    ),
    *[
        _section(
            f"score/notes-{i}",
            f"更新履歴 {i}",
            f"Scorer の更新 {i}: 小節番号とアラブ音楽の音符名の両方が変わりました。"
            f"小節番号、アラブ音楽、音符名はそれぞれ更新 {i} で見直されました。",
        )
        for i in range(12)
    ],
]

EN_QUESTION = (
    "For Mailer I need both rewriting replacements and disabling IPv6: where is each explained?"
)
JA_QUESTION = (
    "Scorerで「小節番号」と「アラブ音楽 音符名」の両方を調べたい。それぞれどこに書いてありますか?"
)
GOLDS = {
    EN_QUESTION: {"mailer/rewriting-replacements", "mailer/disabling-ipv6"},
    JA_QUESTION: {"score/bar-numbers", "score/note-names"},
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    from sift.integrations.stores.sqlite import SqliteCorpus

    corpus = SqliteCorpus(
        Path(tmp_path_factory.mktemp("parts")) / "s", embedder="hash", chunk_tokens=120
    )
    corpus.upsert([*ENGLISH, *JAPANESE])
    yield corpus
    corpus.close()


def _top(result, n: int) -> set[str]:
    return {e.doc_id for e in result.evidence[:n]}


@pytest.mark.parametrize("question", [EN_QUESTION, JA_QUESTION])
def test_each_part_is_searched_and_leads_the_list(store, question: str) -> None:
    result = search(question, store, policy=HeuristicPlanner(), top_k=10)
    queries = [c.arguments.get("query") for turn in result.trace for c in turn.calls]
    parts = question_parts(question)
    assert parts is not None
    for query in parts.queries():
        assert query in queries
    # Both sections that explain a part are in the first three, above the notes that
    # merely repeat the question's words.
    assert GOLDS[question] <= _top(result, 3)
    assert "asks for 2 parts" in (result.trace[-1].note or "")


@pytest.mark.parametrize("question", [EN_QUESTION, JA_QUESTION])
def test_without_part_searches_the_notes_crowd_a_part_out(store, question: str) -> None:
    # The same episode with the rule off: the list is what the fails-without check needs.
    planner = HeuristicPlanner(HeuristicPlannerConfig(part_searches=False))
    result = search(question, store, policy=planner, top_k=10)
    assert not GOLDS[question] <= _top(result, 3)


def test_passages_without_sections_keep_the_comparison_route(tmp_path: Path) -> None:
    # An encyclopedia's "both A and B" is a comparison: its passages carry no page or
    # section, so the parts route stays out and the entity hops run as before.
    from sift.integrations.stores.sqlite import SqliteCorpus

    documents = [
        Document(id=d.id, title=d.metadata["section_titles"][0], text=d.text) for d in ENGLISH
    ]
    with SqliteCorpus(tmp_path / "s", embedder="hash", chunk_tokens=120) as corpus:
        corpus.upsert(documents)
        result = search(EN_QUESTION, corpus, policy=HeuristicPlanner(), top_k=10)
    queries = [c.arguments.get("query") for turn in result.trace for c in turn.calls]
    parts = question_parts(EN_QUESTION)
    assert parts is not None
    assert not any(q in queries for q in parts.queries())
    assert "asks for 2 parts" not in (result.trace[-1].note or "")


@pytest.mark.parametrize("unit", ["word and ", "「a」と", "both x and "])
def test_a_long_text_is_not_read_for_parts(unit: str) -> None:
    # A pasted page is not a question that names its parts, and the patterns' lazy
    # spans would cost time quadratic in its length: past 300 characters it is left
    # alone, cues and all (questions are accepted up to 2,000).
    text = (unit * 400)[:1990] + " each それぞれ"
    assert question_parts(text) is None
    assert question_parts("Where are both the kestrel and the hawk explained?") is not None
    assert question_parts("「梅雨」と「富士山」の両方はどこ?") is not None
