"""Depth follows the question (issue 44): the planner stops after its first search when
that search covers the question, puts the passage that writes a name the question types
first, keeps what the plain search ranked first, and says when nothing matches. Whole
episodes over a real SqliteCorpus, English beside Japanese."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sift.graphs import asearch, single_shot
from sift.graphs.policies._plan_names import named_identifiers
from sift.graphs.policies.heuristic import HeuristicPlanner, HeuristicPlannerConfig
from sift.types import Decision, Document, FinalDocument, SearchResult

# A manual-shaped corpus: one entry defines an option; the pages around it repeat the
# question's words (stack traces, callers, default) without the option's name. Each
# document is one section of a manual (as sift index records an HTML or Markdown file's
# headings), which is what makes a question about it one of one place.
ENGLISH = [
    Document(
        id="tracer/options",
        title="Tracer options",
        text=(
            "--max-callers=<number> [default: 12]\n"
            "Specifies the maximum number of entries shown in the traces that identify "
            "program locations. The maximum value for this is 500."
        ),
    ),
    *[
        Document(
            id=f"tracer/stack-{i}",
            title=f"Stack traces, part {i}",
            text=(
                f"Stack traces list the callers of a function. The default stack trace "
                f"shows callers and the callers of callers; deeper stack traces of callers "
                f"cost time (part {i}). Callers, stack traces and defaults are explained here."
            ),
        )
        for i in range(6)
    ],
    Document(
        id="backup/logs",
        title="Backup daemon logs",
        text=(
            "The backup daemon rotates its log files every week. To rotate the log files "
            "of the backup daemon at once, send it SIGHUP."
        ),
    ),
    *[
        Document(
            id=f"misc/{i}",
            title=f"Miscellany {i}",
            text=f"Configuration file number {i} sets the colour of the terminal and the font.",
        )
        for i in range(6)
    ],
]

JAPANESE = [
    Document(
        id="tracer-ja/options",
        title="トレーサのオプション",
        text=(
            "--max-callers=<数値> [既定値: 12]\n"
            "プログラムの位置を示すトレースに表示する項目の最大数を指定します。最大値は500です。"
        ),
    ),
    *[
        Document(
            id=f"tracer-ja/stack-{i}",
            title=f"スタックトレース その{i}",
            text=(
                f"スタックトレースは関数の呼び出し元を表示します。既定のスタックトレースは"
                f"呼び出し元と、その呼び出し元を表示します。深いスタックトレースの既定値は"
                f"時間がかかります（その{i}）。"
            ),
        )
        for i in range(6)
    ],
    Document(
        id="backup-ja/logs",
        title="ログの扱い",
        text=(
            "バックアップデーモンはログファイルを毎週ローテートします。"
            "すぐにローテートするにはSIGHUPを送ります。"
        ),
    ),
    *[
        Document(
            id=f"misc-ja/{i}",
            title=f"その他 {i}",
            text=f"設定ファイル{i}は端末の色とフォントを決めます。",
        )
        for i in range(6)
    ],
]


def _sections(documents: list[Document]) -> list[Document]:
    return [
        d.model_copy(update={"metadata": {"section_starts": [0], "section_titles": [d.title]}})
        for d in documents
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    from sift.integrations.stores.sqlite import SqliteCorpus

    corpus = SqliteCorpus(
        Path(tmp_path_factory.mktemp("depth")) / "s", embedder="hash", chunk_tokens=120
    )
    corpus.upsert(_sections([*ENGLISH, *JAPANESE]))
    yield corpus
    corpus.close()


def _run(store, question: str, **settings: object) -> SearchResult:
    planner = HeuristicPlanner(HeuristicPlannerConfig(**settings))  # type: ignore[arg-type]
    return asyncio.run(asearch(question, store, policy=planner))


def _tools(result: SearchResult) -> list[str]:
    return [call.tool for turn in result.trace for call in turn.calls]


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What is the default of --num-callers?", ("--num-callers",)),
        ("Where is FONTCONFIG_FILE read?", ("FONTCONFIG_FILE",)),
        ("What does asn1_der_decoding() return?", ("asn1_der_decoding",)),
        ("What does /etc/fonts/local.conf hold, and ${HOME}?", ("/etc/fonts/local.conf", "HOME")),
        ("オプション--num-callersの既定値は？", ("--num-callers",)),
        ("ＦＯＯ＿ＢＡＲとは何ですか", ("FOO_BAR",)),
        ("\\ltjsetparameter の使い方", ("\\ltjsetparameter",)),
        # People, places and numbers written as words are not names.
        ("Who was born first, Arthur Conan Doyle or Penelope Lively?", ()),
        ("Who is Sir Mordaunt Martin, 4Th Baronet's grandfather in the 1990s?", ()),
        ("日本で梅雨がないのは北海道とどこか。", ()),
    ],
)
def test_the_names_a_question_types(question: str, names: tuple[str, ...]) -> None:
    assert named_identifiers(question) == names


# --------------------------------------------------------------------------- identifier rule


@pytest.mark.parametrize(
    ("question", "doc_id"),
    [
        ("What is the default of --max-callers in stack traces of callers?", "tracer/options"),
        ("スタックトレースの呼び出し元の --max-callers の既定値は？", "tracer-ja/options"),
    ],
)
def test_the_passage_writing_the_typed_name_comes_first(store, question: str, doc_id: str) -> None:
    plain = single_shot(question, store, top_k=10)
    # The plain search ranks the pages that repeat the question's words above the entry.
    assert plain.evidence[0].doc_id != doc_id
    result = _run(store, question)
    assert result.evidence[0].doc_id == doc_id
    assert "--max-callers" in result.evidence[0].justification
    # The rule is what puts it there: without it the entry is not in the first three.
    without = _run(store, question, names_first=False)
    assert doc_id not in [e.doc_id for e in without.evidence[:3]]


# --------------------------------------------------------------------------- early stop


@pytest.mark.parametrize(
    ("question", "doc_id"),
    [
        ("How do I rotate the log files of the backup daemon?", "backup/logs"),
        ("バックアップデーモンのログファイルをローテートする", "backup-ja/logs"),
    ],
)
def test_an_episode_stops_when_the_first_search_covers_the_question(
    store, question: str, doc_id: str
) -> None:
    result = _run(store, question)
    assert result.stopped_because == "final"
    assert _tools(result) == ["search_corpus"]
    assert "first search covers the question" in (result.trace[-1].note or "")
    assert result.evidence[0].doc_id == doc_id
    # The evidence is the plain search's, in its order.
    plain = single_shot(question, store, top_k=30)
    assert [e.chunk_id for e in result.evidence[:5]] == [e.chunk_id for e in plain.evidence[:5]]
    deep = _run(store, question, early_stop=False)
    assert len(_tools(deep)) > 1


def test_a_comparison_goes_on_past_the_first_search(store) -> None:
    question = "Which came first, the backup daemon log files or the tracer options?"
    result = _run(store, question)
    assert len(result.trace) > 1 or len(_tools(result)) > 1
    assert "first search covers" not in " ".join(t.note or "" for t in result.trace)


# --------------------------------------------------------------------------- keep plain search


@pytest.mark.parametrize(
    "question",
    [
        "Which part of the stack traces explains callers and defaults?",
        "スタックトレースの呼び出し元と既定値を説明しているのはどれ？",
    ],
)
def test_the_plain_search_s_first_passage_leads_the_evidence(store, question: str) -> None:
    plain = single_shot(question, store, top_k=30)
    result = _run(store, question, early_stop=False)
    assert result.evidence[0].chunk_id == plain.evidence[0].chunk_id
    assert "plain search of the question ranked it 1" in result.evidence[0].justification


# --------------------------------------------------------------------------- not found


@pytest.mark.parametrize(
    ("question", "flag"),
    [
        ("What does --frobnicate-depth control in stack traces?", "not_found:--frobnicate-depth"),
        ("スタックトレースで --frobnicate-depth は何を制御？", "not_found:--frobnicate-depth"),
        ("How do I bake a sourdough loaf with rye flour?", "not_found"),
        ("ライ麦粉でサワードウを焼くには？", "not_found"),
    ],
)
def test_a_question_the_corpus_does_not_answer_is_flagged(store, question: str, flag: str) -> None:
    result = _run(store, question)
    assert flag in result.flags
    assert result.evidence  # the nearest text is still there, flagged


@pytest.mark.parametrize(
    "question",
    [
        "How do I rotate the log files of the backup daemon?",
        "What is the default of --max-callers?",
        "バックアップデーモンのログファイルをローテートする",
        "--max-callers の既定値は？",
    ],
)
def test_an_answered_question_is_not_flagged(store, question: str) -> None:
    result = _run(store, question)
    assert not [f for f in result.flags if f.startswith("not_found")]


# --------------------------------------------------------------------------- the harness


@pytest.mark.parametrize(
    "question",
    ["How do I rotate the log files of the backup daemon?", "ログファイルをローテートする方法"],
)
def test_any_policy_s_evidence_keeps_what_one_plain_search_ranks_high(store, question) -> None:
    from sift.graphs import HarnessConfig, ScriptedPolicy

    plain = single_shot(question, store, top_k=30)
    first = plain.evidence[0].chunk_id
    # A policy that searched elsewhere and listed one chunk, never the plain search's.
    policy = ScriptedPolicy(
        [
            [{"name": "search_corpus", "arguments": {"query": "terminal colour font"}}],
            lambda view: Decision(
                final=[FinalDocument(id=next(c for c in view.seen if c != first), score=9.0)]
            ),
        ]
    )
    result = asyncio.run(asearch(question, store, policy=policy, top_k=10))
    assert result.evidence[0].chunk_id == first
    assert result.evidence[0].justification.startswith("One plain search of the question")
    assert any(f.startswith("plain_search_kept:") for f in result.flags)
    # Its first two stay in the first ten (HarnessConfig.plain_keep).
    top10 = [e.chunk_id for e in result.evidence[:10]]
    assert all(e.chunk_id in top10 for e in plain.evidence[:2])
    # The list is as long as one search's would be, filled from that search.
    assert len(result.evidence) == 10
    assert any(f.startswith("plain_search_filled:") for f in result.flags)
    scores = [e.score for e in result.evidence]
    assert scores == sorted(scores, reverse=True)
    # Off, the policy's list is the evidence.
    own = asyncio.run(
        asearch(
            question,
            store,
            policy=ScriptedPolicy(policy.turns),
            top_k=10,
            config=HarnessConfig(keep_plain_search=False),
        )
    )
    assert len(own.evidence) == 1 and own.evidence[0].chunk_id != first


@pytest.mark.parametrize(
    "question",
    ["How do I rotate the log files of the backup daemon?", "ログファイルをローテートする方法"],
)
def test_a_chunk_the_policy_pruned_is_not_brought_back(store, question) -> None:
    from sift.graphs import ScriptedPolicy

    first = single_shot(question, store, top_k=30).evidence[0].chunk_id
    policy = ScriptedPolicy(
        [
            [{"name": "search_corpus", "arguments": {"query": question}}],
            [{"name": "prune_chunks", "arguments": {"chunk_ids": [first]}}],
            lambda view: Decision(final=[]),
        ]
    )
    result = asyncio.run(asearch(question, store, policy=policy, top_k=10))
    assert first not in [e.chunk_id for e in result.evidence]


# --------------------------------------------------------------------------- pruning


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("What does the Mailer handbook say the --after-build option does?", "--after-build"),
        ("Mailer ハンドブックの --after-build オプションは何をしますか?", "--after-build"),
    ],
)
def test_a_prune_keeps_the_chunk_that_writes_a_typed_name(question: str, name: str) -> None:
    # The chunk holding the name shares none of the question's other words, so it scores
    # last; the context is over the threshold and the planner prunes from the bottom.
    # Pruned, the name would read as "found nowhere" (issue 44: the Japanese identifier
    # questions of the manuals benchmark lost their gold this way).
    from sift.graphs.policies._plan_rank import score_chunks
    from sift.graphs.policies.heuristic import _plan
    from sift.types import Chunk, FoundBy, PolicyView, SeenChunk

    def seen(cid: str, text: str, tool: str, argument: str, rank: int) -> SeenChunk:
        chunk = Chunk(chunk_id=cid, doc_id=cid.rsplit("_", 1)[0], index=0, text=text)
        return SeenChunk(
            chunk=chunk,
            tokens=400,
            found_by=[FoundBy(tool=tool, argument=argument, turn=1)],
            first_rank=rank,
        )

    chunks = {
        f"handbook/page-{i}_0": seen(
            f"handbook/page-{i}_0",
            f"The Mailer handbook says what each option does (page {i}); Mailer ハンドブックの"
            f"オプションは何をしますか ({i}).",
            "search_corpus",
            question,
            i,
        )
        for i in range(12)
    }
    chunks["build/log_4"] = seen(
        "build/log_4",
        f" dpkg-source {name} .\ndpkg-buildpackage: binary-only",
        "grep_corpus",
        name,
        0,
    )
    planner = HeuristicPlanner(HeuristicPlannerConfig(keep_top=2))
    view = PolicyView(
        question=question,
        turn=2,
        max_turns=10,
        messages=[],
        seen=chunks,
        tokens_used=30_000,
        threshold=16_384,
        rejection=24_576,
        budget=32_768,
    )
    ranked = score_chunks(_plan(question, planner.weights.text_limits), chunks, planner.weights)
    assert ranked[-1].chunk_id == "build/log_4" or any(
        s.chunk_id == "build/log_4" for s in ranked[-4:]
    )
    prune = planner._prune_call(view, ranked)
    assert prune is not None and prune.arguments["chunk_ids"]
    assert "build/log_4" not in prune.arguments["chunk_ids"]
    # Without a typed name the same chunk is fair game.
    unnamed = planner._prune_call(
        view.model_copy(update={"question": question.replace(f" {name}", "")}), ranked
    )
    assert unnamed is not None and "build/log_4" in unnamed.arguments["chunk_ids"]


# --------------------------------------------------------------------------- quoted topics

# A manual whose sections are titled by the topics users quote: the section titled by the
# quoted phrase is where the question is answered, not a page to hop from.
QUOTED_TOPICS = [
    Document(
        id="viewer/menus",
        title="Using the menus",
        text=(
            "This part of the viewer manual explains using the menus: press F10 to open the "
            "menu bar, move with the arrow keys and press Enter to choose an item."
        ),
    ),
    Document(
        id="viewer-ja/menus",
        title="メニューの利用",
        text=(
            "ビューアのメニューの利用について説明します。F10 キーでメニューバーを開き、"
            "矢印キーで移動して Enter キーで項目を選びます。"
        ),
    ),
    *[
        Document(
            id=f"viewer/keys-{i}",
            title=f"Keys, part {i}",
            text=f"The viewer's keys, part {i}: F1 shows help, q quits, / searches the text.",
        )
        for i in range(4)
    ],
    *[
        Document(
            id=f"viewer-ja/keys-{i}",
            title=f"キー操作 その{i}",
            text=f"ビューアのキー操作 その{i}: F1 でヘルプ、q で終了、/ で本文を検索します。",
        )
        for i in range(4)
    ],
]


@pytest.fixture(scope="module")
def topics(tmp_path_factory: pytest.TempPathFactory):
    from sift.integrations.stores.sqlite import SqliteCorpus

    corpus = SqliteCorpus(
        Path(tmp_path_factory.mktemp("topics")) / "s", embedder="hash", chunk_tokens=120
    )
    corpus.upsert(_sections(QUOTED_TOPICS))
    yield corpus
    corpus.close()


@pytest.mark.parametrize(
    ("question", "doc_id"),
    [
        ('Where does the viewer manual explain "Using the menus"?', "viewer/menus"),
        (
            "ビューアで「メニューの利用」について知りたいのですが、どこに説明がありますか？",
            "viewer-ja/menus",
        ),
    ],
)
def test_a_section_titled_by_the_quoted_topic_is_one_place(
    topics, question: str, doc_id: str
) -> None:
    result = _run(topics, question)
    notes = " ".join(t.note or "" for t in result.trace)
    # Before, the section's title (the quoted phrase, an entity of the question) made its
    # page one to hop from, and the episode searched on to max_turns.
    assert "first search covers the question" in notes
    assert result.usage.turns == 2  # the first round, then the final list
    assert result.evidence[0].doc_id == doc_id


# --------------------------------------------------------------------------- the manual named

# A manual's files share a folder: its title page, titled by the book's name, and its
# sections. A question that names the book finds the title page among the sections. The
# one page writing the option is a long build log that shares no word with the question.
_BUILD_LOG = "\n".join(
    [
        "dpkg-buildpackage -us -uc",
        " dpkg-source --before-build .",
        *(f" dh_step{i} --verbose package-{i}.deb /usr/share/doc/package-{i}" for i in range(12)),
        " dpkg-source --after-build .",
        *(f" dh_step{i} --verbose package-{i}.deb /usr/share/doc/package-{i}" for i in range(12)),
        "dpkg-buildpackage: info: binary-only upload (no source included)",
    ]
)
NAMED_MANUAL = [
    Document(
        id=f"{folder}/index",
        title=book,
        text=f"{book}\n\n{contents}",
    )
    for folder, book, contents in (
        (
            "handbook",
            "The Debian Administrator's Handbook",
            "Contents: 1. The Debian Project. 2. Installation. 15. Creating a Debian "
            "Package. Appendix B. Short Remedial Course.",
        ),
        (
            "handbook-ja",
            "Debian 管理者ハンドブック",
            "目次: 1. Debian プロジェクト 2. インストール 15. Debian パッケージの作成 "
            "付録 B 簡単な補習講座",
        ),
    )
] + [
    Document(id=f"{folder}/{name}", title=title, text=text)
    for folder, name, title, text in (
        (
            "handbook",
            "building",
            "15.2. Building your First Package",
            _BUILD_LOG,
        ),
        (
            "handbook",
            "user-space",
            "B.5. User Space",
            "User space refers to the runtime environment of normal (as opposed to kernel) "
            "processes. An option of a process sets its environment.",
        ),
        (
            "handbook-ja",
            "building",
            "15.2. 最初のパッケージのビルド",
            _BUILD_LOG,
        ),
        (
            "handbook-ja",
            "user-space",
            "B.5. ユーザ空間",
            "「ユーザ空間」とは通常 (カーネルに対するという意味) プロセスの実行環境を意味します。"
            "プロセスのオプションがその環境を決めます。",
        ),
    )
]


# Sections around it that share the question's words (options, the book) without the name.
NAMED_MANUAL += [
    Document(id=f"{folder}/options-{i}", title=title.format(i=i), text=text.format(i=i))
    for folder, title, text in (
        (
            "handbook",
            "8.{i}. Options of the tools",
            "Section {i} of The Debian Administrator's Handbook: what an option of a Debian "
            "tool does after a build, and how an option changes what the tool does to build.",
        ),
        (
            "handbook-ja",
            "8.{i}. ツールのオプション",
            "Debian 管理者ハンドブックの第{i}節: Debian のツールのオプションは何をしますか、"
            "after build のあとにオプションが何を変えるかを説明します。",
        ),
    )
    for i in range(12)
]


NAMING_THE_MANUAL = [
    (
        "What does the --after-build option do in The Debian Administrator's Handbook?",
        "handbook/building",
    ),
    ("Debian 管理者ハンドブックの --after-build オプションは何をしますか?", "handbook-ja/building"),
]


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory):
    from sift.integrations.stores.sqlite import SqliteCorpus

    # One store a language: the two books' build logs are the same text.
    stores = {}
    for folder in ("handbook", "handbook-ja"):
        stores[folder] = SqliteCorpus(
            Path(tmp_path_factory.mktemp("manual")) / "s", embedder="hash", chunk_tokens=400
        )
        docs = [d for d in NAMED_MANUAL if d.id.startswith(f"{folder}/")]
        stores[folder].upsert(_sections([*docs, *QUOTED_TOPICS]))
    yield stores
    for corpus in stores.values():
        corpus.close()


@pytest.mark.parametrize(("question", "doc_id"), NAMING_THE_MANUAL)
def test_the_manual_a_question_names_is_its_scope_not_a_hop(
    manual, question: str, doc_id: str
) -> None:
    result = _run(manual[doc_id.partition("/")[0]], question)
    notes = " ".join(t.note or "" for t in result.trace)
    # The book's title page, titled by the name the question gives, sits among the first
    # search's best chunks beside the book's sections: it no longer sends the episode on.
    assert "first search covers the question" in notes, notes
    assert result.usage.turns == 2
    # The one page writing the option leads, though the question's words rank it low.
    assert result.evidence[0].doc_id == doc_id
    assert "--after-build" in result.evidence[0].justification


@pytest.mark.parametrize(("question", "doc_id"), NAMING_THE_MANUAL)
def test_the_score_floor_never_cuts_the_page_writing_the_typed_name(
    manual, question: str, doc_id: str
) -> None:
    # Only the grep of the name finds the build log, and the question's words score it
    # below the others: a floor just under the best score cut it from the list it led.
    store = manual[doc_id.partition("/")[0]]
    result = _run(store, question, min_relative_score=0.99, min_final=1)
    assert result.evidence[0].doc_id == doc_id
    first = result.trace[0].calls
    assert [c.tool for c in first] == ["search_corpus", "grep_corpus"]
    assert doc_id not in {a.rpartition("_")[0] for a in first[0].added}


# --------------------------------------------------------------------------- comparisons

# Two companies' pages, and a page about the question's words that names neither well:
# one search of the question ranks that page first.
COMPARED = [
    Document(
        id="alder",
        title="Alder Company",
        text="The Alder Company is a timber firm. It was founded in 1901 in Oregon.",
    ),
    Document(
        id="birch",
        title="Birch Company",
        text="The Birch Company is a paper maker. It was founded in 1923 in Maine.",
    ),
    Document(
        id="quiz",
        title="Company quiz",
        text=(
            "Which company was founded first? Which was founded first, this company or that "
            "company? Quiz questions on which company was founded first, and first founders."
        ),
    ),
    Document(
        id="alder-ja",
        title="アルダー社",
        text="アルダー社は木材会社である。1901年にオレゴン州で設立された。",
    ),
    Document(
        id="birch-ja",
        title="バーチ社",
        text="バーチ社は製紙会社である。1923年にメイン州で設立された。",
    ),
    Document(
        id="quiz-ja",
        title="会社クイズ",
        text=(
            "どちらが先に設立されましたか？どちらの会社が先に設立されたかを当てるクイズです。"
            "社と社では、どちらが先に設立されたか、先に設立された会社はどちらか。"
        ),
    ),
]


def _pages(tmp_path_factory: pytest.TempPathFactory, name: str, docs: list[Document]):
    """A module's store of short pages (one chunk each), closed after its tests."""
    from sift.integrations.stores.sqlite import SqliteCorpus

    corpus = SqliteCorpus(
        Path(tmp_path_factory.mktemp(name)) / "s", embedder="hash", chunk_tokens=120
    )
    corpus.upsert(docs)
    yield corpus
    corpus.close()


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory):
    yield from _pages(tmp_path_factory, "compared", COMPARED)


