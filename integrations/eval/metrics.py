"""Context-1's retrieval metrics as pure functions of one `SearchResult` and its gold.

Every function takes plain ids (or a `SearchResult`) and returns a number, so each can be
checked on a hand-built case. Ids are passage (document) ids: a chunk id is
`<doc_id>_<index>` and counts for its document. A near-duplicate of a gold passage (the
benchmarks' `gold_near_duplicate_doc_ids`) counts as that gold passage everywhere.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence

from sift.text import find_mention
from sift.types import SearchResult, split_chunk_id

__all__ = [
    "DEFAULT_KS",
    "GoldSet",
    "all_gold_at_k",
    "answer_found",
    "calls_per_turn",
    "chunk_doc_id",
    "context_tokens_per_turn",
    "final_evidence_tokens",
    "normalize_answer",
    "peak_context_tokens",
    "percentile",
    "prune_accuracy",
    "pruned_chunk_ids",
    "ranked_doc_ids",
    "recall_at_k",
    "set_precision_recall_f1",
    "surfaced_doc_ids",
    "trajectory_recall",
    "turns",
]

DEFAULT_KS: tuple[int, ...] = (2, 5, 10, 20, 30)

DocIdOf = Callable[[str], str]


def chunk_doc_id(chunk_id: str) -> str:
    """The document id of a chunk id `<doc_id>_<index>`; other ids are returned as is.

    Only a purely numeric suffix is stripped, so a document id that itself contains an
    underscore (`a_b`) survives when it is given without a chunk index.
    """
    parts = split_chunk_id(chunk_id)
    return chunk_id if parts is None else parts[0]


class GoldSet:
    """The gold passages of one question and the near-duplicates that stand in for them."""

    __slots__ = ("_alias", "ids")

    def __init__(
        self,
        ids: Iterable[str],
        near_duplicates: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.ids: tuple[str, ...] = tuple(dict.fromkeys(ids))
        alias: dict[str, set[str]] = {gold: {gold} for gold in self.ids}
        for gold, twins in (near_duplicates or {}).items():
            if gold not in alias:
                continue  # twins of a passage that is not gold for this question
            for twin in twins:
                alias.setdefault(twin, set()).add(gold)
        self._alias = alias

    def matches(self, doc_id: str) -> frozenset[str]:
        """The gold ids that `doc_id` is (itself or a near-duplicate); empty when none."""
        return frozenset(self._alias.get(doc_id, ()))

    def is_gold(self, doc_id: str) -> bool:
        return doc_id in self._alias

    def found(self, doc_ids: Iterable[str]) -> set[str]:
        hit: set[str] = set()
        for doc_id in doc_ids:
            hit |= self.matches(doc_id)
        return hit

    def __len__(self) -> int:
        return len(self.ids)


def ranked_doc_ids(result: SearchResult) -> list[str]:
    """The result's documents in evidence order, each once (its best-ranked chunk)."""
    return list(dict.fromkeys(ev.doc_id for ev in result.evidence))


def recall_at_k(ranked: Sequence[str], gold: GoldSet, k: int) -> float:
    """Share of gold passages among the first `k` ranked documents."""
    _check_k(k)
    if not len(gold):
        return 0.0
    return len(gold.found(ranked[:k])) / len(gold)


def all_gold_at_k(ranked: Sequence[str], gold: GoldSet, k: int) -> float:
    """1.0 when every gold passage is among the first `k` ranked documents, else 0.0."""
    _check_k(k)
    if not len(gold):
        return 0.0
    return 1.0 if len(gold.found(ranked[:k])) == len(gold) else 0.0


