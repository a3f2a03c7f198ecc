"""One question's figures (`QuestionOutcome`) and a mode's aggregate (`ModeSummary`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, Field

from sift.integrations.eval import metrics as m
from sift.integrations.eval._dataset import Question
from sift.text import estimate_tokens
from sift.types import SearchResult

__all__ = ["ModeSummary", "QuestionOutcome", "TypeSummary", "score", "summarize"]


class QuestionOutcome(BaseModel):
    """Everything measured for one question in one mode (one line of per_question.jsonl)."""

    id: str
    mode: str
    type: str | None = None
    question: str
    gold: list[str]
    ranked: list[str]
    found: list[str]
    missed: list[str]
    recall_at: dict[int, float]
    all_gold_at: dict[int, float]
    precision: float
    recall: float
    f1: float
    answer_found: bool
    trajectory_recall: float
    pruned: int
    prune_accuracy: float | None
    turns: int
    tool_calls: int
    calls_per_turn: float
    peak_context_tokens: int
    final_evidence_tokens: int
    tokens_per_turn: list[int] = Field(default_factory=list)
    latency_s: float
    stopped_because: str
    error: str | None = None
    # For the trace pages of missed questions (eval's traces/ folder); never written to
    # per_question.jsonl. Kept only where gold was missed or the episode failed.
    result: SearchResult | None = Field(default=None, exclude=True, repr=False)
    # Each gold id with the near-duplicates that count as it.
    gold_aliases: dict[str, list[str]] = Field(default_factory=dict, exclude=True, repr=False)


class TypeSummary(BaseModel):
    """A mode's retrieval figures over the questions of one type (bridge, 3hop1, ...)."""

    questions: int
    recall_at: dict[int, float]
    all_gold_at: dict[int, float]
    answer_found_rate: float


class ModeSummary(BaseModel):
    """A mode's figures over all its questions (means unless the name says otherwise)."""

    mode: str
    questions: int
    recall_at: dict[int, float]
    all_gold_at: dict[int, float]
    precision: float
    recall: float
    f1: float
    answer_found_rate: float
    trajectory_recall: float
    # Mean over the questions where something was pruned; None when nothing ever was.
    prune_accuracy: float | None
    questions_with_pruning: int
    turns: float
    calls_per_turn: float
    peak_context_tokens: float
    peak_context_tokens_max: int
    final_evidence_tokens: float
    latency_p50_s: float | None
    latency_p95_s: float | None
    errors: int
    stopped_because: dict[str, int]
    wall_s: float = 0.0
    cpu_s: float = 0.0
    # The same figures per question type (questions without a type under "untyped").
    by_type: dict[str, TypeSummary] = Field(default_factory=dict)


def score(
    question: Question,
    mode: str,
    result: SearchResult,
    latency_s: float,
    ks: Sequence[int] = m.DEFAULT_KS,
) -> QuestionOutcome:
    gold = m.GoldSet(question.supporting_doc_ids, question.gold_near_duplicate_doc_ids)
    ranked = m.ranked_doc_ids(result)
    found = gold.found(ranked)
    precision, recall, f1 = m.set_precision_recall_f1(ranked, gold)
    texts = [f"{ev.title}\n{ev.text}" for ev in result.evidence]
    n_calls = result.usage.tool_calls or sum(len(t.calls) for t in result.trace)
    missed = [g for g in gold.ids if g not in found]
    twins = question.gold_near_duplicate_doc_ids
    return QuestionOutcome(
        id=question.id,
        mode=mode,
        type=question.type,
        question=question.question,
        gold=list(gold.ids),
        ranked=ranked,
        found=[g for g in gold.ids if g in found],
        missed=missed,
        recall_at={k: m.recall_at_k(ranked, gold, k) for k in ks},
        all_gold_at={k: m.all_gold_at_k(ranked, gold, k) for k in ks},
        precision=precision,
        recall=recall,
        f1=f1,
        answer_found=m.answer_found(question.answers, texts),
        trajectory_recall=m.trajectory_recall(result, gold),
        pruned=len(m.pruned_chunk_ids(result)),
        prune_accuracy=m.prune_accuracy(result, gold),
        turns=m.turns(result),
        tool_calls=n_calls,
        calls_per_turn=m.calls_per_turn(result),
        peak_context_tokens=m.peak_context_tokens(result),
        final_evidence_tokens=m.final_evidence_tokens(result, estimate_tokens),
        tokens_per_turn=m.context_tokens_per_turn(result),
        latency_s=latency_s,
        stopped_because=result.stopped_because,
        error=result.error,
        result=result if missed or result.error else None,
        gold_aliases={g: [g, *twins.get(g, [])] for g in gold.ids},
    )


def summarize(
    mode: str, outcomes: Sequence[QuestionOutcome], ks: Sequence[int] = m.DEFAULT_KS
) -> ModeSummary:
    if not outcomes:
        raise ValueError(f"mode {mode!r} has no outcomes to summarise")
    pruning = [o.prune_accuracy for o in outcomes if o.prune_accuracy is not None]
    latencies = [o.latency_s for o in outcomes]
    return ModeSummary(
        mode=mode,
        questions=len(outcomes),
        recall_at={k: fmean(o.recall_at[k] for o in outcomes) for k in ks},
        all_gold_at={k: fmean(o.all_gold_at[k] for o in outcomes) for k in ks},
        precision=fmean(o.precision for o in outcomes),
        recall=fmean(o.recall for o in outcomes),
        f1=fmean(o.f1 for o in outcomes),
        answer_found_rate=fmean(1.0 if o.answer_found else 0.0 for o in outcomes),
        trajectory_recall=fmean(o.trajectory_recall for o in outcomes),
        prune_accuracy=fmean(pruning) if pruning else None,
        questions_with_pruning=len(pruning),
        turns=fmean(o.turns for o in outcomes),
        calls_per_turn=fmean(o.calls_per_turn for o in outcomes),
        peak_context_tokens=fmean(o.peak_context_tokens for o in outcomes),
        peak_context_tokens_max=max(o.peak_context_tokens for o in outcomes),
        final_evidence_tokens=fmean(o.final_evidence_tokens for o in outcomes),
        latency_p50_s=m.percentile(latencies, 50),
        latency_p95_s=m.percentile(latencies, 95),
        errors=sum(1 for o in outcomes if o.error or o.stopped_because == "error"),
        stopped_because=dict(Counter(o.stopped_because for o in outcomes)),
        by_type=_by_type(outcomes, ks),
    )


def _by_type(outcomes: Sequence[QuestionOutcome], ks: Sequence[int]) -> dict[str, TypeSummary]:
    groups: dict[str, list[QuestionOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.type or "untyped", []).append(outcome)
    return {
        name: TypeSummary(
            questions=len(items),
            recall_at={k: fmean(o.recall_at[k] for o in items) for k in ks},
            all_gold_at={k: fmean(o.all_gold_at[k] for o in items) for k in ks},
            answer_found_rate=fmean(1.0 if o.answer_found else 0.0 for o in items),
        )
        for name, items in sorted(groups.items())
    }
