"""The collection's schema: the properties of a sift chunk object, how metadata keys
become property names, the collection's configuration and the description that records
what the collection was made with (schema version, embedder, chunk size).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from typing import Any, Literal

from weaviate.classes.config import Configure, DataType, Property, Tokenization

__all__ = [
    "BASE_PROPERTIES",
    "RETURN_PROPERTIES",
    "SCHEMA_VERSION",
    "TERMS_OF",
    "PropKind",
    "collection_config",
    "field_property",
    "kinds_from_schema",
    "meta_property",
    "new_property",
    "read_description",
    "write_description",
]

SCHEMA_VERSION = 1
# The collection's description carries what it was made with, as JSON after this prefix.
_DESCRIPTION_PREFIX = "sift:"

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
    # The analyzer's terms of the text and the title, space-separated: what keyword
    # search reads (collections made before analyzers were recorded lack them).
    "text_terms": "text",
    "title_terms": "text",
}
TERMS_OF = {"text_terms": "text", "title_terms": "title"}
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


def meta_property(key: str) -> str:
    """The Weaviate property holding metadata `key`: an injective escape into GraphQL's
    name alphabet (letters and digits kept, everything else `_<hex>_`)."""
    escaped = "".join(c if c.isascii() and c.isalnum() else f"_{ord(c):x}_" for c in key)
    return f"m_{escaped}"


def field_property(field: str) -> str:
    return field if field in ("doc_id", "title") else meta_property(field)


def new_property(name: str, kind: PropKind) -> Property:
    terms = name in TERMS_OF
    searchable = terms or name in ("text", "title")
    # `text` must be filterable: grep narrows candidates with a Like filter on it.
    filterable = name != "metadata_json" and not terms
    tokenization = None
    if kind in ("text", "text[]"):
        # Terms are already analysed: whitespace tokenization keeps each one whole (and
        # its case; the analyzer lower-cases). Word tokenization of `text` and `title`
        # serves grep's Like filter and collections made before analyzers; everything
        # filtered by exact value (ids, metadata) is one token.
        if terms:
            tokenization = Tokenization.WHITESPACE
        else:
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


def write_description(recorded: dict[str, Any]) -> str:
    return _DESCRIPTION_PREFIX + json.dumps(recorded)


def read_description(description: str) -> dict[str, Any]:
    """What a sift collection's description records; empty for any other description."""
    recorded: Any = {}
    if description.startswith(_DESCRIPTION_PREFIX):
        with contextlib.suppress(ValueError):
            recorded = json.loads(description[len(_DESCRIPTION_PREFIX) :])
    return recorded if isinstance(recorded, dict) else {}
