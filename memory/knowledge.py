"""The knowledge base: a team's documents, cut into passages, searched beside memory (features K1, M5).

Knowledge is shared (not per user), read-only at answer time, and distinct from memory: memory
refines knowledge, never the reverse. :class:`KnowledgeBase` adds files (Markdown, plain text, HTML,
PDF), lists and removes sources, and searches passages by similarity with a relevance floor.

Write protocol of one file (:meth:`KnowledgeBase.add`):

1. every file of the call is read, parsed and cut into passages first; a bad file stops the call
   before anything is written;
2. the new version's passages are embedded and written (their ids carry the version, so they never
   overwrite the old version's); if that fails, whatever was written is deleted again;
3. the source's entry is set to the new version: the commit point (searches return passages of a
   source's current version only);
4. the change is audited (``knowledge_add`` / ``knowledge_replace``, with version and passage count);
5. the old version's passages are deleted.

A crash therefore never leaves a source without passages nor half a version searchable. Passages of a
version that is not current are deleted the next time the source is written, and
:meth:`KnowledgeBase.recover` (run when a knowledge base is opened with :meth:`KnowledgeBase.beside`)
audits a committed change whose event a crash lost. Removal deletes the entry first (the commit
point), audits, then deletes the passages.
"""

from __future__ import annotations

import builtins
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from mark.errors import InputError
from memory.audit import AuditBackend, Event, EventKind
from memory.config import KnowledgeConfig
from memory.knowledge_chunk import chunk_blocks
from memory.knowledge_models import (
    AddAction,
    EmptyFileError,
    KnowledgeAddResult,
    KnowledgeChunk,
    KnowledgeHit,
    KnowledgeSource,
    SourceFormat,
    UnknownSourceError,
    source_id,
)
from memory.knowledge_parse import ParsedDocument, read_document

if TYPE_CHECKING:  # the store loads chromadb, the embedder numpy: both only when a knowledge base opens
    from memory.embedder import Embedder
    from memory.store.knowledge import KnowledgeStore
    from memory.store.memories import ChromaStore

log = logging.getLogger(__name__)
KNOWLEDGE_EVENTS = frozenset({EventKind.KNOWLEDGE_ADD, EventKind.KNOWLEDGE_REPLACE, EventKind.KNOWLEDGE_REMOVE})
MAX_NAME = 200
MAX_K = 100
_DETAIL_KEYS = ("source", "path", "format", "version", "chunks", "pages")  # what a source's audit event records


class PreparedSource(BaseModel):
    """One file read and cut into passages, ready to be written."""

    model_config = ConfigDict(extra="forbid")

    name: str
    document: ParsedDocument
    chunks: list[KnowledgeChunk]


def embedding_text(chunk: KnowledgeChunk) -> str:
    """What is embedded for a passage: its heading path, then its text."""
    return f"{chunk.section}: {chunk.text}" if chunk.section else chunk.text


def check_name(name: str) -> str:
    """A source name as given, if it is one non-empty line of at most 200 characters."""
    if not name.strip() or "\n" in name or "\r" in name or len(name) > MAX_NAME:
        raise InputError(f"a knowledge source name must be one line of 1 to {MAX_NAME} characters, got {name!r}")
    return name


