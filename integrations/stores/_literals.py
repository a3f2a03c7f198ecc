"""The literal text every match of an RE2 pattern must contain (grep's pre-filter).

A small parser of RE2's syntax, written for this one question, so that the answer does
not depend on CPython's private `re._parser` (whose structures change between releases,
and which reads a few RE2 constructs differently). It is conservative by construction:
whatever it does not understand, or cannot be sure of, splits the text it is collecting,
so a fragment is only ever a run of characters that every match holds contiguously. The
result may be empty (the caller then scans every chunk); it never names text that some
match lacks, which would make grep miss a chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["literal_fragments"]

# Escapes that stand for one known character.
_CONTROL = {"a": "\a", "f": "\f", "t": "\t", "n": "\n", "r": "\r", "v": "\v"}
# Escapes and metacharacters that match something other than one fixed character.
_CLASS_ESCAPES = set("dDsSwWbBAzC")
_MAX_REPEAT = 1000


class _Unsupported(Exception):
    """The parser met syntax it does not read; the pattern yields no fragments."""


@dataclass(slots=True)
class _Char:
    char: str
    fold: bool  # matched case-insensitively: (?i) was in force


@dataclass(slots=True)
class _Opaque:
    """One atom whose match is not a fixed character: a class, '.', an anchor, ..."""


@dataclass(slots=True)
class _Group:
    branches: list[list[_Node]]


@dataclass(slots=True)
class _Repeat:
    node: _Node
    low: int


_Node = _Char | _Opaque | _Group | _Repeat


@dataclass(slots=True)
class _Parser:
    text: str
    pos: int = 0
    fold: bool = False

    def peek(self, offset: int = 0) -> str:
        at = self.pos + offset
        return self.text[at] if at < len(self.text) else ""

    def take(self) -> str:
        if self.pos >= len(self.text):
            raise _Unsupported("unexpected end")
        char = self.text[self.pos]
        self.pos += 1
        return char

    # ------------------------------------------------------------------ structure

    def alternation(self) -> list[list[_Node]]:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches

    def sequence(self) -> list[_Node]:
        items: list[_Node] = []
        while self.pos < len(self.text) and self.peek() not in "|)":
            atoms = self.atom()
            for atom in atoms[:-1]:
                items.append(atom)
            if atoms:
                items.append(self.repeat(atoms[-1]))
        return items

    def repeat(self, node: _Node) -> _Node:
        while True:
            char = self.peek()
            if char in ("*", "?"):
                self.pos += 1
                node = _Repeat(node, 0)
            elif char == "+":
                self.pos += 1
                node = _Repeat(node, 1)
            elif char == "{" and (bounds := self.bounds()) is not None:
                node = _Repeat(node, bounds)
            else:
                return node
            if self.peek() == "?":  # non-greedy: the same characters
                self.pos += 1

    def bounds(self) -> int | None:
        """The minimum of a `{n}`, `{n,}` or `{n,m}` repetition at the cursor, which it
        consumes; None (nothing consumed) when RE2 would read `{` as a literal."""
        end = self.text.find("}", self.pos)
        if end < 0:
            return None
        body = self.text[self.pos + 1 : end]
        low, _, high = body.partition(",")
        if not _digits(low) or (high and not _digits(high)):
            return None
        if int(low) > _MAX_REPEAT or (high and int(high) > _MAX_REPEAT):
            raise _Unsupported("repetition too large")
        self.pos = end + 1
        return int(low)

    # ------------------------------------------------------------------ atoms

    def atom(self) -> list[_Node]:
        """The next atom; a list because `\\Q...\\E` quotes several characters and a
        flag group `(?i)` is none. A repetition applies to the last one."""
        char = self.take()
        if char == "(":
            return self.group()
        if char == "[":
            self.char_class()
            return [_Opaque()]
        if char in ".^$":
            return [_Opaque()]
        if char == "{":
            # A `{` that does not open a repetition is a literal in RE2.
            self.pos -= 1
            if self.bounds() is not None:
                raise _Unsupported("repetition of nothing")
            self.pos += 1
            return [_Char("{", self.fold)]
        if char in "*+?":
            raise _Unsupported("repetition of nothing")
        if char == "\\":
            return self.escape()
        return [_Char(char, self.fold)]

    def group(self) -> list[_Node]:
        fold = self.fold
        if self.peek() == "?":
            self.pos += 1
            if self.peek() in ("P", "<"):
                # (?P<name>...) or (?<name>...): a capturing group.
                if self.peek() == "P":
                    self.pos += 1
                if self.take() != "<":
                    raise _Unsupported("not a named group")
                close = self.text.find(">", self.pos)
                if close < 0:
                    raise _Unsupported("unterminated group name")
                self.pos = close + 1
            else:
                flags_on = True
                while True:
                    char = self.take()
                    if char == ")":
                        # (?i) and friends: flags for the rest of the enclosing group.
                        return []
                    if char == ":":
                        break
                    if char == "-":
                        flags_on = False
                    elif char == "i":
                        self.fold = flags_on
                    elif char not in "msU":
                        raise _Unsupported(f"flag {char!r}")
        branches = self.alternation()
        if self.take() != ")":
            raise _Unsupported("unbalanced group")
        self.fold = fold  # flags set inside a group end with it
        return [_Group(branches)]

    def char_class(self) -> None:
        """Skips a bracket expression; what it matches is never a fixed character here."""
        if self.peek() == "^":
            self.pos += 1
        if self.peek() == "]":
            self.pos += 1
        while True:
            char = self.take()
            if char == "]":
                return
            if char == "\\":
                escaped = self.take()
                if escaped == "Q":
                    raise _Unsupported("quoting inside a class")
                if escaped in "pPx" and self.peek() == "{":
                    self.skip_to("}")
            elif char == "[" and self.peek() == ":":
                close = self.text.find(":]", self.pos + 1)
                if close < 0:
                    raise _Unsupported("unterminated POSIX class")
                self.pos = close + 2

    def skip_to(self, end: str) -> None:
        close = self.text.find(end, self.pos)
        if close < 0:
            raise _Unsupported(f"missing {end!r}")
        self.pos = close + 1

    def escape(self) -> list[_Node]:
        char = self.take()
        if char == "Q":
            close = self.text.find("\\E", self.pos)
            end = len(self.text) if close < 0 else close
            quoted = self.text[self.pos : end]
            self.pos = end if close < 0 else close + 2
            return [_Char(c, self.fold) for c in quoted]
        if char in _CONTROL:
            return [_Char(_CONTROL[char], self.fold)]
        if char in _CLASS_ESCAPES:
            return [_Opaque()]
        if char in "pP":
            if self.peek() == "{":
                self.skip_to("}")
            else:
                self.take()
            return [_Opaque()]
        if char == "x":
            if self.peek() == "{":
                close = self.text.find("}", self.pos)
                digits = self.text[self.pos + 1 : close] if close > 0 else ""
                self.pos = close + 1
            else:
                digits = self.text[self.pos : self.pos + 2]
                self.pos += 2
            return [_Char(chr(_hex(digits)), self.fold)]
        if char.isdigit():
            # \0, \12, \123: an octal character code (\1-\9 alone are backreferences,
            # which RE2 refuses before this runs).
            digits = char
            while len(digits) < 3 and self.peek() and self.peek() in "01234567":
                digits += self.take()
            if any(d not in "01234567" for d in digits):
                raise _Unsupported("not an octal escape")
            return [_Char(chr(int(digits, 8)), self.fold)]
        if char.isascii() and not char.isalnum():
            return [_Char(char, self.fold)]
        raise _Unsupported(f"escape \\{char}")


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _hex(digits: str) -> int:
    if not digits or len(digits) > 8 or any(c not in "0123456789abcdefABCDEF" for c in digits):
        raise _Unsupported("bad hex escape")
    value = int(digits, 16)
    if value > 0x10FFFF:
        raise _Unsupported("code point out of range")
    return value


# --------------------------------------------------------------------------- fragments

_BREAK = None
_Piece = str | None


def _certain(char: _Char) -> bool:
    """Whether a case-insensitive pre-filter finds every spelling RE2 accepts for it.

    Under (?i) RE2 matches a character's whole case-folding orbit, which for a few
    letters goes beyond upper and lower case (k and the Kelvin sign, s and the long s,
    Greek and Cyrillic variants). ASCII letters other than k and s, and characters
    without case (digits, punctuation, kana, kanji) are safe; other cased letters end
    the fragment rather than risk missing a spelling."""
    c = char.char
    if not char.fold:
        return True
    if c.isascii():
        return c.lower() not in ("k", "s")
    return c.lower() == c and c.upper() == c and c.casefold() == c


def _pieces(items: list[_Node], out: list[_Piece]) -> None:
    for item in items:
        if isinstance(item, _Char):
            out.append(item.char if _certain(item) else _BREAK)
        elif isinstance(item, _Group):
            if len(item.branches) == 1:
                _pieces(item.branches[0], out)
            else:
                out.append(_BREAK)  # alternation: no branch is certain to be taken
        elif isinstance(item, _Repeat):
            if item.low == 0:
                out.append(_BREAK)
            else:
                # The first copy joins what precedes, the last what follows, and what
                # lies between is unknown: X{2,5} holds X, break, X.
                _pieces([item.node], out)
                out.append(_BREAK)
                _pieces([item.node], out)
        else:
            out.append(_BREAK)


def literal_fragments(pattern: str) -> list[str]:
    """Substrings every match of the RE2 `pattern` contains, longest first.

    Case-insensitive parts come back as written, for a pre-filter that folds case; a
    character whose case variants such a filter might not find ends its fragment.
    Syntax the parser does not read yields no fragments at all.
    """
    parser = _Parser(pattern)
    try:
        branches = parser.alternation()
        if parser.pos != len(pattern):
            raise _Unsupported("unbalanced ')'")
    except (_Unsupported, ValueError):
        return []
    if len(branches) != 1:
        return []
    pieces: list[_Piece] = []
    _pieces(branches[0], pieces)
    fragments: list[str] = []
    current: list[str] = []
    for piece in [*pieces, _BREAK]:
        if piece is _BREAK:
            if current:
                fragments.append("".join(current))
            current = []
        else:
            current.append(piece)
    return sorted(set(fragments), key=lambda f: (-len(f), f))
