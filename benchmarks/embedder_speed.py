"""The static embedder's own speed: its C part (`_pieces.c`) against the Python path, in
one process, alternating, cold (a fresh embedder, as an ingest starts with) and warm
(every piece remembered, as a long-running service has).

    python benchmarks/embedder_speed.py [--rounds 3] [--synthetic 100000]
        [--markdown FILE] [--json FILE] [--plot FILE]

Texts: the passages of the three English dev corpora (title and text, as the store embeds
them, about 20,000), the Japanese JSQuAD passages (tokenised whole: the model is
English, so the C part does not take them), and store_speed.py's synthetic passages.
Each is embedded in batches of 512, as `store_speed.py` measures "the embedder alone".

Modes: `python` is `StaticEmbedder(native=False)`, the code the C part replaced; `c` is
the default; `c, 2 threads` embeds alternate batches from two threads sharing one
embedder (the C part releases the GIL). Under the code before the C part (for an A/B
against an older checkout put first on PYTHONPATH) only `python` runs.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

sys.path.insert(0, str(Path(__file__).resolve().parent))

import store_speed

from sift.integrations.embedders import get_embedder

console = Console(stderr=True)
BATCH = 512


def _texts(synthetic: int) -> dict[str, list[str]]:
    def text(p: dict[str, Any]) -> str:
        return f"{p.get('title', '')}\n{p['text']}"

    english = [text(p) for corpus in store_speed.REAL for p in store_speed.passages(corpus)]
    with open(store_speed.DATA / "jsquad" / "corpus.jsonl", encoding="utf-8") as lines:
        japanese = [text(json.loads(line)) for line in lines]
    out = {"dev corpora (English)": english, "JSQuAD (Japanese)": japanese}
    if synthetic:
        out[f"synthetic {synthetic:,}"] = [text(p) for p in store_speed.synthetic(synthetic)]
    return out


def _modes() -> dict[str, Callable[[], Any]]:
    if "native" not in inspect.signature(get_embedder("static").__class__).parameters:
        return {"python": lambda: get_embedder("static")}  # the code before the C part
    return {
        "python": lambda: get_embedder("static", native=False),
        "c": lambda: get_embedder("static"),
        "c, 2 threads": lambda: get_embedder("static"),
    }


def _one_pass(embedder: Any, texts: list[str], threads: int) -> float:
    """Seconds to embed `texts` in batches of BATCH, from `threads` threads."""
    batches = [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]
    start = time.perf_counter()
    if threads == 1:
        for batch in batches:
            embedder.embed(batch)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(embedder.embed, batches))
    return time.perf_counter() - start


def run(rounds: int, synthetic: int) -> dict[str, Any]:
    corpora = _texts(synthetic)
    modes = _modes()
    # us a text: corpus -> mode -> "cold"/"warm" -> one figure a round
    results: dict[str, dict[str, dict[str, list[float]]]] = {}
    total = rounds * len(corpora) * len(modes)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("embedding", total=total)
        for _ in range(rounds):
            for corpus, texts in corpora.items():
                for mode, make in modes.items():
                    progress.update(task, description=f"{corpus}: {mode}")
                    threads = 2 if "2 threads" in mode else 1
                    embedder = make()
                    cold = _one_pass(embedder, texts, threads)
                    warm = _one_pass(embedder, texts, threads)
                    figures = results.setdefault(corpus, {}).setdefault(mode, {})
                    figures.setdefault("cold", []).append(cold / len(texts) * 1e6)
                    figures.setdefault("warm", []).append(warm / len(texts) * 1e6)
                    progress.advance(task)
    return {
        "machine": store_speed.machine(),
        "rounds": rounds,
        "texts": {corpus: len(texts) for corpus, texts in corpora.items()},
        "us_per_text": results,
    }


def markdown(result: dict[str, Any], command: str) -> str:
    lines = [
        f"Command: `{command}`",
        f"Machine: {result['machine']}; {result['rounds']} rounds, alternating modes.",
        "",
        "us a text, median of the rounds (each round's figure in brackets); the ratio is "
        "the Python path's median over the mode's.",
        "",
        "| texts | mode | cold | warm | cold ratio | warm ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for corpus, modes in result["us_per_text"].items():
        base = {k: statistics.median(v) for k, v in modes["python"].items()}
        for mode, figures in modes.items():
            med = {k: statistics.median(v) for k, v in figures.items()}
            each = {k: ", ".join(f"{x:.1f}" for x in v) for k, v in figures.items()}
            lines.append(
                f"| {corpus} ({result['texts'][corpus]:,}) | {mode} "
                f"| {med['cold']:.1f} ({each['cold']}) | {med['warm']:.1f} ({each['warm']}) "
                f"| {base['cold'] / med['cold']:.2f}x | {base['warm'] / med['warm']:.2f}x |"
            )
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = list(result["us_per_text"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, phase in zip(axes, ("cold", "warm"), strict=True):
        modes = list(result["us_per_text"][corpora[0]])
        width = 0.8 / len(modes)
        for k, mode in enumerate(modes):
            values = [statistics.median(result["us_per_text"][c][mode][phase]) for c in corpora]
            ax.bar([i + k * width for i in range(len(corpora))], values, width, label=mode)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(corpora))], corpora, fontsize=8)
        ax.set_title(f"{phase} (a {'fresh' if phase == 'cold' else 'warmed'} embedder)")
        ax.set_ylabel("us a text (lower is better)")
    axes[0].legend()
    fig.suptitle("Static embedder: C part against the Python path (2 cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.rounds, args.synthetic)
    command = "python benchmarks/embedder_speed.py " + " ".join(sys.argv[1:])
    text = markdown(result, command.strip())
    console.print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.plot:
        plot(result, args.plot)


if __name__ == "__main__":
    main()
