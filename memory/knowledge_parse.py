"""Read a file into sections of paragraphs: Markdown, plain text, HTML (stdlib) and PDF (pypdf).

Each format becomes a list of :class:`Block`: a section's heading path (``"Dosage > Children"``),
the PDF page it is on, and its paragraphs, each paragraph on one line. Markdown and HTML headings
open sections; plain text has none; a PDF gives one block per page. HTML drops ``script``,
``style``, ``nav`` and the other elements that hold no reading text.

Bad input ends in a :class:`~memory.knowledge_models.KnowledgeFileError` that names the file and
what to do, checked before the work it saves: the size before the file is read, the encryption and
the page count before any page is parsed. An encrypted PDF is refused, never decrypted.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from memory.config import KnowledgeConfig
from memory.knowledge_models import (
    EncryptedFileError,
    FileTooLargeError,
    SourceFormat,
    UnreadableFileError,
)

log = logging.getLogger(__name__)
SUFFIXES = {
    ".md": SourceFormat.MARKDOWN,
    ".markdown": SourceFormat.MARKDOWN,
    ".txt": SourceFormat.TEXT,
    ".text": SourceFormat.TEXT,
    ".html": SourceFormat.HTML,
    ".htm": SourceFormat.HTML,
    ".pdf": SourceFormat.PDF,
}
SECTION_SEPARATOR = " > "
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SKIPPED_TAGS = {"script", "style", "nav", "head", "noscript", "template", "svg"}
_BLOCK_TAGS = {
    "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table", "section", "article", "main",
    "header", "footer", "aside", "blockquote", "pre", "figure", "figcaption", "hr", "form", "body",
}  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


class Block(BaseModel):
    """A run of paragraphs under one heading path (and, for a PDF, on one page)."""

    model_config = ConfigDict(extra="forbid")

    section: str
    page: int | None = None
    paragraphs: list[str]


class ParsedDocument(BaseModel):
    """A file's text as sections of one-line paragraphs, with its version and size."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    format: SourceFormat
    version: str  # sha256 of the file's bytes
    bytes: int
    pages: int | None = None
    blocks: list[Block]


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(text.split())


def format_of(path: Path) -> SourceFormat:
    """The format a file's suffix names; an unknown suffix is an :class:`UnreadableFileError`."""
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        known = " ".join(sorted(SUFFIXES))
        raise UnreadableFileError(
            path, f"unknown file type {path.suffix or '(no suffix)'!r}", f"convert it to one of {known}"
        )
    return found


def read_document(path: Path, config: KnowledgeConfig) -> ParsedDocument:
    """Check, read and parse one file (no store is touched)."""
    if not path.exists():
        raise UnreadableFileError(path, "no such file", "check the path")
    if path.is_dir():
        raise UnreadableFileError(path, "is a folder", "name the files in it (e.g. DIR/*.md)")
    fmt = format_of(path)
    data = _read_bytes(path, config)
    version = hashlib.sha256(data).hexdigest()
    pages: int | None = None
    if fmt is SourceFormat.PDF:
        blocks, pages = parse_pdf(path, data, config.max_pages)
    else:
        text = _decode(path, data)
        blocks = {SourceFormat.MARKDOWN: parse_markdown, SourceFormat.HTML: parse_html}.get(fmt, parse_text)(text)
    blocks = [b for b in blocks if b.paragraphs]
    log.debug("parsed %s (%s): %d section(s), %s page(s)", path, fmt.value, len(blocks), pages)
    return ParsedDocument(path=path, format=fmt, version=version, bytes=len(data), pages=pages, blocks=blocks)


def _read_bytes(path: Path, config: KnowledgeConfig) -> bytes:
    limit = int(config.max_file_mb * 1024 * 1024)
    try:
        size = path.stat().st_size
        if size > limit:
            raise FileTooLargeError(
                path,
                f"{_size(size)} is over the {config.max_file_mb:g} MB limit",
                "split it, or raise MARK_KNOWLEDGE_MAX_FILE_MB",
            )
        return path.read_bytes()
    except OSError as exc:
        raise UnreadableFileError(path, f"cannot be read ({exc.strerror})", "check its permissions") from exc


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data:
        raise UnreadableFileError(path, "holds binary data, not text", "add a text, Markdown, HTML or PDF file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(
            path, f"is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})", "convert it to UTF-8"
        ) from exc


def _paragraphs(lines: list[str]) -> list[str]:
    """Paragraphs (runs of non-blank lines) as one line each."""
    out: list[str] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line)
        elif current:
            out.append(one_line(" ".join(current)))
            current = []
    return out


def parse_text(text: str) -> list[Block]:
    """Plain text: paragraphs separated by blank lines, no sections."""
    return [Block(section="", paragraphs=_paragraphs(text.splitlines()))]


class _Sections:
    """Heading path bookkeeping shared by the Markdown and HTML parsers."""

    def __init__(self) -> None:
        self.path: list[tuple[int, str]] = []
        self.blocks: list[Block] = []
        self.lines: list[str] = []

    def flush(self) -> None:
        paragraphs = _paragraphs(self.lines)
        self.lines = []
        if paragraphs:
            section = SECTION_SEPARATOR.join(title for _, title in self.path)
            if self.blocks and self.blocks[-1].section == section:
                self.blocks[-1].paragraphs.extend(paragraphs)
            else:
                self.blocks.append(Block(section=section, paragraphs=paragraphs))

    def heading(self, level: int, title: str) -> None:
        self.flush()
        title = one_line(title)
        if not title:
            return
        self.path = [(lvl, t) for lvl, t in self.path if lvl < level]
        self.path.append((level, title))

    def done(self) -> list[Block]:
        self.flush()
        return self.blocks


