"""Real files of every format, written here: PDFs by reportlab (Japanese in Adobe's CID
font HeiseiMin-W3, and in an embedded TrueType IPA Gothic when Debian's
fonts-ipafont-gothic is installed), encrypted by pypdf; DOCX and PPTX by python-docx and
python-pptx."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

IPA_GOTHIC = Path("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf")

# What a Japanese IR report says; each page of a generated PDF holds a numbered copy.
JAPANESE_LINES = (
    "第3四半期の売上高は前年同期比12.5%増の4,820億円となりました。",
    "営業利益は半導体製造装置の需要回復により大幅に改善しました。",
)

PdfWriter = Callable[..., Path]


def _font(name: str) -> str:
    from reportlab.pdfbase import pdfmetrics

    if name == "HeiseiMin-W3":
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont

        pdfmetrics.registerFont(UnicodeCIDFont(name))
    elif name == "IPAGothic":
        from reportlab.pdfbase.ttfonts import TTFont

        if not IPA_GOTHIC.is_file():
            pytest.skip("Debian's fonts-ipafont-gothic is not installed (CI installs it)")
        pdfmetrics.registerFont(TTFont(name, str(IPA_GOTHIC)))
    return name


def write_pdf(
    path: Path,
    pages: Sequence[Sequence[str] | None],
    *,
    font: str = "Helvetica",
    title: str | None = None,
) -> Path:
    """A PDF with one page per entry: its lines of text, or (None) only a drawn image."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    path.parent.mkdir(parents=True, exist_ok=True)
    face = _font(font)
    pdf = canvas.Canvas(str(path))
    if title is not None:
        pdf.setTitle(title)
    for lines in pages:
        if lines is None:
            image = Image.new("RGB", (120, 60), (180, 40, 40))
            pdf.drawImage(ImageReader(image), 72, 600, 240, 120)
        else:
            pdf.setFont(face, 11)
            y = 780
            for line in lines:
                pdf.drawString(50, y, line)
                y -= 18
        pdf.showPage()
    pdf.save()
    return path


def encrypt_pdf(source: Path, target: Path, *, password: str) -> Path:
    from pypdf import PdfWriter as Writer

    writer = Writer(clone_from=source)
    writer.encrypt(password, owner_password="owner-secret", algorithm="AES-256")
    with target.open("wb") as handle:
        writer.write(handle)
    return target


def numbered_pages(count: int, marker: str = "Marker", filler: int = 0) -> list[list[str]]:
    """`count` pages, each naming its own number in English and Japanese, then `filler`
    lines of plain sentences (a full page of them is longer than one 512-token chunk)."""
    return [
        [
            f"{marker} page {n} of the annual report.",
            f"{n}ページ目: {JAPANESE_LINES[n % 2]}",
            *(
                f"Line {i} of page {n} says that revenue and costs moved as planned (p{n}x{i})."
                for i in range(filler)
            ),
        ]
        for n in range(1, count + 1)
    ]


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "統合報告書 2024"
    document.add_heading("統合報告書 2024", 0)
    document.add_paragraph("This report covers the fiscal year.")
    document.add_heading("Results", 1)
    document.add_paragraph("Revenue grew by twelve percent.")
    document.add_heading("売上高", 2)
    document.add_paragraph(JAPANESE_LINES[0])
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {
        (0, 0): "地域",
        (0, 1): "売上",
        (1, 0): "日本",
        (1, 1): "4,820",
    }.items():
        table.cell(row, col).text = text
    document.add_heading("Outlook", 1)
    document.add_paragraph("Demand for lithography tools recovers next year.")
    document.save(str(path))
    return path


def write_pptx(path: Path, slides: int = 3) -> Path:
    import pptx

    deck = pptx.Presentation()
    for n in range(1, slides + 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"スライド {n}: Topic {n}"
        slide.placeholders[1].text = f"Body of slide {n}. {JAPANESE_LINES[n % 2]}"
        slide.notes_slide.notes_text_frame.text = f"Speaker note {n}"
    deck.save(str(path))
    return path


@pytest.fixture
def pdf_writer() -> PdfWriter:
    return write_pdf
