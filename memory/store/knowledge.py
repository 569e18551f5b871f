"""The knowledge base in Chroma: a passages collection and a sources collection, apart from memory.

``<prefix>-knowledge`` holds every passage of every source (shared by all users: knowledge is not
personal), with its source, section, page and the version (sha256 of the file) it was cut from.
``<prefix>-knowledge-sources`` holds one entry per source naming its *current* version: writing
that entry is the commit point of an add or a replacement, and deleting it the commit point of a
removal. Passages of any other version (a replacement or removal cut short) are never returned by
:meth:`KnowledgeStore.query` and are deleted the next time their source is written.

Neither collection carries a ``partition`` entry, so the memory store never lists them as memory
partitions. Both share the process's :class:`~memory.store.client.StoreClient` (one lock, embedded
or server mode, cosine space), and similarities come from
:func:`~memory.store.client.distance_to_similarity` like every other.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from chromadb.api.models.Collection import Collection

from memory.knowledge_models import KnowledgeChunk, KnowledgeSource, SourceFormat
from memory.store.client import StoreClient, checked, distance_to_similarity

if TYPE_CHECKING:
    from memory.store.memories import ChromaStore

# the sources collection is read by id, never searched: each entry gets this one-dimensional vector
_ENTRY_VECTOR = [1.0]


def _chunk_metadata(chunk: KnowledgeChunk) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "source_id": chunk.source_id,
        "source": chunk.source,
        "path": chunk.path,
        "section": chunk.section,
        "version": chunk.version,
        "index": chunk.index,
    }
    if chunk.page is not None:
        meta["page"] = chunk.page
    return meta


def _chunk(chunk_id: str, text: str, meta: dict[str, Any]) -> KnowledgeChunk:
    return KnowledgeChunk(
        id=chunk_id,
        source_id=str(meta["source_id"]),
        source=str(meta["source"]),
        path=str(meta["path"]),
        section=str(meta.get("section", "")),
        version=str(meta["version"]),
        index=int(meta["index"]),
        page=int(meta["page"]) if "page" in meta else None,
        text=text,
    )


def _source_metadata(source: KnowledgeSource) -> dict[str, Any]:
    meta: dict[str, Any] = source.model_dump(mode="json", exclude={"id", "pages"})
    if source.pages is not None:
        meta["pages"] = source.pages
    return meta


def _source(entry_id: str, meta: dict[str, Any]) -> KnowledgeSource:
    return KnowledgeSource(
        id=entry_id,
        name=str(meta["name"]),
        path=str(meta["path"]),
        format=SourceFormat(meta["format"]),
        version=str(meta["version"]),
        chunks=int(meta["chunks"]),
        pages=int(meta["pages"]) if "pages" in meta else None,
        bytes=int(meta["bytes"]),
        revision=int(meta["revision"]),
        added_at=datetime.fromisoformat(str(meta["added_at"])),
        updated_at=datetime.fromisoformat(str(meta["updated_at"])),
    )


def _chunks_of(got: Any) -> list[KnowledgeChunk]:
    docs, metas = got["documents"] or [], got["metadatas"] or []
    return [_chunk(i, d, dict(m)) for i, d, m in zip(got["ids"], docs, metas, strict=True)]


class KnowledgeStore:
    """Passages with their embeddings, and the sources' current versions, in two Chroma collections."""

    def __init__(self, client: StoreClient) -> None:
        """Use ``client`` (opened, and closed, by its owner: usually the memory store)."""
        self.client = client
        self.chunks_name = f"{client.prefix}-knowledge"
        self.sources_name = f"{client.prefix}-knowledge-sources"

    @classmethod
    def beside(cls, store: ChromaStore) -> KnowledgeStore:
        """The knowledge store sharing the memory store's client (and so its lock or server)."""
        return cls(store.client)

    def _passages(self, create: bool) -> Collection | None:
        return self.client.collection(self.chunks_name, create, metadata={"mark": 1, "knowledge": "passages"})

    def _sources(self, create: bool) -> Collection | None:
        return self.client.collection(self.sources_name, create, metadata={"mark": 1, "knowledge": "sources"})

    @checked
    def spaces(self) -> dict[str, str | None]:
        """The distance space of each knowledge collection (None: not created yet)."""
        return {name: self.client.space(name) for name in (self.chunks_name, self.sources_name)}

    # -- passages ----------------------------------------------------------------------------
    @checked
    def put_chunks(self, chunks: Sequence[KnowledgeChunk], embeddings: Sequence[Sequence[float]]) -> None:
        """Insert or replace passages with their embeddings."""
        if not chunks:
            return
        collection = self._passages(create=True)
        assert collection is not None
        step = self.client.batch_size()
        for start in range(0, len(chunks), step):
            part = chunks[start : start + step]
            collection.upsert(
                ids=[c.id for c in part],
                documents=[c.text for c in part],
                embeddings=np.asarray(embeddings[start : start + step], dtype=np.float32),
                metadatas=cast(Any, [_chunk_metadata(c) for c in part]),
            )

    @checked
    def delete_chunks(self, ids: Sequence[str]) -> None:
        """Delete passages by id (ids that do not exist are ignored)."""
        collection = self._passages(create=False)
        if collection is None or not ids:
            return
        step = self.client.batch_size()
        for start in range(0, len(ids), step):
            collection.delete(ids=list(ids[start : start + step]))

    @checked
    def delete_versions(self, source_id: str, keep: str | None = None) -> int:
        """Delete a source's passages of every version but ``keep`` (all when None); returns how many."""
        collection = self._passages(create=False)
        if collection is None:
            return 0
        where: dict[str, Any] = {"source_id": source_id}
        if keep is not None:
            where = {"$and": [where, {"version": {"$ne": keep}}]}
        ids = collection.get(where=cast(Any, where), include=[])["ids"]
        self.delete_chunks(ids)
        return len(ids)

    @checked
    def chunks(self, source_id: str, version: str | None = None) -> list[KnowledgeChunk]:
        """A source's passages (of one version, or all), in document order."""
        collection = self._passages(create=False)
        if collection is None:
            return []
        where: dict[str, Any] = {"source_id": source_id}
        if version is not None:
            where = {"$and": [where, {"version": version}]}
        got = collection.get(where=cast(Any, where), include=["documents", "metadatas"])
        return sorted(_chunks_of(got), key=lambda c: (c.version, c.index))

    @checked
    def count(self) -> int:
        """Number of stored passages (every version)."""
        collection = self._passages(create=False)
        return 0 if collection is None else collection.count()

    def query(self, embedding: Sequence[float], n: int) -> list[tuple[KnowledgeChunk, float]]:
        """The ``n`` passages nearest to ``embedding`` with their cosine similarity, best first."""
        return self.query_many([embedding], n)[0]

    @checked
    def query_many(self, embeddings: Sequence[Sequence[float]], n: int) -> list[list[tuple[KnowledgeChunk, float]]]:
        """:meth:`query` for several vectors in one Chroma call.

        Only passages of each source's current version are returned, so a list may be shorter than
        ``n`` after a write was cut short.
        """
        collection = self._passages(create=False)
        if collection is None or n <= 0 or not embeddings:
            return [[] for _ in embeddings]
        got = collection.query(
            query_embeddings=np.asarray(embeddings, dtype=np.float32),
            n_results=n,
            include=["documents", "metadatas", "distances"],
        )
        found: list[list[tuple[KnowledgeChunk, float]]] = []
        for k, ids in enumerate(got["ids"]):
            docs, metas, dists = (got["documents"] or [])[k], (got["metadatas"] or [])[k], (got["distances"] or [])[k]
            found.append(
                [
                    (_chunk(i, d, dict(m)), distance_to_similarity(dist))
                    for i, d, m, dist in zip(ids, docs, metas, dists, strict=True)
                ]
            )
        current = {s.id: s.version for s in self.sources({c.source_id for hits in found for c, _ in hits})}
        return [[(c, s) for c, s in hits if current.get(c.source_id) == c.version] for hits in found]

    # -- sources -----------------------------------------------------------------------------
    @checked
    def put_source(self, source: KnowledgeSource) -> None:
        """Record ``source`` as current (the commit point of an add or a replacement)."""
        collection = self._sources(create=True)
        assert collection is not None
        collection.upsert(
            ids=[source.id],
            documents=[source.name],
            embeddings=np.asarray([_ENTRY_VECTOR], dtype=np.float32),
            metadatas=cast(Any, [_source_metadata(source)]),
        )

    @checked
    def source(self, source_id: str) -> KnowledgeSource | None:
        """The current entry of one source (None: no such source)."""
        found = self.sources([source_id])
        return found[0] if found else None

    @checked
    def sources(self, ids: Sequence[str] | set[str] | None = None) -> list[KnowledgeSource]:
        """The entries of the given sources (every source when None), by name."""
        collection = self._sources(create=False)
        if collection is None or (ids is not None and not ids):
            return []
        got = collection.get(ids=list(ids) if ids is not None else None, include=["metadatas"])
        metas = got["metadatas"] or []
        return sorted((_source(i, dict(m)) for i, m in zip(got["ids"], metas, strict=True)), key=lambda s: s.name)

    @checked
    def delete_source(self, source_id: str) -> None:
        """Forget a source's entry (the commit point of a removal: its passages stop being returned)."""
        collection = self._sources(create=False)
        if collection is not None:
            collection.delete(ids=[source_id])