def set_precision_recall_f1(final: Iterable[str], gold: GoldSet) -> tuple[float, float, float]:
    """Precision, recall and F1 of the final evidence set (documents, order ignored).

    A returned document is relevant when it is a gold passage or a near-duplicate of one.
    An empty final set scores 0 on all three: returning nothing earns no precision.
    """
    docs = list(dict.fromkeys(final))
    if not docs or not len(gold):
        return 0.0, 0.0, 0.0
    relevant = sum(1 for doc in docs if gold.is_gold(doc))
    precision = relevant / len(docs)
    recall = len(gold.found(docs)) / len(gold)
    if precision + recall == 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def normalize_answer(text: str) -> str:
    """Lower case, punctuation and symbols removed, whitespace runs collapsed."""
    # NFKD splits accented letters so that "Café" and "Cafe" compare equal once the
    # combining marks (category M) are dropped with the punctuation.
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    kept = "".join(
        " " if unicodedata.category(c)[0] in "PSZ" or c.isspace() else c
        for c in decomposed
        if unicodedata.category(c)[0] != "M"
    )
    return " ".join(kept.split())


def answer_found(answers: Iterable[str], evidence_texts: Iterable[str]) -> bool:
    """True when some answer occurs in the evidence, compared as whole normalised words.

    Whole-word matching keeps a short answer such as "1" or "no" from matching inside
    longer words or numbers; an edge of the answer in a script written without spaces
    (Japanese, Chinese) needs no boundary, as `sift.text.find_mention` says. Answers
    that normalise to nothing are ignored.
    """
    haystack = " ".join(normalize_answer(t) for t in evidence_texts)
    for answer in answers:
        needle = normalize_answer(answer)
        if needle and find_mention(needle, haystack) is not None:
            return True
    return False


def surfaced_doc_ids(result: SearchResult, doc_id_of: DocIdOf = chunk_doc_id) -> set[str]:
    """Every document any tool call added to the context at any turn, plus the evidence.

    The evidence is included because a single-shot result may carry no per-call trace,
    and whatever was returned was necessarily surfaced.
    """
    docs = {doc_id_of(cid) for turn in result.trace for call in turn.calls for cid in call.added}
    docs.update(ev.doc_id for ev in result.evidence)
    return docs


def trajectory_recall(
    result: SearchResult, gold: GoldSet, doc_id_of: DocIdOf = chunk_doc_id
) -> float:
    """Share of gold passages surfaced by any tool at any turn (pruned or not)."""
    if not len(gold):
        return 0.0
    return len(gold.found(surfaced_doc_ids(result, doc_id_of))) / len(gold)


def pruned_chunk_ids(result: SearchResult) -> list[str]:
    """The distinct chunk ids pruned during the episode, in the order they were pruned."""
    return list(
        dict.fromkeys(cid for turn in result.trace for call in turn.calls for cid in call.pruned)
    )


def prune_accuracy(
    result: SearchResult, gold: GoldSet, doc_id_of: DocIdOf = chunk_doc_id
) -> float | None:
    """Share of pruned chunks that are not gold; None when nothing was pruned."""
    pruned = pruned_chunk_ids(result)
    if not pruned:
        return None
    wrong = sum(1 for cid in pruned if gold.is_gold(doc_id_of(cid)))
    return (len(pruned) - wrong) / len(pruned)


def turns(result: SearchResult) -> int:
    """Turns the episode took (the usage figure, else the trace length)."""
    return result.usage.turns or len(result.trace)


def calls_per_turn(result: SearchResult) -> float:
    if result.usage.calls_per_turn:
        return result.usage.calls_per_turn
    n_turns = turns(result)
    n_calls = result.usage.tool_calls or sum(len(t.calls) for t in result.trace)
    return n_calls / n_turns if n_turns else 0.0


def context_tokens_per_turn(result: SearchResult) -> list[int]:
    """Tokens in the rendered context after each turn, in turn order."""
    return [turn.tokens_after for turn in sorted(result.trace, key=lambda t: t.turn)]


def peak_context_tokens(result: SearchResult) -> int:
    return max([result.usage.peak_context_tokens, *context_tokens_per_turn(result)])


def final_evidence_tokens(result: SearchResult, count: Callable[[str], int] | None = None) -> int:
    """The usage figure; when a result does not report it, `count` over the evidence."""
    if result.usage.final_evidence_tokens or count is None:
        return result.usage.final_evidence_tokens
    return sum(count(ev.text) for ev in result.evidence)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0 and 100, got {q}")
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return float(ordered[low])
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