def parse_markdown(text: str) -> list[Block]:
    """Markdown: ATX (``#``) and setext (underlined) headings open sections; fenced code stays text.

    A YAML front matter block (``---`` ... ``---`` at the very top) and HTML comments outside fenced
    code (``<!-- ... -->``, which a Markdown reader never sees) are dropped.
    """
    lines = text.splitlines()
    if lines and lines[0].strip() == "---" and "---" in (line.strip() for line in lines[1:]):
        lines = lines[[line.strip() for line in lines].index("---", 1) + 1 :]
    sections = _Sections()
    fence: str | None = None
    commented = False
    for raw in lines:
        line = raw
        if fence is None:
            line, commented = _uncomment(raw, commented)
            if commented and not line.strip():
                continue
        opened = _FENCE.match(line)
        if fence is not None:  # inside fenced code: text, never headings; the fences themselves are dropped
            if opened and opened.group(1) == fence:
                fence = None
            else:
                sections.lines.append(line)
            continue
        if opened:
            fence = opened.group(1)
            continue
        atx = _ATX.match(line)
        if atx:
            sections.heading(len(atx.group(1)), atx.group(2) or "")
            continue
        setext = _SETEXT.match(line)
        if setext:  # underlines a heading, or (after a blank line) a thematic break with no text
            if sections.lines and sections.lines[-1].strip():
                sections.heading(1 if setext.group(1)[0] == "=" else 2, sections.lines.pop())
            continue
        sections.lines.append(line)
    return sections.done()


def _uncomment(line: str, inside: bool) -> tuple[str, bool]:
    """``line`` without its HTML comment spans, and whether a comment is still open at its end."""
    kept: list[str] = []
    rest = line
    while rest:
        if inside:
            end = rest.find("-->")
            if end < 0:
                return "".join(kept), True
            rest, inside = rest[end + 3 :], False
        else:
            start = rest.find("<!--")
            if start < 0:
                kept.append(rest)
                break
            kept.append(rest[:start])
            rest, inside = rest[start + 4 :], True
    return "".join(kept), inside


class _HtmlText(HTMLParser):
    """Collects the reading text of an HTML page, block by block, under its heading path."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections = _Sections()
        self._skipping: list[str] = []
        self._heading: tuple[int, list[str]] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping.append(tag)
        elif self._skipping:
            return
        elif tag in _HEADINGS:
            self._end_line()
            self._heading = (_HEADINGS[tag], [])
        elif tag in _BLOCK_TAGS:
            self._end_line()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._skipping and tag in _BLOCK_TAGS:
            self._end_line()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            if tag in self._skipping:  # close it and anything left open inside it
                del self._skipping[len(self._skipping) - 1 - self._skipping[::-1].index(tag) :]
            return
        if self._skipping:
            return
        if tag in _HEADINGS and self._heading is not None:
            level, words = self._heading
            self._heading = None
            self.sections.heading(level, " ".join(words))
        elif tag in _BLOCK_TAGS:
            self._end_line()

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._heading is not None:
            self._heading[1].append(data)
        else:
            self._text.append(data)

    def _end_line(self) -> None:
        line = one_line("".join(self._text))
        self._text = []
        self.sections.lines.extend([line, ""] if line else [])

    def blocks(self) -> list[Block]:
        self._end_line()
        return self.sections.done()


def parse_html(text: str) -> list[Block]:
    """HTML: ``h1``-``h6`` open sections, block elements end paragraphs, non-reading elements are dropped."""
    parser = _HtmlText()
    parser.feed(text)
    parser.close()
    return parser.blocks()


class _ToDebug(logging.Handler):
    """Passes pypdf's warnings about a malformed file on to mark's log at DEBUG (never to the screen)."""

    def emit(self, record: logging.LogRecord) -> None:
        log.debug("pypdf: %s", record.getMessage())


@contextmanager
def _pypdf_warnings_quiet() -> Iterator[None]:
    logger = logging.getLogger("pypdf")
    handler, propagate = _ToDebug(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def parse_pdf(path: Path, data: bytes, max_pages: int) -> tuple[list[Block], int]:
    """A PDF's text layer (pypdf), one block per page; returns the blocks and the page count."""
    from pypdf import PdfReader

    with _pypdf_warnings_quiet():
        try:
            reader = PdfReader(io.BytesIO(data))
            encrypted = reader.is_encrypted
            pages = 0 if encrypted else len(reader.pages)
        except Exception as exc:  # pypdf raises many types for a malformed file
            raise UnreadableFileError(
                path, f"is not a readable PDF ({exc})", "re-export it from its source application"
            ) from exc
        if encrypted:
            raise EncryptedFileError(path, "is an encrypted PDF", "add an unencrypted copy (mark never decrypts)")
        if pages > max_pages:
            raise FileTooLargeError(
                path, f"{pages} pages is over the {max_pages}-page limit", "split it, or raise MARK_KNOWLEDGE_MAX_PAGES"
            )
        blocks: list[Block] = []
        for number, page in enumerate(reader.pages, start=1):
            try:
                text = page.extract_text()
            except Exception as exc:  # a damaged page: pypdf raises many types
                raise UnreadableFileError(
                    path, f"page {number} cannot be read ({exc})", "re-export it from its source application"
                ) from exc
            blocks.append(Block(section="", page=number, paragraphs=_paragraphs(text.splitlines())))
    return blocks, pages
