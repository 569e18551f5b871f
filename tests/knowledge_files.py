"""Real small documents for the knowledge tests: a PDF with a text layer written with pypdf's writer."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def _escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[str]], password: str | None = None) -> Path:
    """A PDF whose page i shows the lines ``pages[i]`` in Helvetica (RC4-encrypted when ``password`` is given)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        shown = " ".join(f"({_escaped(line)}) Tj T*" for line in lines)
        content = DecodedStreamObject()
        content.set_data(f"BT /F1 11 Tf 72 720 Td 14 TL {shown} ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(content)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if password is not None:
        writer.encrypt(user_password=password, algorithm="RC4-128")
    with path.open("wb") as handle:
        writer.write(handle)
    return path