class KnowledgeBase:
    """Add, list, search and remove knowledge sources: a store, an embedder and the audit log."""

    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder,
        audit: AuditBackend,
        config: KnowledgeConfig | None = None,
        count: Callable[[str], int] | None = None,
        batch_size: int = 128,
    ) -> None:
        """Assemble a knowledge base; ``count`` counts tokens (the project's tiktoken counter by default)."""
        if count is None:
            from memory.tokens import count_tokens

            count = count_tokens
        self.store, self.embedder, self.audit = store, embedder, audit
        self.config = config or KnowledgeConfig()
        self.count = count
        self.batch_size = batch_size

    @classmethod
    def beside(
        cls, store: ChromaStore, audit: AuditBackend, config: KnowledgeConfig | None, now: datetime
    ) -> KnowledgeBase:
        """The knowledge base sharing an open memory store's client and embedder, its audit settled."""
        from memory.store.knowledge import KnowledgeStore

        base = cls(KnowledgeStore.beside(store), store.embedder, audit, config)
        base.recover(now)
        return base

    # -- writes ------------------------------------------------------------------------------
    def add(
        self, paths: Sequence[Path], source: str | None = None, *, now: datetime, actor: str = "cli"
    ) -> builtins.list[KnowledgeAddResult]:
        """Add (or replace, or leave unchanged) one source per file; ``source`` names a single file's source.

        Every file is checked before any is written: a bad one raises a
        :class:`~memory.knowledge_models.KnowledgeFileError` and nothing is added.
        """
        if not paths:
            raise InputError("name at least one file to add to the knowledge base")
        if source is not None and len(paths) != 1:
            raise InputError(f"a source name can only be given for one file, not {len(paths)}: add them one at a time")
        prepared = [self.prepare(Path(p), source if source is not None else Path(p).name) for p in paths]
        twice = sorted(name for name, n in Counter(p.name for p in prepared).items() if n > 1)
        if twice:
            raise InputError(f"several files would be the source {twice[0]!r}: add them one at a time with --source")
        return [self._write(p, now, actor) for p in prepared]

    def prepare(self, path: Path, name: str) -> PreparedSource:
        """Read, parse and cut one file into the passages of source ``name`` (nothing is written)."""
        document = read_document(path, self.config)
        passages = chunk_blocks(document.blocks, self.config.chunk_tokens, self.config.overlap_tokens, self.count)
        if not passages:
            advice = (
                "it may hold scanned pages only: add a copy with a text layer (OCR)"
                if document.format is SourceFormat.PDF
                else "add a file that has text"
            )
            raise EmptyFileError(path, "has no text after parsing", advice)
        sid, version = source_id(check_name(name)), document.version
        chunks = [
            KnowledgeChunk(
                id=f"{sid}-{version[:16]}-{i:06d}",
                source_id=sid,
                source=name,
                path=str(path.resolve()),
                section=p.section,
                version=version,
                index=i,
                page=p.page,
                text=p.text,
            )
            for i, p in enumerate(passages)
        ]
        return PreparedSource(name=name, document=document, chunks=chunks)

    def _write(self, prepared: PreparedSource, now: datetime, actor: str) -> KnowledgeAddResult:
        document, sid = prepared.document, source_id(prepared.name)
        current = self.store.source(sid)
        if current is not None and current.version == document.version:
            self._drop_other_versions(current)
            return KnowledgeAddResult(action=AddAction.UNCHANGED, source=current)
        entry = KnowledgeSource(
            id=sid,
            name=prepared.name,
            path=str(document.path.resolve()),
            format=document.format,
            version=document.version,
            chunks=len(prepared.chunks),
            pages=document.pages,
            bytes=document.bytes,
            revision=current.revision + 1 if current else 1,
            added_at=current.added_at if current else now,
            updated_at=now,
        )
        self._commit(prepared.chunks, entry)
        kind = EventKind.KNOWLEDGE_REPLACE if current else EventKind.KNOWLEDGE_ADD
        extra = {"previous_version": current.version} if current else {}
        self._audit([(kind, entry.id, entry.revision, {**_detail(entry), **extra})], now, actor)
        self._drop_other_versions(entry)
        log.info(
            "%s knowledge source %r: version %s, %d passage(s)",
            kind.value,
            entry.name,
            entry.version[:12],
            entry.chunks,
        )
        return KnowledgeAddResult(
            action=AddAction.REPLACED if current else AddAction.ADDED,
            source=entry,
            previous_version=current.version if current else None,
        )

    def _commit(self, chunks: Sequence[KnowledgeChunk], entry: KnowledgeSource) -> None:
        """Embed and write the passages in batches, then make ``entry`` current; on failure, delete them again."""
        written: builtins.list[str] = []
        try:
            for start in range(0, len(chunks), self.batch_size):
                part = chunks[start : start + self.batch_size]
                vectors = self.embedder.embed([embedding_text(c) for c in part])
                self.store.put_chunks(part, vectors)
                written.extend(c.id for c in part)
            self.store.put_source(entry)
        except BaseException:
            log.warning("adding %r failed: deleting the %d passage(s) already written", entry.name, len(written))
            self.store.delete_chunks(written)
            raise

    def _drop_other_versions(self, entry: KnowledgeSource) -> None:
        dropped = self.store.delete_versions(entry.id, keep=entry.version)
        if dropped:
            log.info("deleted %d passage(s) of %r that are not its current version", dropped, entry.name)

    def remove(self, name: str, *, now: datetime, actor: str = "cli") -> KnowledgeSource:
        """Remove a source and its passages; returns the entry it had."""
        entry = self.store.source(source_id(name))
        if entry is None:
            raise UnknownSourceError(f"no knowledge source named {name!r}: `mark knowledge list` shows them")
        self.store.delete_source(entry.id)
        self._audit([(EventKind.KNOWLEDGE_REMOVE, entry.id, entry.revision + 1, _detail(entry))], now, actor)
        dropped = self.store.delete_versions(entry.id)
        log.info("removed knowledge source %r (%d passage(s))", entry.name, dropped)
        return entry

    def _audit(self, changes: Sequence[tuple[EventKind, str, int, dict[str, Any]]], now: datetime, actor: str) -> None:
        """Append and commit one event (kind, source id, revision, detail) per change the store already holds."""
        rows = [(sid, kind, now, rev, actor, detail) for kind, sid, rev, detail in changes]
        self.audit.commit(self.audit.append_many(rows))

    def recover(self, now: datetime) -> int:
        """Audit the committed changes whose event a crash lost; returns how many events it appended.

        A source whose current version has no event gets a ``knowledge_add`` (or ``_replace``); a
        source whose entry is gone while its last event is not a removal gets a ``knowledge_remove``.
        Each such event's detail says ``recovered``.
        """
        current = {s.id: s for s in self.store.sources()}
        changes: builtins.list[tuple[EventKind, str, int, dict[str, Any]]] = []
        for sid in sorted(self.audit.memory_ids(EventKind.KNOWLEDGE_ADD) | set(current)):
            events = [e for e in self.audit.history(sid) if e.kind in KNOWLEDGE_EVENTS]
            last = events[-1] if events else None
            entry = current.get(sid)
            removed = last is None or last.kind is EventKind.KNOWLEDGE_REMOVE
            if entry is not None and (removed or (last is not None and last.detail.get("version") != entry.version)):
                kind = EventKind.KNOWLEDGE_ADD if removed else EventKind.KNOWLEDGE_REPLACE
                changes.append((kind, sid, entry.revision, {**_detail(entry), "recovered": True}))
            elif entry is None and last is not None and not removed:
                detail = {key: last.detail.get(key) for key in _DETAIL_KEYS}
                changes.append((EventKind.KNOWLEDGE_REMOVE, sid, last.rev + 1, {**detail, "recovered": True}))
        if changes:
            self._audit(changes, now, "recovery")
            log.info("audited %d knowledge change(s) whose event an interrupted write lost", len(changes))
        return len(changes)

    # -- reads -------------------------------------------------------------------------------
    def list(self) -> builtins.list[KnowledgeSource]:
        """Every source with its current version, passage count and when it was added, by name."""
        return self.store.sources()

    def source(self, name: str) -> KnowledgeSource:
        """One source by name."""
        entry = self.store.source(source_id(name))
        if entry is None:
            raise UnknownSourceError(f"no knowledge source named {name!r}: `mark knowledge list` shows them")
        return entry

    def history(self, name: str) -> builtins.list[Event]:
        """The audited changes of a source (also after it was removed), oldest first."""
        return [e for e in self.audit.history(source_id(name)) if e.kind in KNOWLEDGE_EVENTS]

    def search(
        self, query: str, k: int | None = None, min_similarity: float | None = None
    ) -> builtins.list[KnowledgeHit]:
        """The ``k`` passages most similar to ``query`` above the relevance floor, best first."""
        return self.search_many([query], k, min_similarity)[0]

    def search_many(
        self, queries: Sequence[str], k: int | None = None, min_similarity: float | None = None
    ) -> builtins.list[builtins.list[KnowledgeHit]]:
        """:meth:`search` for several queries (one embedding call, one Chroma call)."""
        if any(not q.strip() for q in queries):
            raise InputError("a knowledge search needs a non-empty query")
        if not queries:
            return []
        return self.search_vectors(self.embedder.embed(list(queries)), k, min_similarity)

    def relevant(self, queries: Sequence[str]) -> builtins.list[builtins.list[KnowledgeHit]]:
        """The passages an answer (or a fact check) gets for each query, best first.

        At most ``inject_k`` passages, each at least ``inject_min_similarity`` similar to its query and
        at most ``inject_margin`` below the best one, so a strong passage is not padded with weak ones.
        """
        if any(not q.strip() for q in queries):
            raise InputError("a knowledge search needs a non-empty query")
        if self.config.inject_k == 0 or not queries:
            return [[] for _ in queries]
        return self.relevant_vectors(self.embedder.embed(list(queries)))

    def relevant_vectors(self, vectors: Sequence[Sequence[float]]) -> builtins.list[builtins.list[KnowledgeHit]]:
        """:meth:`relevant` for query vectors already embedded (by the same embedder)."""
        cfg = self.config
        if cfg.inject_k == 0 or not vectors:
            return [[] for _ in vectors]
        found = self.search_vectors(vectors, cfg.inject_k, cfg.inject_min_similarity)
        return [[h for h in hits if h.similarity >= hits[0].similarity - cfg.inject_margin] for hits in found]

    def search_vectors(
        self, vectors: Sequence[Sequence[float]], k: int | None = None, min_similarity: float | None = None
    ) -> builtins.list[builtins.list[KnowledgeHit]]:
        """:meth:`search_many` for query vectors already embedded (by the same embedder)."""
        k = self.config.top_k if k is None else k
        if not 1 <= k <= MAX_K:
            raise InputError(f"k must be between 1 and {MAX_K}, got {k}")
        floor = self.config.min_similarity if min_similarity is None else min_similarity
        # twice k: passages of a version that is not current (an interrupted write) are dropped by the store
        found = self.store.query_many(vectors, 2 * k)
        return [[KnowledgeHit(chunk=c, similarity=s) for c, s in hits if s >= floor][:k] for hits in found]


def _detail(source: KnowledgeSource) -> dict[str, Any]:
    """The audit detail of a source (the keys of ``_DETAIL_KEYS``)."""
    return {
        "source": source.name,
        "path": source.path,
        "format": source.format.value,
        "version": source.version,
        "chunks": source.chunks,
        "pages": source.pages,
    }
