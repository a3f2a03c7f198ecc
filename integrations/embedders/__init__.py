"""Embedders by name: `static` (default, shipped model2vec model), `minilm`,
`ollama:<model>` and `hash` (dependency-free, for tests and tiny set-ups), and the
languages each covers (`embedder_languages`, `covers`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sift.errors import ConfigurationError
from sift.integrations.embedders._hash import HashEmbedder
from sift.integrations.embedders._languages import (
    ANY_LANGUAGE,
    OllamaEmbedSettings,
    covers,
    embedder_languages,
    parse_languages,
)

if TYPE_CHECKING:
    from sift.protocols import Embedder

__all__ = [
    "ANY_LANGUAGE",
    "DEFAULT_EMBEDDER",
    "HashEmbedder",
    "OllamaEmbedSettings",
    "check_embedder_name",
    "covers",
    "embedder_languages",
    "embedder_names",
    "get_embedder",
    "parse_languages",
    "static_native",
]

DEFAULT_EMBEDDER = "static"

_NAMES = ("static", "minilm", "hash", "ollama:<model>")


def embedder_names() -> tuple[str, ...]:
    return _NAMES


def static_native() -> bool:
    """Whether the static embedder's C part (`_pieces.c`) was built and loads. Without
    it the same vectors come from numpy, 2.4-5.7x slower, and importing the embedder
    warns how to build it."""
    from sift.integrations.embedders import _static

    return _static._pieces is not None


def check_embedder_name(name: str) -> str:
    """`name` when `get_embedder` knows it, without loading its model (a service checks
    its setting before it serves); ConfigurationError listing the valid names else."""
    if name == "hash" or name.startswith("hash:"):
        size = name.split(":", 1)[1] if ":" in name else "256"
        if not size.isdigit() or int(size) < 1:
            raise ConfigurationError(
                f"embedder {name!r}: the hash embedder's size is a positive integer (hash:64)"
            )
        return name
    if name in ("static", "minilm") or (name.startswith("ollama:") and name[len("ollama:") :]):
        return name
    raise ConfigurationError(f"unknown embedder {name!r}; valid names: {', '.join(_NAMES)}")


def get_embedder(name: str = DEFAULT_EMBEDDER, **options: object) -> Embedder:
    """The embedder registered under `name`; unknown names list the valid ones."""
    check_embedder_name(name)
    if name == "hash" or name.startswith("hash:"):
        return HashEmbedder(dim=int(name.split(":", 1)[1] if ":" in name else "256"))
    if name == "static":
        from sift.integrations.embedders._static import StaticEmbedder

        return StaticEmbedder(**options)  # type: ignore[arg-type]
    if name == "minilm":
        from sift.integrations.embedders._minilm import MiniLMEmbedder

        return MiniLMEmbedder(**options)  # type: ignore[arg-type]
    if name.startswith("ollama:"):
        from sift.integrations.embedders._ollama import OllamaEmbedder

        return OllamaEmbedder(model=name.split(":", 1)[1], **options)  # type: ignore[arg-type]
    raise ConfigurationError(f"unknown embedder {name!r}; valid names: {', '.join(_NAMES)}")