@pytest.mark.parametrize(
    ("question", "quiz", "pages"),
    [
        (
            "Which was founded first, the Alder Company or the Birch Company?",
            "quiz",
            {"alder", "birch"},
        ),
        (
            "アルダー社とバーチ社では、どちらが先に設立されましたか？",
            "quiz-ja",
            {"alder-ja", "birch-ja"},
        ),
    ],
)
def test_a_comparisons_first_pick_leads_the_plain_searchs_first(
    compared, question: str, quiz: str, pages: set[str]
) -> None:
    plain = single_shot(question, compared, top_k=10)
    assert plain.evidence[0].doc_id == quiz  # the page of the question's words
    result = _run(compared, question)
    assert result.evidence[0].doc_id in pages
    assert "compares things" in result.evidence[0].justification
    # The plain search's first stays next (the harness keeps it within the first ones).
    assert quiz in [e.doc_id for e in result.evidence[:3]]
    without = _run(compared, question, compared_first=False)
    assert without.evidence[0].doc_id == quiz


# ---------------------------------------------------------- the planner's backed first

CHAINED = [
    Document(
        id="alder",
        title="Alder Company",
        text="The Alder Company is a timber firm. It was founded in 1901 by Jonas Pettersen, "
        "a carpenter.",
    ),
    Document(
        id="pettersen",
        title="Jonas Pettersen",
        text="Jonas Pettersen was a Norwegian carpenter. He was born in Bergen in 1870 and "
        "moved to Oregon.",
    ),
    Document(
        id="quiz",
        title="Founder quiz",
        text="Where was the founder born? Quiz questions on where each company founder was "
        "born, and which company each founder founded.",
    ),
    Document(
        id="alder-ja",
        title="アルダー社",
        text="アルダー社は木材会社である。1901年に大工のヨナス・ペッテルセンが設立した。",
    ),
    Document(
        id="pettersen-ja",
        title="ヨナス・ペッテルセン",
        text="ヨナス・ペッテルセンはノルウェーの大工である。1870年にベルゲンで生まれ、"
        "オレゴンに移った。",
    ),
    Document(
        id="quiz-ja",
        title="創業者クイズ",
        text="創業者はどこで生まれましたか？会社の創業者がどこで生まれたか、どの会社を"
        "設立したかを当てるクイズです。",
    ),
]


