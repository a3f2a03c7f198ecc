"""The collection's schema, how sift's chunks become Weaviate objects and back, and how
sift's metadata filters become Weaviate filters.

Each chunk is one object. Its UUID is uuid5 of the chunk id, so ingesting the same chunk
again overwrites it (an upsert) instead of duplicating it. Metadata is kept twice: whole,
as JSON in `metadata_json` (the copy that round-trips exactly), and flattened into
`m_<key>` properties that Weaviate filters on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.classes.query import Filter as WFilter

from sift.filters import Condition, Filter, matches
from sift.types import Chunk

__all__: list[str] = []

# A fixed namespace: UUIDs must be the same on every machine and every run.
CHUNK_NAMESPACE = uuid.UUID("6f1c9a52-3d9e-5b7a-9f2e-5a1f7c0d4e21")

PropKind = Literal["text", "number", "bool", "text[]", "number[]", "bool[]"]

BASE_PROPERTIES: dict[str, PropKind] = {
    "doc_id": "text",
    "chunk_id": "text",
    "title": "text",
    "text": "text",
    "chunk_index": "number",
    "chunk_count": "number",
    "start": "number",
    "end": "number",
    "content_hash": "text",
    "metadata_json": "text",
    # Ingest order (microseconds since the epoch, unique per document): grep reports
    # matches in corpus order, as the embedded store does.
    "seq": "number",
}
RETURN_PROPERTIES = [
    "doc_id",
    "chunk_id",
    "title",
    "text",
    "chunk_index",
    "start",
    "end",
    "metadata_json",
]
# Lexical search looks at the passage and its title, as the embedded store does.
SEARCH_PROPERTIES = ["text", "title"]

_DATA_TYPES: dict[PropKind, DataType] = {
    "text": DataType.TEXT,
    "number": DataType.NUMBER,
    "bool": DataType.BOOL,
    "text[]": DataType.TEXT_ARRAY,
    "number[]": DataType.NUMBER_ARRAY,
    "bool[]": DataType.BOOL_ARRAY,
}
_KIND_OF_TYPE = {
    "text": "text",
    "number": "number",
    "int": "number",
    "boolean": "bool",
    "text[]": "text[]",
    "number[]": "number[]",
    "int[]": "number[]",
    "boolean[]": "bool[]",
}


def chunk_uuid(chunk_id: str) -> str:
    return str(uuid.uuid5(CHUNK_NAMESPACE, chunk_id))


def meta_property(key: str) -> str:
    """The Weaviate property holding metadata `key`: an injective escape into GraphQL's
    name alphabet (letters and digits kept, everything else `_<hex>_`)."""
    escaped = "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):x}_" for c in key)
    return f"m_{escaped}"


def field_property(field: str) -> str:
    return field if field in ("doc_id", "title") else meta_property(field)


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


def new_property(name: str, kind: PropKind) -> Property:
    searchable = name in ("text", "title")
    # `text` must be filterable: grep narrows candidates with a Like filter on it.
    filterable = name != "metadata_json"
    tokenization = None
    if kind in ("text", "text[]"):
        # Word tokenization makes BM25 work on passages; everything filtered by exact
        # value (ids, metadata) is one token.
        tokenization = Tokenization.WORD if searchable else Tokenization.FIELD
    return Property(
        name=name,
        data_type=_DATA_TYPES[kind],
        tokenization=tokenization,
        index_searchable=searchable if kind in ("text", "text[]") else None,
        index_filterable=filterable,
        index_range_filters=kind == "number" and name != "metadata_json",
        skip_vectorization=name != "text",
    )


def collection_config(
    name: str,
    *,
    multi_tenancy: bool,
    vectorizer: str,
    ollama_endpoint: str,
    ollama_model: str,
) -> dict[str, Any]:
    """Keyword arguments for `client.collections.create`."""
    if vectorizer == "text2vec-ollama":
        vector_config = Configure.Vectors.text2vec_ollama(
            api_endpoint=ollama_endpoint,
            model=ollama_model,
            source_properties=["title", "text"],
        )
    else:
        vector_config = Configure.Vectors.self_provided()
    return {
        "name": name,
        "description": "sift chunks (schema 1): one object per chunk, vectors from sift",
        "properties": [new_property(p, k) for p, k in BASE_PROPERTIES.items()],
        "vector_config": vector_config,
        "inverted_index_config": Configure.inverted_index(index_null_state=True),
        "multi_tenancy_config": Configure.multi_tenancy(
            enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
        )
        if multi_tenancy
        else None,
    }


def kinds_from_schema(properties: Iterable[Any]) -> dict[str, PropKind]:
    """Property name -> kind, from the client's `config.get().properties`."""
    out: dict[str, PropKind] = {}
    for prop in properties:
        kind = _KIND_OF_TYPE.get(str(getattr(prop.data_type, "value", prop.data_type)))
        if kind is not None:
            out[prop.name] = kind  # type: ignore[assignment]
    return out


