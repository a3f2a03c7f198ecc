"""How the fake answers queries: Weaviate's filter operators over stored objects, word
and whitespace tokenization, BM25 (a term repeated in the query multiplies its IDF, as in
Weaviate), cosine distance, relative-score hybrid fusion, sorting and the cursor, and the
index checks real Weaviate makes before it runs a query."""

from __future__ import annotations

import fnmatch
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
from weaviate.proto.v1 import base_pb2

from sift.integrations.stores.weaviate.testing._codec import (
    filter_leaves,
    filter_property,
    filter_value,
    query_vector,
)
from sift.integrations.stores.weaviate.testing._state import FakeCollection, StoredObject

__all__ = ["bm25", "evaluate", "index_problem", "rank", "tokens", "word_tokens"]

_WORD = re.compile(r"[0-9A-Za-z\u00c0-\uffff]+")
_OP = base_pb2.Filters


def index_problem(request: Any, coll: FakeCollection) -> str | None:
    """What real Weaviate refuses: filtering or sorting on a property without a
    filterable index, keyword search on one without a searchable index."""
    names: list[str] = []
    if request.HasField("filters"):
        names += [filter_property(leaf) for leaf in filter_leaves(request.filters)]
    for sort in getattr(request, "sort_by", []):
        names.append(sort.path[0])
    for name in names:
        prop = coll.prop(name)
        if name != "_id" and prop is not None and not prop.get("indexFilterable", True):
            return f"Filtering by property '{name}' requires inverted index"
    searches = []
    if request.HasField("bm25_search") if hasattr(request, "bm25_search") else False:
        searches = list(request.bm25_search.properties)
    elif request.HasField("hybrid_search") if hasattr(request, "hybrid_search") else False:
        searches = list(request.hybrid_search.properties)
    for name in searches:
        prop = coll.prop(name)
        if prop is None or not prop.get("indexSearchable", True):
            return f"property '{name}' is not searchable (indexSearchable is false)"
    return None


def word_tokens(value: Any) -> list[str]:
    return [t.lower() for t in _WORD.findall(str(value))]


def tokens(value: Any, how: str) -> list[str]:
    """`value` tokenized as a property of tokenization `how` is ("whitespace" keeps case
    and splits on whitespace only; anything else is word tokenization here)."""
    if how == "whitespace":
        return str(value).split()
    return word_tokens(value)


def tokenization(coll: FakeCollection, name: str) -> str:
    prop = coll.prop(name)
    return (prop or {}).get("tokenization", "word")


def evaluate(f: Any, obj: StoredObject, coll: FakeCollection) -> bool:
    op = f.operator
    if op == _OP.OPERATOR_AND:
        return all(evaluate(sub, obj, coll) for sub in f.filters)
    if op == _OP.OPERATOR_OR:
        return any(evaluate(sub, obj, coll) for sub in f.filters)
    if op == _OP.OPERATOR_NOT:
        return not evaluate(f.filters[0], obj, coll)
    name = filter_property(f)
    want = filter_value(f)
    if name == "_id":
        have: Any = obj.uuid
    else:
        have = obj.properties.get(name)
    if op == _OP.OPERATOR_IS_NULL:
        return (have is None or have == []) == bool(want)
    if have is None:
        return op in (_OP.OPERATOR_NOT_EQUAL, _OP.OPERATOR_CONTAINS_NONE)
    word = tokenization(coll, name) == "word"
    values = have if isinstance(have, list) else [have]

    def norm(v: Any) -> Any:
        return v.lower() if isinstance(v, str) and word else v

    def equal(v: Any, w: Any) -> bool:
        if isinstance(v, str) and word:
            wanted = word_tokens(w)
            return bool(wanted) and set(wanted) <= set(word_tokens(v))
        if isinstance(v, int | float) and isinstance(w, int | float):
            return float(v) == float(w)
        return v == w

    if op == _OP.OPERATOR_EQUAL:
        return any(equal(v, want) for v in values)
    if op == _OP.OPERATOR_NOT_EQUAL:
        return not any(equal(v, want) for v in values)
    if op == _OP.OPERATOR_CONTAINS_ANY:
        return any(equal(v, w) for v in values for w in want)
    if op == _OP.OPERATOR_CONTAINS_ALL:
        return all(any(equal(v, w) for v in values) for w in want)
    if op == _OP.OPERATOR_CONTAINS_NONE:
        return not any(equal(v, w) for v in values for w in want)
    if op == _OP.OPERATOR_LIKE:
        if word:
            pattern = str(want).lower()
            return any(fnmatch.fnmatchcase(t, pattern) for v in values for t in word_tokens(v))
        return any(fnmatch.fnmatchcase(str(v), str(want)) for v in values)
    compare = {
        _OP.OPERATOR_GREATER_THAN: lambda a, b: a > b,
        _OP.OPERATOR_GREATER_THAN_EQUAL: lambda a, b: a >= b,
        _OP.OPERATOR_LESS_THAN: lambda a, b: a < b,
        _OP.OPERATOR_LESS_THAN_EQUAL: lambda a, b: a <= b,
    }.get(op)
    if compare is None:
        raise ValueError(f"the fake does not evaluate filter operator {op}")
    try:
        return any(compare(norm(v), norm(want)) for v in values)
    except TypeError:
        return False


