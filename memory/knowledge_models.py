"""The knowledge base's nouns: a source document, its passages (chunks), a search hit, and its errors.

Knowledge is a team's documents (guidelines, formularies, manuals) cut into passages and stored in
collections of their own, shared by every user and never mixed with memory: memory refines
knowledge, never the reverse. A source is versioned by the sha256 of its file's bytes, so re-adding
an unchanged file changes nothing and a changed file replaces its passages.

A passage's text is data, never instructions: it is kept on one line (the parsers collapse its
whitespace), so whoever shows it to a model quotes it like a memory and it cannot fake the layout
of a prompt.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from mark.errors import InputError, NotFoundError


class SourceFormat(str, Enum):
    """The file formats the knowledge base reads."""

    MARKDOWN = "markdown"
    TEXT = "text"
    HTML = "html"
    PDF = "pdf"


class AddAction(str, Enum):
    """What adding one file did to its source."""

    ADDED = "added"  # a new source
    REPLACED = "replaced"  # the file changed: its new passages replaced the old ones
    UNCHANGED = "unchanged"  # the same bytes as the stored version: nothing written


def source_id(name: str) -> str:
    """The stable id of the source called ``name`` (its audit events are filed under it)."""
    return "ks-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]


class KnowledgeSource(BaseModel):
    """One added document: where it came from, which version is stored, how many passages it has."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    path: str
    format: SourceFormat
    version: str  # sha256 of the file's bytes
    chunks: int
    pages: int | None = None  # PDF only
    bytes: int
    revision: int  # 1 when added, +1 for each replacement
    added_at: datetime
    updated_at: datetime


class KnowledgeChunk(BaseModel):
    """One passage of a source: a section's text (one line), with where it sits in the document."""

    model_config = ConfigDict(extra="forbid")

    id: str
    source_id: str
    source: str
    path: str
    section: str  # heading path such as "Dosage > Children"; "" when the document has no headings
    version: str
    index: int  # position of the passage in its source, from 0
    page: int | None = None  # 1-based page of a PDF
    text: str

    def citation(self) -> str:
        """Where the passage comes from, for a reader: ``source, section, p. N``."""
        parts = [self.source, self.section, f"p. {self.page}" if self.page is not None else ""]
        return ", ".join(p for p in parts if p)


class KnowledgeHit(BaseModel):
    """A passage found by a search, with its cosine similarity to the query."""

    model_config = ConfigDict(extra="forbid")

    chunk: KnowledgeChunk
    similarity: float


class KnowledgeAddResult(BaseModel):
    """What adding one file did: the source as stored now, and the version it replaced."""

    model_config = ConfigDict(extra="forbid")

    action: AddAction
    source: KnowledgeSource
    previous_version: str | None = None


class KnowledgeFileError(InputError):
    """A file that cannot become knowledge; the message names it and says what to do."""

    def __init__(self, path: Path, problem: str, advice: str) -> None:
        """``problem`` says what is wrong with ``path``, ``advice`` what to do about it."""
        super().__init__(f"{path}: {problem}: {advice}")
        self.path = path


class UnreadableFileError(KnowledgeFileError):
    """Missing, a folder, not readable, not text in UTF-8, an unknown format, or a malformed PDF."""


class EmptyFileError(KnowledgeFileError):
    """No text left after parsing (an empty file, markup only, a scanned PDF without a text layer)."""


class EncryptedFileError(KnowledgeFileError):
    """An encrypted PDF: refused, never decrypted."""


class FileTooLargeError(KnowledgeFileError):
    """Over the size or page limit of the settings."""


class UnknownSourceError(NotFoundError):
    """No knowledge source has that name."""
