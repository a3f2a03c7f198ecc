"""How sift's chunks become Weaviate objects and back.

Each chunk is one object. Its UUID is uuid5 of the chunk id, so ingesting the same chunk
again overwrites it (an upsert) instead of duplicating it. Metadata is kept twice: whole,
as JSON in `metadata_json` (the copy that round-trips exactly), and flattened into
`m_<key>` properties that Weaviate filters on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from sift.integrations.stores.weaviate._schema import PropKind, meta_property
from sift.text import Analyzer
from sift.types import Chunk

__all__ = [
    "CHUNK_NAMESPACE",
    "chunk_from_properties",
    "chunk_properties",
    "chunk_uuid",
    "record_of",
    "seq_of",
    "value_kind",
]

# A fixed namespace: UUIDs must be the same on every machine and every run.
CHUNK_NAMESPACE = uuid.UUID("6f1c9a52-3d9e-5b7a-9f2e-5a1f7c0d4e21")


def chunk_uuid(chunk_id: str) -> str:
    """The UUID of the Weaviate object holding chunk `chunk_id` (uuid5, fixed namespace)."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, chunk_id))


def value_kind(value: Any) -> PropKind | None:
    """The property kind a metadata value is filtered as; None when it is not flattened
    (None, empty or mixed lists: those live in metadata_json only)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text" if value else None
    if isinstance(value, list) and value:
        kinds = {value_kind(v) for v in value}
        if len(kinds) == 1 and (kind := kinds.pop()) in ("text", "number", "bool"):
            return f"{kind}[]"  # type: ignore[return-value]
    return None


def flat_value(value: Any, kind: PropKind) -> Any:
    if kind == "number":
        return float(value)
    if kind == "number[]":
        return [float(v) for v in value]
    return value


def chunk_properties(
    chunk: Chunk,
    *,
    content_hash: str,
    chunk_count: int,
    seq: float = 0.0,
    analyzer: Analyzer | None = None,
) -> tuple[dict[str, Any], dict[str, PropKind]]:
    """The object's properties, and the kind of each flattened metadata property. With
    an analyzer, the terms keyword search reads (none on a collection made without)."""
    props: dict[str, Any] = {
        "doc_id": chunk.doc_id,
        "chunk_id": chunk.chunk_id,
        "title": chunk.title,
        "text": chunk.text,
        "chunk_index": chunk.index,
        "chunk_count": chunk_count,
        "start": chunk.start,
        "end": chunk.end,
        "content_hash": content_hash,
        "seq": seq,
        "metadata_json": json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True),
    }
    if analyzer is not None:
        props["text_terms"] = " ".join(analyzer.terms(chunk.text))
        props["title_terms"] = " ".join(analyzer.terms(chunk.title))
    kinds: dict[str, PropKind] = {}
    for key, value in chunk.metadata.items():
        kind = value_kind(value)
        if kind is not None:
            name = meta_property(key)
            props[name] = flat_value(value, kind)
            kinds[name] = kind
    return props, kinds


def chunk_from_properties(props: Mapping[str, Any]) -> Chunk:
    raw = props.get("metadata_json") or "{}"
    try:
        metadata = json.loads(raw)
    except ValueError:
        metadata = {}
    return Chunk(
        chunk_id=str(props.get("chunk_id") or ""),
        doc_id=str(props.get("doc_id") or ""),
        index=int(props.get("chunk_index") or 0),
        title=str(props.get("title") or ""),
        text=str(props.get("text") or ""),
        start=int(props.get("start") or 0),
        end=int(props.get("end") or 0),
        metadata=metadata if isinstance(metadata, dict) else {},
    )


def record_of(chunk: Chunk) -> dict[str, Any]:
    """What sift.filters.matches sees for a chunk."""
    return {**chunk.metadata, "doc_id": chunk.doc_id, "title": chunk.title}


def seq_of(obj: Any) -> float:
    """An object's ingest order (the `seq` property), 0 when it has none."""
    value = obj.properties.get("seq")
    return float(value) if isinstance(value, int | float) else 0.0
