"""The parts a question asks for one by one: "both A and B", "A and B each", 「A」と「B」.

A user who writes "For Exim I need both rewriting replacements and disabling IPv6: where
is each explained?" wants two places, and one search of the whole question ranks the
pages that mention both words loosely above the two pages that explain one each. The
planner searches each part on its own, with the question's scope ("Exim"), and the final
list takes the best of each part's search in turn beside the plain search's.

Only explicit cues count: "both", "each", "respectively", "and also" in English;
「」 pairs joined by と, それぞれ, 両方, 各々 in Japanese. A question that merely contains
"and" ("the history and causes of ...") is one place, and is left alone.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from sift.graphs.policies._plan_names import named_identifiers
from sift.text import has_cjk

__all__ = ["QuestionParts", "question_parts", "under_heading"]

# Longer questions are not read for parts (see question_parts).
_MAX_CHARS = 300

# Words that carry the question's form, not its topic: left out of a part's scope.
_FORM_WORDS = frozenset(
    """a about also an and any are both can could did do does each either explain explained
    for from how i in is it its know me my need needs of on or please respectively tell the
    them these they this those to want we what where which why with would you""".split()  # noqa: SIM905
)

_EN_BOTH = re.compile(
    r"\bboth\s+(?P<a>[^,:;?!.]+?)\s+and\s+(?P<b>[^,:;?!]+?)\s*(?=[,:;?!]|\.(?:\s|$)|$|\s+(?:each|respectively)\b)",
    re.IGNORECASE,
)
_EN_ALSO = re.compile(
    r"(?:\babout\s+)?(?P<a>[^,:;?!]+?)\s+and\s+also\s+(?:about\s+)?(?P<b>[^,:;?!]+?)\s*(?=[,:;?!]|\.(?:\s|$)|$)",
    re.IGNORECASE,
)
# "What do A and B each do", "A and B, respectively": the pair before the cue word.
_EN_EACH = re.compile(
    r"(?P<a>[^,:;?!]+?)\s+and\s+(?P<b>[^,:;?!]+?),?\s+(?:each|respectively)\b",
    re.IGNORECASE,
)
# The words that open a clause before the first part ("What do", "I need to know about").
_EN_LEAD = re.compile(
    r"^(?:.*\b(?:about|do|does|are|is|of|between|for)\s+)?(?P<rest>.+)$", re.IGNORECASE
)
# Two names the question types, joined: "what are \\smallint and \\DeclareMathSymbol
# for", 「--foo と --bar」.
_JOIN = re.compile(r"^[\s\W]*(?:and|or|と|や|及び|および|,|、)[\s\W]*$", re.IGNORECASE)
_JA_CUE = re.compile(r"それぞれ|両方|各々|おのおの")
_JA_QUOTED = re.compile(r"「(?P<a>[^「」]+)」\s*と\s*「(?P<b>[^「」]+)」")
# A と B, then the particle that closes the pair (は, について, の両方, を, が, 、).
_JA_PAIR = re.compile(
    r"(?P<a>[^、。？?！!「」]+?)\s*と\s*(?P<b>[^、。？?！!「」]+?)\s*"
    r"(?=について|の両方|は|を|が|、|。|？|\?)"
)
# Where the first part starts: after the last の, で or 、 before it (「XのAとB」: X is
# the scope).
_JA_SCOPE = re.compile(r"^(?P<scope>.*?)(?:の|で|では|において|、)\s*(?P<a>[^の、]*)$")


@dataclass(frozen=True)
class QuestionParts:
    """The parts of a question, and the words of its scope that each part's search
    carries ("Exim", "LilyPond")."""

    parts: tuple[str, ...]
    scope: str

    def queries(self) -> list[str]:
        """One search per part: the part, then the scope."""
        return [f"{part} {self.scope}".strip() for part in self.parts]


_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


def _heading_of(metadata: dict[str, object], title: str) -> str:
    """The heading a chunk sits under: its section path's last step, else its title."""
    section = metadata.get("section")
    if isinstance(section, str) and section.strip():
        return section.rsplit(">", 1)[-1]
    return title


