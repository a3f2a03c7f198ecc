"""The argument checks every store runs before it touches its data.

Both stores call these, so that the embedded store and Weaviate refuse the same bad input
with the same message: an empty or huge query, a `k` out of range, an unknown mode, an
alpha outside [0, 1], malformed filters, ids that are not strings (a bare string where a
list of ids belongs would otherwise be read one character at a time), an unusable regex.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from sift.errors import InvalidFilterError, InvalidQueryError
from sift.filters import Filter, parse_filter
from sift.fusion import check_alpha
from sift.integrations.stores.patterns import compile_pattern
from sift.types import SearchMode

__all__ = [
    "DEFAULT_MAX_QUERY_CHARS",
    "MAX_K",
    "MAX_QUERY_TERMS",
    "GrepRequest",
    "SearchRequest",
    "check_doc_id",
    "check_filters",
    "check_grep",
    "check_ids",
    "check_k",
    "check_mode",
    "check_search",
    "validate_query",
]

DEFAULT_MAX_QUERY_CHARS = 2_000
# Keyword queries keep their heaviest terms up to this many: BM25 over a thousand OR-ed
# terms (a long Japanese question gives two or three per character) is slow and no better.
MAX_QUERY_TERMS = 256
MAX_K = 1_000
MODES: tuple[SearchMode, ...] = get_args(SearchMode)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search call's arguments, checked. `alpha` None means the store's default."""

    text: str
    k: int
    mode: SearchMode
    filters: Filter | None
    exclude: frozenset[str]
    alpha: float | None


@dataclass(frozen=True, slots=True)
class GrepRequest:
    """A grep call's arguments, checked, with the compiled RE2 regex."""

    pattern: str
    regex: Any
    k: int
    filters: Filter | None
    exclude: frozenset[str]


def validate_query(query: str, max_chars: int = DEFAULT_MAX_QUERY_CHARS) -> str:
    """The query stripped; InvalidQueryError when it is empty or longer than max_chars."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    text = query.strip()
    if not text:
        raise InvalidQueryError("query is empty; give a question or keywords to search for")
    if len(text) > max_chars:
        raise InvalidQueryError(
            f"query is {len(text)} characters long; the limit is {max_chars}. "
            "Shorten it to the key words or raise max_query_chars."
        )
    return text


def check_k(k: int, *, name: str = "k", limit: int = MAX_K) -> int:
    """`k` itself when it is an int in 1..limit, else ValueError naming it."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limit:
        raise ValueError(f"{name} must be an integer between 1 and {limit}, got {k!r}")
    return k


def check_mode(mode: str) -> SearchMode:
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}; valid modes: {', '.join(MODES)}")
    return mode


def check_filters(filters: Filter | Mapping[str, Any] | None) -> Filter | None:
    """A Filter with at least one condition, or None for "no filter"; InvalidFilterError
    (from `sift.filters.parse_filter`, the check every face shares) for a malformed one."""
    if filters is not None and not isinstance(filters, Filter | Mapping):
        raise InvalidFilterError(
            "filters must be a Filter or a mapping of metadata field to value "
            f"(such as {{'lang': 'en'}}), got {type(filters).__name__}"
        )
    try:
        spec = parse_filter(filters)
    except InvalidFilterError as exc:
        raise InvalidFilterError(f"invalid filters: {exc}") from None
    return spec if spec is not None and spec.conditions else None


def check_ids(ids: Iterable[str], *, name: str) -> list[str]:
    """The ids as a list, or ValueError when `ids` is a bare string or holds a non-string."""
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise ValueError(
            f"{name} must be a list of strings, got {type(ids).__name__} {_short(ids)}"
        )
    out = list(ids)
    for item in out:
        if not isinstance(item, str):
            raise ValueError(
                f"{name} must hold strings only, got {type(item).__name__} {_short(item)}"
            )
    return out


def check_doc_id(doc_id: str) -> str:
    if not isinstance(doc_id, str):
        raise ValueError(f"doc_id must be a string, got {type(doc_id).__name__} {_short(doc_id)}")
    return doc_id


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_search(
    query: str,
    *,
    k: int,
    mode: str,
    filters: Filter | Mapping[str, Any] | None,
    exclude: Collection[str],
    alpha: float | None,
    max_query_chars: int,
) -> SearchRequest:
    return SearchRequest(
        text=validate_query(query, max_query_chars),
        k=check_k(k),
        mode=check_mode(mode),
        filters=check_filters(filters),
        exclude=frozenset(check_ids(exclude, name="exclude")),
        alpha=None if alpha is None else check_alpha(alpha),
    )


def check_grep(
    pattern: str,
    *,
    k: int,
    filters: Filter | Mapping[str, Any] | None,
    exclude: Collection[str],
    max_pattern_chars: int,
) -> GrepRequest:
    return GrepRequest(
        pattern=pattern,
        regex=compile_pattern(pattern, max_pattern_chars),
        k=check_k(k),
        filters=check_filters(filters),
        exclude=frozenset(check_ids(exclude, name="exclude")),
    )
