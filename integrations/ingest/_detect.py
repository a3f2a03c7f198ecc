"""Is this text, and in which encoding? Binary content under a text name is refused.

Order of the checks, each of which decides:
1. a byte-order mark: UTF-8, UTF-16 or UTF-32, decoded strictly;
2. a known binary signature (ELF, PDF, ZIP/Office, images, ...) names what the file is;
3. a NUL byte: binary (UTF-16 without a BOM is refused here too, with a hint);
4. strict UTF-8;
5. strict Shift_JIS (CP932) and EUC-JP: of those that decode, the one whose text looks
   most like Japanese (kana and kanji, no half-width katakana soup) wins;
6. anything else is refused, naming the encodings tried.
Decoded text with more than a trace of control characters is binary as well.
"""

from __future__ import annotations

import codecs
import unicodedata
from pathlib import Path

from sift.integrations.ingest._results import SkipReason

__all__ = ["Refused", "decode_bytes", "looks_binary", "read_bytes", "read_text", "sniff_binary"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SIGNATURES = (
    (b"\x7fELF", "an ELF executable"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (DOCX, PPTX and XLSX files are ZIP archives too)"),
    (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "an OLE file (legacy Office, or a password-protected one)",
    ),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"SQLite format 3\x00", "a SQLite database"),
    (b"\xca\xfe\xba\xbe", "a Mach-O or Java class file"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"MZ\x90\x00", "a Windows executable"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
)
# Control characters a text file may hold: tab, newline, vertical tab, form feed, CR, ESC
# (terminal colour codes in logs).
_TEXT_CONTROLS = frozenset("\t\n\v\f\r\x1b")
# More control characters than this share of the text: not text.
_MAX_CONTROL_SHARE = 0.002


class Refused(Exception):
    """Content that is not text sift can read; `reason` is the report's category."""

    def __init__(self, reason: SkipReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def sniff_binary(head: bytes) -> str | None:
    """What a file is by its first bytes, when that is a known binary format."""
    for signature, name in _SIGNATURES:
        if head.startswith(signature):
            return name
    return None


def _control_share(text: str) -> float:
    if not text:
        return 0.0
    sample = text[:200_000]
    bad = sum(1 for c in sample if (c < " " and c not in _TEXT_CONTROLS) or "\x7f" <= c < "\xa0")
    return bad / len(sample)


def looks_binary(text: str) -> bool:
    """True when decoded text carries more than a trace of control characters."""
    return _control_share(text) > _MAX_CONTROL_SHARE


def _japanese_score(text: str) -> float:
    """How much decoded text looks like real (Japanese or ASCII) text: the share of
    characters that are ASCII, kana, kanji or full-width punctuation, with half-width
    katakana (what EUC-JP bytes look like read as Shift_JIS) counted against it."""
    sample = text[:50_000]
    if not sample:
        return 0.0
    good = bad = 0
    for c in sample:
        code = ord(c)
        # ASCII, CJK punctuation and kana, unified ideographs, full-width forms
        if (
            code < 0x80
            or 0x3000 <= code <= 0x30FF
            or 0x4E00 <= code <= 0x9FFF
            or (0xFF01 <= code <= 0xFF5E)
        ):
            good += 1
        elif 0xFF61 <= code <= 0xFF9F:
            bad += 1
        elif unicodedata.category(c).startswith("C"):
            bad += 2
    return (good - 2 * bad) / len(sample)


def decode_bytes(data: bytes, *, name: str = "text") -> tuple[str, str]:
    """(text, encoding) of a file's bytes, or Refused saying why they are not text."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise Refused(
                    "encoding",
                    f"starts with a {encoding} byte-order mark but is not valid "
                    f"{encoding} (byte {exc.start})",
                ) from None
            return _checked(text.lstrip("\ufeff"), encoding)
    kind = sniff_binary(data[:16])
    if kind is not None:
        raise Refused("binary content", f"binary content under a {name} name: this is {kind}")
    if b"\x00" in data[:1_000_000]:
        raise Refused(
            "binary content",
            "binary content (NUL bytes); if this is UTF-16 text, save it with a byte-order "
            "mark or as UTF-8",
        )
    try:
        return _checked(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    candidates: list[tuple[float, str, str]] = []
    for encoding in ("cp932", "euc_jp"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        candidates.append((_japanese_score(text), encoding, text))
    if candidates:
        score, encoding, text = max(candidates)
        if score > 0.5:
            return _checked(text, "shift_jis" if encoding == "cp932" else "euc-jp")
    raise Refused(
        "encoding",
        "not text in an encoding sift recognises (tried UTF-8, UTF-16/UTF-32 with a "
        "byte-order mark, Shift_JIS/CP932 and EUC-JP); convert it to UTF-8",
    )


def _checked(text: str, encoding: str) -> tuple[str, str]:
    if looks_binary(text):
        raise Refused(
            "binary content", f"binary content: decodes as {encoding} but is mostly control bytes"
        )
    return text, encoding


def read_bytes(path: Path, *, limit: int | None = None) -> bytes:
    """A file's bytes (the first `limit` of them), or Refused('unreadable') saying why."""
    try:
        with path.open("rb") as handle:
            return handle.read() if limit is None else handle.read(limit)
    except OSError as exc:
        raise Refused("unreadable", f"cannot read: {exc.strerror or exc}") from None


def read_text(path: Path) -> tuple[str, str]:
    """(text, encoding) of a text file, or Refused saying why it is not text."""
    data = read_bytes(path)
    if not data.strip():
        raise Refused("empty", "empty file")
    return decode_bytes(data, name=f"{path.suffix or 'text'}")
