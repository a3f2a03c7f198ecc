"""PNG plots of an evaluation (matplotlib, headless Agg backend)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sift.integrations.eval._outcome import ModeSummary, QuestionOutcome
    from sift.integrations.eval._report import EvalReport

__all__ = ["plot_context_tokens", "plot_recall_curves", "require_matplotlib"]


def require_matplotlib() -> None:
    """Fails now, with the extra to install, rather than after a whole evaluation ran."""
    _pyplot()


def _pyplot() -> Any:
    try:
        import matplotlib
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        from sift.integrations.eval._dataset import EvalError

        raise EvalError("plots need matplotlib: pip install 'sift-harness[eval]'") from exc
    # Agg renders to files without a display; set before pyplot is first imported.
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_recall_curves(
    summaries: Sequence[ModeSummary], path: Path, report: EvalReport | None = None
) -> Path:
    """Recall@k (solid) and all-gold@k (dashed) against k, one colour per mode."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        for index, summary in enumerate(summaries):
            ks = sorted(summary.recall_at)
            colour = f"C{index % 10}"
            ax.plot(
                ks,
                [summary.recall_at[k] for k in ks],
                marker="o",
                color=colour,
                label=f"{summary.mode} recall@k",
            )
            ax.plot(
                ks,
                [summary.all_gold_at[k] for k in ks],
                marker="s",
                linestyle="--",
                color=colour,
                alpha=0.7,
                label=f"{summary.mode} all-gold@k",
            )
        ax.set_xlabel("k (ranked passages)")
        ax.set_ylabel("share of gold passages / questions")
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
        title = "Recall@k per mode"
        if report is not None:
            title = f"{report.dataset.name}: {title} ({report.dataset.questions} questions)"
        ax.set_title(title)
        ax.legend(fontsize=7, ncol=2, loc="lower right")
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path


def plot_context_tokens(
    outcomes: Mapping[str, Sequence[QuestionOutcome]],
    path: Path,
    report: EvalReport | None = None,
) -> Path | None:
    """Context tokens after each turn for the multi-turn modes: mean, 10th-90th
    percentile band and maximum over the questions still running at each turn; None when
    no mode has more than one turn."""
    series = {
        mode: [o.tokens_per_turn for o in items if o.tokens_per_turn]
        for mode, items in outcomes.items()
    }
    series = {mode: runs for mode, runs in series.items() if any(len(r) > 1 for r in runs)}
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        counts = None
        for index, (mode, runs) in enumerate(series.items()):
            longest = max(len(r) for r in runs)
            turns = np.arange(1, longest + 1)
            # Each turn is summarised over the questions still running at that turn, so a
            # short episode does not drag later turns down with a context it no longer has.
            at_turn = [
                np.array([r[t] for r in runs if len(r) > t], dtype=float) for t in range(longest)
            ]
            colour = f"C{index % 10}"
            ax.plot(
                turns,
                [a.mean() for a in at_turn],
                marker="o",
                color=colour,
                label=f"{mode} mean ({len(runs)} questions)",
            )
            ax.fill_between(
                turns,
                [np.percentile(a, 10) for a in at_turn],
                [np.percentile(a, 90) for a in at_turn],
                color=colour,
                alpha=0.15,
                label=f"{mode} p10-p90",
            )
            ax.plot(
                turns,
                [a.max() for a in at_turn],
                linestyle=":",
                color=colour,
                alpha=0.8,
                label=f"{mode} max",
            )
            if counts is None:
                counts = (turns, [len(a) for a in at_turn], len(runs), mode)
        if counts is not None:
            # Faint bars on a second axis: how many questions each turn's figures cover.
            turns, active, total, mode = counts
            twin = ax.twinx()
            twin.bar(turns, active, color="grey", alpha=0.15, width=0.6)
            twin.set_ylim(0, total * 4)
            twin.set_ylabel(f"{mode}: questions still running (bars)", color="grey")
            twin.tick_params(axis="y", colors="grey")
            ax.set_zorder(twin.get_zorder() + 1)
            ax.patch.set_visible(False)
        threshold = report.config.get("threshold") if report is not None else None
        if threshold:
            ax.axhline(
                threshold,
                color="grey",
                linestyle="--",
                linewidth=1,
                label=f"threshold {threshold:,}",
            )
        ax.set_xlabel("turn")
        ax.set_ylabel("tokens in context after the turn")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        title = "Context tokens per turn"
        if report is not None:
            title = f"{report.dataset.name}: {title}"
        ax.set_title(title)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path