def chunk_properties(
    chunk: Chunk, *, content_hash: str, chunk_count: int, seq: float = 0.0
) -> tuple[dict[str, Any], dict[str, PropKind]]:
    """The object's properties, and the kind of each flattened metadata property."""
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


# --------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class Pushdown:
    """A filter as Weaviate can evaluate it.

    `where` None with `nothing` False means "every object"; `nothing` means no object can
    match. `exact` says Weaviate's answer equals sift's semantics; otherwise results are
    a superset, re-checked with `sift.filters.matches` (so the store over-fetches).
    """

    where: Any = None
    nothing: bool = False
    exact: bool = True


_ALL = Pushdown()
_NONE = Pushdown(nothing=True)
_SCALARS = {"text": str, "number": (int, float), "bool": bool}


def _fits(kind: str, value: Any) -> bool:
    base = kind.rstrip("[]")
    if base == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _SCALARS[base])


def _cast(kind: str, value: Any) -> Any:
    return float(value) if kind.startswith("number") else value


def _constant(condition: Condition) -> Pushdown:
    # A field the collection has never seen is absent from every object.
    return _ALL if matches(Filter(conditions=(condition,)), {}) else _NONE


def _like_safe(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and not any(c in value for c in "*?")


def _condition(c: Condition, kinds: Mapping[str, PropKind], modern: bool) -> Pushdown:
    prop = field_property(c.field)
    kind = kinds.get(prop)
    if kind is None:
        return _constant(c)
    p = WFilter.by_property(prop)
    op, v = c.op, c.value
    is_array = kind.endswith("[]")
    inexact = Pushdown(exact=False)
    # Title is word-tokenized: equality there is a superset test, re-checked after.
    exact = prop != "title"
    if op == "empty":
        return Pushdown(p.is_none(True))
    if op == "not_empty":
        return Pushdown(p.is_none(False))
    if op in ("eq", "in"):
        wanted = [v] if op == "eq" else list(v or [])
        wanted = [_cast(kind, w) for w in wanted if _fits(kind, w)]
        if not wanted:
            return _NONE
        if len(wanted) == 1 and not is_array:
            return Pushdown(p.equal(wanted[0]), exact=exact)
        return Pushdown(p.contains_any(wanted), exact=exact)
    if op in ("ne", "not_in"):
        unwanted = [v] if op == "ne" else list(v or [])
        unwanted = [_cast(kind, u) for u in unwanted if _fits(kind, u)]
        if not unwanted:
            return _ALL
        if is_array or not exact:
            return inexact
        if modern:
            where = p.contains_none(unwanted)
        else:
            where = WFilter.all_of([p.not_equal(u) for u in unwanted])
        # A missing value is "not equal" in sift's semantics.
        return Pushdown(WFilter.any_of([where, p.is_none(True)]))
    if op in ("gt", "gte", "lt", "lte"):
        if kind != "number" or not _fits(kind, v):
            return inexact if kind == "text" and isinstance(v, str) else _NONE
        method = {
            "gt": p.greater_than,
            "gte": p.greater_or_equal,
            "lt": p.less_than,
            "lte": p.less_or_equal,
        }[op]
        return Pushdown(method(float(v)))
    if op in ("contains", "starts_with", "ends_with"):
        if kind != "text" or not _like_safe(v):
            return inexact
        pattern = {"contains": f"*{v}*", "starts_with": f"{v}*", "ends_with": f"*{v}"}[op]
        return Pushdown(p.like(pattern), exact=exact)
    return inexact  # not_contains and anything Weaviate cannot say exactly


def pushdown(spec: Filter | None, kinds: Mapping[str, PropKind], *, modern: bool) -> Pushdown:
    """sift's filter as a Weaviate filter (see Pushdown for the contract)."""
    if spec is None or not spec.conditions:
        return _ALL
    parts = [_condition(c, kinds, modern) for c in spec.conditions]
    exact = all(p.exact for p in parts)
    if spec.logic == "and":
        if any(p.nothing for p in parts):
            return _NONE
        wheres = [p.where for p in parts if p.where is not None]
    else:
        live = [p for p in parts if not p.nothing]
        if not live:
            return _NONE
        if any(p.where is None for p in live):
            return Pushdown(exact=exact)
        wheres = [p.where for p in live]
    if not wheres:
        return Pushdown(exact=exact)
    where = (
        wheres[0]
        if len(wheres) == 1
        else (WFilter.all_of(wheres) if spec.logic == "and" else WFilter.any_of(wheres))
    )
    return Pushdown(where, exact=exact)


def exclusion(chunk_ids: Iterable[str], *, modern: bool) -> Any:
    ids = sorted(set(chunk_ids))
    if not ids:
        return None
    p = WFilter.by_property("chunk_id")
    if modern:
        return p.contains_none(ids)
    return WFilter.all_of([p.not_equal(i) for i in ids]) if len(ids) > 1 else p.not_equal(ids[0])


def combine(*wheres: Any) -> Any:
    live = [w for w in wheres if w is not None]
    if not live:
        return None
    return live[0] if len(live) == 1 else WFilter.all_of(live)
