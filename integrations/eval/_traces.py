"""The error analysis made browsable: traces/index.html lists the questions where an
agentic mode missed gold, each linked to its trace page (gold passages marked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sift.integrations.traceview import (
    INDEX_PAGE,
    IndexRow,
    TokenTiers,
    page_file_name,
    render_index_html,
    write_trace_html,
)

if TYPE_CHECKING:
    from sift.integrations.eval._outcome import QuestionOutcome
    from sift.integrations.eval._report import EvalReport

__all__ = ["TRACES_DIR", "write_missed_traces"]

TRACES_DIR = "traces"


def _tiers(report: EvalReport) -> TokenTiers | None:
    harness = report.config.get("harness") or {}
    try:
        return TokenTiers(
            threshold=harness["threshold_tokens"],
            rejection=harness["rejection_tokens"],
            budget=harness["budget_tokens"],
        )
    except (KeyError, TypeError, ValueError):
        return None  # a report without the harness's limits: the page says so


def _k(report: EvalReport) -> int:
    ks = sorted(report.summaries[0].recall_at) if report.summaries else [10]
    return 10 if 10 in ks else ks[-1]


def _clear(folder: Path) -> None:
    # Pages of an earlier run in the same folder would look like this run's.
    for old in folder.glob("*.html"):
        old.unlink()


def write_missed_traces(
    report: EvalReport, outcomes: Mapping[str, Sequence[QuestionOutcome]], out_dir: Path
) -> Path | None:
    """Writes `out_dir/traces/`: a page per question an agentic mode missed gold on (or
    failed), and index.html; single-shot modes appear as columns for comparison. Returns
    the index, or None when no agentic mode ran."""
    agentic = [label for label in outcomes if label.startswith("agentic")]
    if not agentic:
        return None
    folder = out_dir / TRACES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    _clear(folder)
    tiers = _tiers(report)
    k = _k(report)
    baselines = {
        label: {o.id: o for o in items} for label, items in outcomes.items() if label not in agentic
    }
    columns = [
        "#",
        "mode",
        "id",
        "type",
        "question",
        "gold missed",
        f"R@{k}",
        "turns",
        *(f"{label}: all gold @{k}" for label in baselines),
    ]
    rows: list[IndexRow] = []
    for label in agentic:
        for outcome in outcomes[label]:
            if outcome.result is None or not (outcome.missed or outcome.error):
                continue
            number = len(rows) + 1
            name = page_file_name(number, f"{label}-{outcome.id}")
            write_trace_html(
                folder / name,
                outcome.result,
                tiers=tiers,
                gold=outcome.gold_aliases or outcome.gold,
                title=f"{report.dataset.name} {outcome.id} ({label})",
                back_link=INDEX_PAGE,
            )
            others = [by_id.get(outcome.id) for by_id in baselines.values()]
            rows.append(
                IndexRow(
                    cells=[
                        number,
                        label,
                        outcome.id,
                        outcome.type,
                        outcome.question,
                        f"{len(outcome.missed)} of {len(outcome.gold)}: "
                        + ", ".join(outcome.missed),
                        outcome.recall_at.get(k),
                        outcome.turns,
                        *(
                            None if other is None else bool(other.all_gold_at.get(k))
                            for other in others
                        ),
                    ],
                    link=name,
                    stopped_because=outcome.stopped_because,
                    error=outcome.error,
                )
            )
    total = sum(len(outcomes[label]) for label in agentic)
    intro = (
        f"{len(rows)} of {total} agentic episodes left a gold passage out of the final "
        f"evidence (or failed). Each page marks the gold passages and says whether a call "
        f"surfaced them; the last columns say whether a single-shot mode had every gold "
        f"passage in its top {k} for the same question."
    )
    index = folder / INDEX_PAGE
    index.write_text(
        render_index_html(
            f"{report.dataset.name}: questions where gold was missed",
            columns,
            rows,
            intro=intro,
            link_column=4,
        ),
        encoding="utf-8",
    )
    return index