@pytest.fixture(scope="module")
def chained(tmp_path_factory: pytest.TempPathFactory):
    yield from _pages(tmp_path_factory, "chained", CHAINED)


@pytest.mark.parametrize(
    ("question", "quiz", "company"),
    [
        ("Where was the founder of the Alder Company born?", "quiz", "alder"),
        ("アルダー社を設立した人物はどこで生まれましたか？", "quiz-ja", "alder-ja"),
    ],
)
def test_the_planners_first_leads_where_the_plain_search_backs_it(
    chained, question: str, quiz: str, company: str
) -> None:
    """A chain of relations: one plain search ranks the page of the question's words
    first and the company's page second; after its hops the planner ranks the company
    first and that quiz page third. The planner's first leads when the planner ranks the
    plain search's first `confirmed_below`th or lower and the plain search ranks the
    pick within its first `confirmed_within`; otherwise the plain search's first does."""
    plain = [e.doc_id for e in single_shot(question, chained, top_k=10).evidence]
    assert plain[:2] == [quiz, company]
    for below, within, leads in ((3, 10, company), (2, 2, company), (4, 10, quiz), (3, 1, quiz)):
        result = _run(chained, question, confirmed_below=below, confirmed_within=within)
        assert result.evidence[0].doc_id == leads, (below, within)
        if leads == company:
            assert "ranks that search's first low" in result.evidence[0].justification
            # The plain search's first comes next: the harness keeps it there.
            assert result.evidence[1].doc_id == quiz
    assert _run(chained, question, confirmed_below=0).evidence[0].doc_id == quiz
