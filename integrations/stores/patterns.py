"""grep patterns: compiled with RE2 (linear-time matching, so an untrusted pattern can
never hang a search), and the literal text every match must contain, which a store uses
to pre-filter its chunks before running the regex."""

from __future__ import annotations

import re
from typing import Any

import re2

from sift.errors import InvalidPatternError
from sift.integrations.stores._literals import literal_fragments

__all__ = ["DEFAULT_MAX_PATTERN_CHARS", "compile_pattern", "literal_fragments"]

DEFAULT_MAX_PATTERN_CHARS = 500
# RE2 programs are bounded in memory; a pattern whose automaton would exceed this is
# refused at compile time rather than slowing every grep down.
_RE2_MAX_MEM = 32 << 20
# What RE2 refuses and people often try: backreferences, lookaround, possessive repeats.
_PERL_ONLY = re.compile(r"\\[1-9]|\(\?[=!<]|\(\?<[=!]|[*+?}]\+")


def compile_pattern(pattern: str, max_chars: int = DEFAULT_MAX_PATTERN_CHARS) -> Any:
    """An RE2 regex (linear-time matching), or InvalidPatternError saying why not.

    RE2 refuses what cannot run in linear time (backreferences, lookaround, possessive
    quantifiers), so an untrusted pattern can never hang a search.
    """
    if not isinstance(pattern, str):
        raise InvalidPatternError(f"pattern must be a string, got {type(pattern).__name__}")
    if not pattern:
        raise InvalidPatternError("pattern is empty; give a regular expression to grep for")
    if len(pattern) > max_chars:
        raise InvalidPatternError(
            f"pattern is {len(pattern)} characters long; the limit is {max_chars}"
        )
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        hint = ""
        if _PERL_ONLY.search(pattern) or "perl operator" in reason:
            hint = (
                " (backreferences, lookahead/lookbehind and possessive quantifiers are not "
                "supported: grep uses RE2 syntax, which always runs in linear time)"
            )
        elif "pattern too large" in reason:
            hint = " (the pattern's automaton is too large; use fewer or smaller repetitions)"
        raise InvalidPatternError(f"invalid grep pattern {pattern!r}: {reason}{hint}") from None
