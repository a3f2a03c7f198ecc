"""A conservative token estimate for when no model server reports exact counts.

Modern BPE vocabularies (gpt-oss's o200k among them) spend about one token per common
English word and one per punctuation mark. The estimate charges every word by length
(one token per four characters), every digit group of three, and every punctuation or
symbol character on its own, so it overcounts prose by roughly a third and never
undercounts JSON, code or tables, which are mostly punctuation.
"""

from __future__ import annotations

import re

__all__ = ["estimate_tokens"]

_PIECE = re.compile(r"[^\W\d_]+|\d+|\n+|[^\w\s]|_", re.UNICODE)


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    total = 0
    for piece in _PIECE.findall(text):
        first = piece[0]
        if first == "\n":
            total += 1
        elif first.isdigit():
            total += -(-len(piece) // 3)
        elif first.isalpha():
            if piece.isascii():
                total += -(-len(piece) // 4)
            else:
                # Non-Latin scripts tokenise near one token per character.
                total += len(piece)
        else:
            total += 1
    return total