def bm25(
    query: str, props: list[str], pool: list[StoredObject], coll: FakeCollection
) -> dict[str, float]:
    """BM25 over the concatenated properties, each tokenized as its schema says; a query
    term's IDF is multiplied by how often it is in the query (Weaviate's duplicate
    boost)."""
    hows = {name: tokenization(coll, name) for name in props}
    query_counts: Counter[str] = Counter()
    for how in set(hows.values()):
        for term, count in Counter(tokens(query, how)).items():
            query_counts[term] = max(query_counts[term], count)
    if not query_counts or not pool:
        return {}
    docs = {
        o.uuid: [t for p in props for t in tokens(o.properties.get(p, "") or "", hows[p])]
        for o in pool
    }
    n = len(docs)
    avg = sum(len(d) for d in docs.values()) / n or 1.0
    sets = {key: set(d) for key, d in docs.items()}
    df = {t: sum(1 for d in sets.values() if t in d) for t in query_counts}
    scores: dict[str, float] = {}
    for key, bag in docs.items():
        counts = Counter(bag)
        score = 0.0
        for t, boost in query_counts.items():
            tf = counts.get(t, 0)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * boost
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(bag) / avg))
        if score > 0:
            scores[key] = score
    return scores


def distances(vec: np.ndarray, pool: list[StoredObject]) -> dict[str, float]:
    out = {}
    qn = float(np.linalg.norm(vec)) or 1.0
    for o in pool:
        if o.vector is None or o.vector.shape != vec.shape:
            continue
        on = float(np.linalg.norm(o.vector)) or 1.0
        out[o.uuid] = 1.0 - float(np.dot(vec, o.vector)) / (qn * on)
    return out


def rank(
    request: Any, pool: list[StoredObject], coll: FakeCollection
) -> list[tuple[StoredObject, float | None, float | None]]:
    by_id = {o.uuid: o for o in pool}
    if request.HasField("bm25_search"):
        scores = bm25(
            request.bm25_search.query,
            list(request.bm25_search.properties) or ["text"],
            pool,
            coll,
        )
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(by_id[k], s, None) for k, s in ranked]
    if request.HasField("near_vector"):
        vec = query_vector(request.near_vector)
        dist = distances(vec, pool) if vec is not None else {}
        ranked = sorted(dist.items(), key=lambda kv: (kv[1], kv[0]))
        return [(by_id[k], None, d) for k, d in ranked]
    if request.HasField("hybrid_search"):
        h = request.hybrid_search
        lexical = bm25(h.query, list(h.properties) or ["text"], pool, coll)
        vec = query_vector(h)
        if vec is None and h.HasField("near_vector"):
            vec = query_vector(h.near_vector)
        dense = {k: 1.0 - d for k, d in (distances(vec, pool) if vec is not None else {}).items()}
        fused: dict[str, float] = {}
        for weight, scores in ((h.alpha, dense), (1.0 - h.alpha, lexical)):
            if not scores or weight == 0:
                continue
            low, high = min(scores.values()), max(scores.values())
            for key, value in scores.items():
                norm = (value - low) / (high - low) if high > low else 1.0
                fused[key] = fused.get(key, 0.0) + weight * norm
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(by_id[k], s, None) for k, s in ranked]
    # A plain fetch: uuid order, the order Weaviate's cursor uses, or the requested sort.
    objs = sorted(pool, key=lambda o: o.uuid)
    if request.after:
        objs = [o for o in objs if o.uuid > request.after]
    for sort in reversed(list(request.sort_by)):
        objs.sort(key=_sort_key(sort.path[0]), reverse=not sort.ascending)
    return [(o, None, None) for o in objs]


def _sort_key(name: str) -> Callable[[StoredObject], tuple[bool, Any]]:
    def key(obj: StoredObject) -> tuple[bool, Any]:
        value = obj.properties.get(name)
        return value is None, value or 0

    return key