def under_heading(part: str, chunks: list[tuple[str, dict[str, object], str]]) -> list[str]:
    """The chunk ids (of `(id, metadata, title)`, in order) whose heading holds every
    word of the part: a part asked for by name ("disabling IPv6") is explained under
    the heading that names it, and a page that merely mentions both words is not."""
    words = _WORDS.findall(unicodedata.normalize("NFKC", part).lower())
    if not words:
        return []
    named: list[str] = []
    for cid, metadata, title in chunks:
        heading = unicodedata.normalize("NFKC", _heading_of(metadata, title)).lower()
        if all(w in heading for w in words):
            named.append(cid)
    return named


def _scope_words(text: str) -> str:
    words = [w.strip("\"'`“”‘’()[]:;,.?!") for w in text.split()]
    kept = [w for w in words if w and w.lower() not in _FORM_WORDS]
    return " ".join(kept)


def _named_pair(text: str) -> QuestionParts | None:
    """Two names the question types, side by side with "and" (or と) between them."""
    names = named_identifiers(text)
    for first, second in pairwise(names):
        start = text.find(first)
        end = text.find(second, start + len(first)) if start >= 0 else -1
        if start < 0 or end < 0:
            continue
        if _JOIN.match(text[start + len(first) : end]):
            rest = text[:start] + " " + text[end + len(second) :]
            scope = _ja_scope(text[:start]) if has_cjk(text) else _scope_words(rest)
            return QuestionParts((first, second), scope)
    return None


def _english(text: str) -> QuestionParts | None:
    for pattern in (_EN_BOTH, _EN_ALSO, _EN_EACH):
        match = pattern.search(text)
        if match is None:
            continue
        a, b = match.group("a").strip(), match.group("b").strip()
        if pattern is not _EN_BOTH:
            # The first part starts after the clause's opening words.
            lead = _EN_LEAD.match(a)
            a = lead.group("rest").strip() if lead else a
        if not _usable(a) or not _usable(b):
            continue
        scope = _scope_words(text[: match.start("a")] + " " + text[match.end("b") :])
        return QuestionParts((a, b), scope)
    return _named_pair(text)


def _japanese(text: str) -> QuestionParts | None:
    quoted = _JA_QUOTED.search(text)
    if quoted is not None:
        a, b = quoted.group("a").strip(), quoted.group("b").strip()
        scope = _ja_scope(text[: quoted.start()])
        return QuestionParts((a, b), scope) if _usable(a) and _usable(b) else None
    if _JA_CUE.search(text) is None:
        return _named_pair(text)
    pair = _JA_PAIR.search(text)
    if pair is None:
        return None
    head = text[: pair.end("a")]
    split = _JA_SCOPE.match(head)
    if split is not None:
        scope, a = split.group("scope").strip(), split.group("a").strip()
    else:
        scope, a = "", pair.group("a").strip()
    b = pair.group("b").strip()
    if not _usable(a) or not _usable(b):
        return None
    return QuestionParts((a, b), scope)


def _ja_scope(head: str) -> str:
    """「XでAとB」: X, without its closing particle."""
    return re.sub(r"(?:の|で|では|において|について|、)\s*$", "", head).strip()


def _usable(part: str) -> bool:
    """A part worth a search of its own: some letters, not a whole sentence."""
    letters = sum(1 for c in part if c.isalnum())
    return letters >= 2 and len(part) <= 80


@lru_cache(maxsize=4096)
def question_parts(question: str) -> QuestionParts | None:
    """The two parts a question asks for one by one, or None when it does not say so."""
    text = unicodedata.normalize("NFKC", question).strip()
    # A question that names its parts is a sentence; the patterns' lazy spans are
    # quadratic in the length, so a long text (a pasted page) is not read for parts.
    if not text or len(text) > _MAX_CHARS:
        return None
    if has_cjk(text):
        return _japanese(text)
    return _english(text)
