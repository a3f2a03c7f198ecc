"""Which languages an embedder covers, and whether it covers a query.

An embedder trained on English text gives a Japanese query a vector of unknown-token
noise: fused into hybrid search it can only pull the lexical ranking down. So each
embedder says which languages it covers (`languages`: ISO 639-1 codes, or "*" for any),
and a store gives the dense side no weight for a query written in a script none of them
uses. Latin script is never held against an embedder: names and loanwords in Latin
letters are common in every language and every embedder reads them somewhat.

- `static` and `minilm` (distilled from, and being, all-MiniLM-L6-v2): English.
- `hash` (surface features): any language.
- `ollama:<model>`: the languages of a known multilingual model (bge-m3, ...), else
  English; `SIFT_OLLAMA_EMBED_LANGUAGES` ("ja,en", or "*") or the embedder's `languages`
  option declares them for any model.
- An embedder without a `languages` attribute (a user's own) is taken to cover every
  language, as before this existed.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from sift.text import Script, script_runs

__all__ = [
    "ANY_LANGUAGE",
    "OllamaEmbedSettings",
    "covers",
    "embedder_languages",
    "languages_of_model",
    "parse_languages",
]

ANY_LANGUAGE = "*"
ENGLISH: frozenset[str] = frozenset({"en"})

# Ollama embedding models trained on many languages (Japanese among them), by the name
# before the tag: `ollama pull bge-m3` is `ollama:bge-m3` or `ollama:bge-m3:567m`.
_MULTILINGUAL_OLLAMA = frozenset(
    {
        "bge-m3",
        "embeddinggemma",
        "granite-embedding:278m",
        "nomic-embed-text-v2-moe",
        "paraphrase-multilingual",
        "qwen3-embedding",
        "snowflake-arctic-embed2",
    }
)

# The languages a script is written in, for the scripts an English-only embedder cannot
# read (Latin, digits and punctuation are never held against an embedder).
_SCRIPT_LANGUAGES: dict[Script, frozenset[str]] = {
    "hiragana": frozenset({"ja"}),
    "katakana": frozenset({"ja"}),
    "han": frozenset({"zh", "ja", "ko"}),
    "hangul": frozenset({"ko"}),
    "thai": frozenset({"th"}),
    "lao": frozenset({"lo"}),
    "khmer": frozenset({"km"}),
    "myanmar": frozenset({"my"}),
    "cyrillic": frozenset({"ru", "uk", "bg", "sr", "be", "mk", "kk"}),
    "greek": frozenset({"el"}),
    "armenian": frozenset({"hy"}),
    "georgian": frozenset({"ka"}),
    "hebrew": frozenset({"he", "yi"}),
    "arabic": frozenset({"ar", "fa", "ur", "ps"}),
    "indic": frozenset({"hi", "mr", "ne", "bn", "pa", "gu", "or", "ta", "te", "kn", "ml", "si"}),
}


class OllamaEmbedSettings(BaseSettings):
    """`SIFT_OLLAMA_EMBED_LANGUAGES`: the languages of every `ollama:<model>` embedder
    ("ja,en", or "*" for a multilingual model), overriding the built-in list."""

    model_config = SettingsConfigDict(env_prefix="SIFT_OLLAMA_EMBED_", extra="ignore")

    languages: str | None = Field(default=None)


def parse_languages(value: str | Iterable[str]) -> frozenset[str]:
    """A set of language codes from "ja,en" / "*" / an iterable; ValueError when empty."""
    items = value.split(",") if isinstance(value, str) else list(value)
    codes = frozenset(code.strip().lower() for code in items if code.strip())
    if not codes:
        raise ValueError(
            f"languages {value!r} names no language; give ISO codes such as 'ja,en', "
            "or '*' for a multilingual model"
        )
    return frozenset({ANY_LANGUAGE}) if ANY_LANGUAGE in codes else codes


def languages_of_model(model: str) -> frozenset[str]:
    """The languages of an Ollama embedding model: configured, known, else English."""
    configured = OllamaEmbedSettings().languages
    if configured:
        return parse_languages(configured)
    name = model.lower().rsplit("/", 1)[-1]
    base = name.split(":", 1)[0]
    if name in _MULTILINGUAL_OLLAMA or base in _MULTILINGUAL_OLLAMA:
        return frozenset({ANY_LANGUAGE})
    return ENGLISH


def embedder_languages(embedder: object) -> frozenset[str]:
    """The languages `embedder` declares (`languages`), or every language when it
    declares none."""
    declared = getattr(embedder, "languages", None)
    if declared is None:
        return frozenset({ANY_LANGUAGE})
    return parse_languages(declared)


def covers(languages: frozenset[str], text: str) -> bool:
    """Whether an embedder of `languages` reads `text`: every script of its letters
    (Latin aside) is written in one of those languages."""
    if ANY_LANGUAGE in languages or text.isascii():
        return True
    for run in script_runs(text):
        needed = _SCRIPT_LANGUAGES.get(run.script)
        if needed is not None and not needed & languages:
            return False
    return True
