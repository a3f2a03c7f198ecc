"""The exact names a question types: options, variables, functions, files, codes.

A user who names `--num-callers`, `FONTCONFIG_FILE`, `asn1_der_decoding()` or
`/etc/fonts/local.conf` wants the passage that writes it, whatever else matches the
question's words: these names are grepped verbatim, a chunk holding one is ranked above
chunks that do not, and a name that occurs nowhere in the corpus says the corpus does
not answer the question. Words are not names: "B-52" (letters and digits) is, "Paris" is
not, so the rule leaves questions about people and places alone.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from sift.text import has_cjk

__all__ = ["named_identifiers"]

# Brackets, quotes and sentence punctuation around a name ("(`--foo`)", "FOO_BAR?").
_EDGE = "\"'`“”‘’()[]{}<>,;:!?。、「」『』（）【】"
_FILE_SUFFIX = re.compile(
    r"^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*\.(?:h|hh|hpp|c|cc|cpp|py|pl|rb|sh|el|js|ts|"
    r"conf|cfg|ini|rc|toml|ya?ml|json|xml|html?|css|txt|md|rst|tex|sty|cls|bib|mk|cmake|"
    r"in|am|ac|pc|so|a|d|list|sources|service|socket|desktop|gz|xz|zip|tar|deb|pdf|log)$"
)
_OPTION = re.compile(r"^--?[A-Za-z][A-Za-z0-9_.-]*$")
_SNAKE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$|^__?[A-Za-z0-9]+(?:_\w*)*$")
_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_.:]*)\(\)$")
_PATH = re.compile(r"^(?:~|\.{1,2})?/[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]*)*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)+$")
_TEX = re.compile(r"^\\[A-Za-z@]{2,}$")
_TEX_HEAD = re.compile(r"^\\[A-Za-z@]{2,}")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# "1990s", "21st", "4Th", "25-foot": numbers written as words, not names.
_ORDINAL = re.compile(r"^\d+(?:s|st|nd|rd|th|'s|-[a-z]+)$", re.IGNORECASE)
_CAMEL_STEP = re.compile(r"[a-z0-9][A-Z]")
_MIXED = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*$")


def _token_name(token: str) -> str | None:
    """The name a token writes, or None for a plain word."""
    token = token.strip(_EDGE).rstrip(".")
    if token.startswith("\\") and (tex := _TEX_HEAD.match(token)) is not None:
        return tex.group(0)  # `\usepackage{luatexja}`: the command, not its argument
    if token.startswith("$") and _VARIABLE.match(token[1:].strip("{}")):
        return token[1:].strip("{}")  # `$HOME`, `${HOME}`: the variable's name
    if len(token) < 3 or _ORDINAL.match(token):
        return None
    if (call := _CALL.match(token)) is not None:
        return call.group(1) if len(call.group(1)) >= 2 else None
    if _OPTION.match(token) and any(c.isalpha() for c in token.lstrip("-")):
        # `--num-callers=<number>`: the option is what is written before the value.
        name = token.split("=", 1)[0]
        return name if len(name.lstrip("-")) >= 2 else None
    if "=" in token and _OPTION.match(token.split("=", 1)[0]):
        return token.split("=", 1)[0]
    if _TEX.match(token) or _PATH.match(token) or _FILE_SUFFIX.match(token):
        return token
    if _SNAKE.match(token) and any(c.isalpha() for c in token):
        return token
    if _DOTTED.match(token) and not token.replace(".", "").isupper():
        return token
    if _MIXED.match(token) and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
        return token.strip("-")
    steps = len(_CAMEL_STEP.findall(token))
    if token.isalnum() and (steps >= 2 or (steps == 1 and token[0].islower())):
        return token
    return None


@lru_cache(maxsize=4096)
def named_identifiers(question: str) -> tuple[str, ...]:
    """The names the question types, in order, once each (NFKC: a full-width `ＦＯＯ＿ＢＡＲ`
    is `FOO_BAR`); Japanese text around a name is not part of it."""
    text = unicodedata.normalize("NFKC", question)
    if has_cjk(text):
        text = "".join(" " if has_cjk(c) else c for c in text)
    found: list[str] = []
    for token in text.split():
        name = _token_name(token)
        if name is not None and name not in found:
            found.append(name)
    return tuple(found)
