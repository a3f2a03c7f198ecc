"""The embedded store's options as settings, as the Weaviate store's are: from the
environment (`SIFT_EMBEDDED_<OPTION>`), from the store's URL
(`sqlite:///path/to/store?ann_threshold=100000&vector_index=ann`, or `file://` with a
query), and from the command line (`--set store.<option>=VALUE`); an option given to
`open_store` wins over the URL, which wins over the environment.

`SqliteCorpus(path, ...)` itself takes its arguments as given: the Python API reads no
environment behind its caller's back; `open_store` (what the CLI, the service and the
MCP server open stores with) reads all three.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.fusion import DEFAULT_FUSION
from sift.integrations.stores._checks import DEFAULT_MAX_QUERY_CHARS
from sift.integrations.stores.patterns import DEFAULT_MAX_PATTERN_CHARS

__all__ = ["EmbeddedSettings", "split_location"]


class EmbeddedSettings(BaseSettings):
    """The embedded store's options (`SqliteCorpus`'s arguments of the same names)."""

    model_config = SettingsConfigDict(env_prefix="SIFT_EMBEDDED_", extra="forbid", frozen=True)

    fusion: str = Field(DEFAULT_FUSION, description="Hybrid fusion: relative_score or rrf.")
    alpha: float | None = Field(
        None, ge=0, le=1, description="Weight of dense scores in hybrid (None: tuned default)."
    )
    chunk_tokens: int | None = Field(None, ge=16, description="Chunk size of a new store.")
    hybrid_candidates: int = Field(100, ge=1, description="Results of each list hybrid fuses.")
    max_query_chars: int = Field(DEFAULT_MAX_QUERY_CHARS, ge=1)
    max_pattern_chars: int = Field(DEFAULT_MAX_PATTERN_CHARS, ge=1)
    batch_docs: int = Field(512, ge=1, description="Documents per ingest transaction.")
    lexical_commit_chunks: int = Field(
        100_000, ge=1, description="Chunks an ingest writes between BM25 commits."
    )
    vector_index: Literal["auto", "exact", "ann"] = Field(
        "auto", description="exact, ann (HNSW), or auto: exact below ann_threshold chunks."
    )
    ann_threshold: int = Field(300_000, ge=1)
    writer: bool = Field(True, description="False: open for reading beside a writer.")
    entity_graph: bool | None = Field(
        None, description="Keep the entity graph (None: as the store did before)."
    )

    def options(self) -> dict[str, Any]:
        """The options as `SqliteCorpus` arguments."""
        return self.model_dump()


def split_location(location: str, overrides: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the store's folder, `SqliteCorpus` options) of a location: a path, or a
    `file://`/`sqlite://` URL whose query names options. The environment fills what the
    URL does not say; `overrides` (named like the settings) win over both; other
    options pass through. ValueError names an option that does not exist or a value it
    refuses."""
    path, query = location, {}
    if location.startswith(("file://", "sqlite://")):
        parts = urlsplit(location)
        path = unquote(parts.netloc + parts.path) if parts.netloc else unquote(parts.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
    fields = set(EmbeddedSettings.model_fields)
    unknown = sorted(set(query) - fields)
    if unknown:
        raise ValueError(
            f"store URL option {unknown[0]!r} does not exist; the options are "
            f"{', '.join(sorted(fields))}"
        )
    given = {k: v for k, v in overrides.items() if k in fields}
    try:
        settings = EmbeddedSettings(**{**query, **given})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "store"
        raise ValueError(f"store option {where}: {error['msg']}") from None
    rest = {k: v for k, v in overrides.items() if k not in fields}
    return path, {**settings.options(), **rest}
