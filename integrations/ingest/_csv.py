"""CSV and TSV files: one document per file, each row a paragraph of `header: value`
lines, so that any chunk of it still says what each value is.

The first row is the header. The delimiter of a .csv is sniffed among `,` `;` tab and
`|` (a .tsv is tab-separated); the encoding is detected like any text file's. Empty
cells are left out; a row longer than the header names its extra cells `column N`.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from sift.integrations.ingest._detect import Refused, read_text
from sift.integrations.ingest._layout import TextBuilder
from sift.integrations.ingest._results import ExtractedFile
from sift.types import Document

__all__ = ["table_file"]

_SNIFF_DELIMITERS = ",;\t|"


def _dialect(text: str, tab: bool) -> type[csv.Dialect] | csv.Dialect:
    if tab:
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:20_000], delimiters=_SNIFF_DELIMITERS)
    except csv.Error:
        return csv.excel


def table_file(path: Path, doc_id: str, meta: dict[str, Any], source: str) -> ExtractedFile:
    text, encoding = read_text(path)
    tab = path.suffix.lower() == ".tsv"
    reader = csv.reader(io.StringIO(text, newline=""), _dialect(text, tab))
    out = TextBuilder()
    header: list[str] = []
    rows = 0
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if not header:
                header = [" ".join(cell.split()) or f"column {i + 1}" for i, cell in enumerate(row)]
                continue
            rows += 1
            out.block()
            for i, cell in enumerate(row):
                value = " ".join(cell.split())
                if value:
                    out.line()
                    out.write(f"{header[i] if i < len(header) else f'column {i + 1}'}: {value}")
    except csv.Error as exc:
        raise Refused(
            "malformed", f"malformed {'TSV' if tab else 'CSV'} at line {reader.line_num}: {exc}"
        ) from None
    if not rows:
        raise Refused("empty", "no rows under the header")
    return ExtractedFile(
        source,
        [
            Document(
                id=doc_id,
                title=path.stem,
                text=out.text(),
                metadata={
                    **meta,
                    "format": "tsv" if tab else "csv",
                    "encoding": encoding,
                    "rows": rows,
                },
            )
        ],
    )
