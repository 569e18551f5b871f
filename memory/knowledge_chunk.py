"""Cut a document's sections into overlapping passages of about ``chunk_tokens`` tokens.

A passage never crosses a section (or a PDF page), so its heading path and page are exact. Within
a section, whole paragraphs are packed into a passage while they fit; a paragraph too long for one
passage is cut at sentence ends, and a sentence too long at word boundaries. Each passage after the
first of a section starts with the last ``overlap_tokens`` of the one before it, so a fact that
straddles a cut is whole in one of the two.

Tokens are counted with the injected ``count`` (the project's tiktoken counter by default). A
passage's count is the sum of its pieces' counts, so it may differ from the count of the joined
text by a token or two per piece.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict

from memory.knowledge_parse import Block

Counter = Callable[[str], int]
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


class Passage(BaseModel):
    """One passage of a document before it is stored: its section, page and text (one line)."""

    model_config = ConfigDict(extra="forbid")

    section: str
    page: int | None = None
    text: str


def chunk_blocks(blocks: Sequence[Block], size: int, overlap: int, count: Counter) -> list[Passage]:
    """The passages of a document's blocks, in document order."""
    return [
        Passage(section=block.section, page=block.page, text=text)
        for block in blocks
        for text in chunk_paragraphs(block.paragraphs, size, overlap, count)
    ]


def chunk_paragraphs(paragraphs: Sequence[str], size: int, overlap: int, count: Counter) -> list[str]:
    """One section's paragraphs packed into passages of at most about ``size`` tokens, overlapping."""
    if not 0 <= overlap < size:
        raise ValueError(f"overlap ({overlap}) must be at least 0 and below the passage size ({size})")
    chunks: list[str] = []
    current: list[str] = []
    tokens = 0
    pieces = (piece for paragraph in paragraphs for piece in _pieces(paragraph, size, size - overlap, count))
    for text, n in pieces:
        if current and tokens + n > size:
            chunks.append(" ".join(current))
            tail = _tail(chunks[-1], tokens, overlap, count)
            tail_tokens = count(tail) if tail else 0
            current, tokens = ([tail], tail_tokens) if tail and tail_tokens + n <= size else ([], 0)
        current.append(text)
        tokens += n
    if current:
        chunks.append(" ".join(current))
    return chunks


def _pieces(paragraph: str, size: int, cut: int, count: Counter) -> Iterator[tuple[str, int]]:
    """A paragraph whole when it fits in ``size``, else its sentences of at most ``cut`` tokens.

    A longer sentence is cut into word windows of ``cut`` tokens (``size`` less the overlap, so the
    overlap fits in front of each).
    """
    n = count(paragraph)
    if n <= size:
        yield paragraph, n
        return
    for sentence in _SENTENCE_END.split(paragraph):
        m = count(sentence)
        if m <= cut:
            yield sentence, m
        else:
            yield from _windows(sentence.split(), m, cut, count)


def _windows(words: list[str], tokens: int, size: int, count: Counter) -> Iterator[tuple[str, int]]:
    """Consecutive runs of ``words`` of at most ``size`` tokens (a single longer word stays whole)."""
    per_word = max(tokens / max(len(words), 1), 1e-9)
    start = 0
    while start < len(words):
        take = max(1, int(size / per_word))
        piece = " ".join(words[start : start + take])
        n = count(piece)
        while n > size and take > 1:
            take = max(1, min(take - 1, take * size // n))
            piece = " ".join(words[start : start + take])
            n = count(piece)
        yield piece, n
        start += take


def _tail(chunk: str, tokens: int, overlap: int, count: Counter) -> str:
    """The last words of ``chunk`` (of about ``tokens`` tokens) that fit in ``overlap`` tokens; never all of it."""
    if overlap <= 0:
        return ""
    words = chunk.split()
    take = min(len(words) - 1, int(overlap * len(words) / max(tokens, 1)))
    while take > 0:
        tail = " ".join(words[-take:])
        if count(tail) <= overlap:
            return tail
        take -= 1
    return ""
