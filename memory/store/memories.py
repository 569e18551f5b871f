"""The memory partitions in Chroma: one collection per user plus one shared domain collection.

Partitioning: every user's personal memories (``user_question`` and ``llm_response``) live in a
collection of their own, residual (domain) memories in one shared domain collection. A per-user
search therefore never pays for a ``where`` filter over everybody's memories, and a user can never
read another user's collection by construction. Collections are created in cosine space (by
:class:`~memory.store.client.StoreClient`), and :func:`~memory.store.client.distance_to_similarity`
is the one place a Chroma distance becomes a similarity.

With an encryption key (``MARK_ENCRYPTION_KEY``, :mod:`memory.crypto`) a record's text is sealed in
its Chroma document and opened when read; its vector and metadata stay in the clear, so search works.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from memory.config import Settings
from memory.crypto import TextCipher
from memory.embedder import Embedder
from memory.models import SHARED_USER, MemoryRecord
from memory.record_cache import RecordCache
from memory.record_layout import from_metadata, partition_for, to_metadata
from memory.store.client import StoreClient, checked, distance_to_similarity


def _records(got: Any, cipher: TextCipher) -> list[MemoryRecord]:
    """Records of a Chroma ``get`` result that included documents and metadatas."""
    docs, metas = got["documents"] or [], got["metadatas"] or []
    return [from_metadata(i, _text(cipher, d), dict(m)) for i, d, m in zip(got["ids"], docs, metas, strict=True)]


def _text(cipher: TextCipher, document: str) -> str:
    """A record's text from its Chroma document (opened when sealed)."""
    return cipher.unseal(document, "the memory store")


def _as_read(record: MemoryRecord) -> MemoryRecord:
    """The record as a read from Chroma would rebuild it (what the record cache must hold)."""
    return from_metadata(record.id, record.text, to_metadata(record))


class ChromaStore:
    """Records and their embeddings in Chroma, partitioned per user plus one domain partition."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        """Open the embedded store (taking the process lock) or connect to a Chroma server."""
        self.embedder = embedder
        self.prefix = settings.store.collection_prefix
        key = settings.store.encryption_key
        self.cipher = TextCipher(key.get_secret_value() if key is not None else None)
        # the one client of this process: the knowledge store (memory.store.knowledge) shares it
        self.client = StoreClient(settings, embedder)
        # server mode: other processes may write, so a cached record could be stale
        self.cache = RecordCache(settings.store.record_cache if self.mode == "embedded" else 0)

    @property
    def mode(self) -> str:
        """``embedded`` (a folder under this process's lock) or ``server`` (a Chroma server)."""
        return self.client.mode

    @property
    def location(self) -> str:
        """The embedded folder or the server URL."""
        return self.client.location

    @property
    def _client(self) -> ClientAPI:
        """The Chroma client itself (benchmarks time its calls)."""
        return self.client.api

    @property
    def caches_records(self) -> bool:
        """Whether reads are served from the record cache (Chroma then returns ids and distances only)."""
        return self.cache.capacity > 0

    def close(self) -> None:
        """Release the process lock."""
        self.cache.clear()
        self.client.close()

    # -- collections -------------------------------------------------------------------------
    def collection_name(self, partition: str) -> str:
        """Chroma-safe collection name of a partition (users are hashed, never spelled out)."""
        if partition == SHARED_USER:
            return f"{self.prefix}-domain"
        return f"{self.prefix}-u-{hashlib.sha256(partition.encode()).hexdigest()[:24]}"

    def _collection(self, partition: str, create: bool) -> Collection | None:
        return self.client.collection(
            self.collection_name(partition), create, metadata={"partition": partition, "mark": 1}
        )

    @checked
    def space(self, partition: str) -> str | None:
        """The distance space a partition's collection was created with."""
        return self.client.space(self.collection_name(partition))

    @checked
    def partitions(self) -> list[str]:
        """Every partition that has a collection (the domain partition plus each user)."""
        return sorted(str(meta["partition"]) for _, meta in self.client.collections() if "partition" in meta)

    # -- writes ------------------------------------------------------------------------------
    @checked
    def put(self, records: Sequence[MemoryRecord], embeddings: Sequence[Sequence[float]] | None = None) -> None:
        """Insert or replace records; embeddings are computed when not given."""
        if not records:
            return
        vectors = list(embeddings) if embeddings is not None else self.embedder.embed([r.text for r in records])
        by_partition: dict[str, list[int]] = {}
        for i, record in enumerate(records):
            by_partition.setdefault(partition_for(record.type, record.user_id), []).append(i)
        for partition, indexes in by_partition.items():
            collection = self._collection(partition, create=True)
            assert collection is not None
            collection.upsert(
                ids=[records[i].id for i in indexes],
                documents=[self.cipher.seal(records[i].text) for i in indexes],
                embeddings=np.asarray([vectors[i] for i in indexes], dtype=np.float32),
                metadatas=cast(Any, [to_metadata(records[i]) for i in indexes]),
            )
            self.cache.put(_as_read(records[i]) for i in indexes)

    @checked
    def update_metadata(self, records: Sequence[MemoryRecord]) -> None:
        """Rewrite records whose text did not change (no re-embedding), one call per partition."""
        by_partition: dict[str, list[MemoryRecord]] = {}
        for record in records:
            by_partition.setdefault(partition_for(record.type, record.user_id), []).append(record)
        for partition, group in by_partition.items():
            collection = self._collection(partition, create=True)
            assert collection is not None
            collection.update(ids=[r.id for r in group], metadatas=cast(Any, [to_metadata(r) for r in group]))
            self.cache.put(_as_read(r) for r in group)

    @checked
    def delete(self, records: Sequence[MemoryRecord]) -> None:
        """Remove records from the index (forgetting), one call per partition."""
        by_partition: dict[str, list[str]] = {}
        for record in records:
            by_partition.setdefault(partition_for(record.type, record.user_id), []).append(record.id)
        for partition, ids in by_partition.items():
            collection = self._collection(partition, create=False)
            if collection is not None:
                step = self.client.batch_size()
                for start in range(0, len(ids), step):
                    collection.delete(ids=ids[start : start + step])
            self.cache.drop(ids)

    @checked
    def scrub(self, ids: Sequence[str]) -> None:
        """After a forget: erase the copies an embedded Chroma keeps of deleted records' text (see ``scrub``)."""
        self.client.scrub(ids)

    @checked
    def drop_partition(self, partition: str) -> bool:
        """Delete an empty user partition's collection (its name holds the user id); False: absent or not empty."""
        if partition == SHARED_USER or self.count(partition):
            return False
        return self.client.drop(self.collection_name(partition))

    # -- reads -------------------------------------------------------------------------------
    @checked
    def get(self, memory_id: str, partitions: Iterable[str] | None = None) -> MemoryRecord | None:
        """A record by id, looked up in the given partitions (all when None)."""
        wanted = list(partitions) if partitions is not None else None
        cached = self.cache.get(memory_id) if self.caches_records else None
        if cached is not None and (wanted is None or partition_for(cached.type, cached.user_id) in wanted):
            return cached
        for partition in wanted if wanted is not None else self.partitions():
            collection = self._collection(partition, create=False)
            if collection is None:
                continue
            found = _records(collection.get(ids=[memory_id], include=["documents", "metadatas"]), self.cipher)
            if found:
                self.cache.put(found)
                return found[0]
        return None

    @checked
    def scan(self, partition: str, where: dict[str, Any] | None = None) -> list[MemoryRecord]:
        """All records of a partition matching ``where``."""
        collection = self._collection(partition, create=False)
        if collection is None:
            return []
        return _records(collection.get(where=where, include=["documents", "metadatas"]), self.cipher)

    @checked
    def vector(self, record: MemoryRecord) -> list[float] | None:
        """The stored embedding of a record."""
        collection = self._collection(partition_for(record.type, record.user_id), create=False)
        if collection is None:
            return None
        got = collection.get(ids=[record.id], include=["embeddings"])
        embeddings = got["embeddings"]
        return [float(x) for x in embeddings[0]] if embeddings is not None and len(embeddings) else None

    def query(
        self, partition: str, embedding: Sequence[float], n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[MemoryRecord, float]]:
        """Nearest records of a partition with their cosine similarity, best first."""
        return self.query_many(partition, [embedding], n, where)[0]

    @checked
    def query_many(
        self, partition: str, embeddings: Sequence[Sequence[float]], n: int, where: dict[str, Any] | None = None
    ) -> list[list[tuple[MemoryRecord, float]]]:
        """:meth:`query` for several vectors in one Chroma call."""
        collection = self._collection(partition, create=False)
        if collection is None or n <= 0 or not embeddings:
            return [[] for _ in embeddings]
        vectors = np.asarray(embeddings, dtype=np.float32)
        if not self.caches_records:
            got = collection.query(
                query_embeddings=vectors, n_results=n, where=where, include=["documents", "metadatas", "distances"]
            )
            out = []
            for k, ids in enumerate(got["ids"]):
                docs, metas = (got["documents"] or [])[k], (got["metadatas"] or [])[k]
                dists = (got["distances"] or [])[k]
                out.append(
                    [
                        (from_metadata(i, _text(self.cipher, d), dict(m)), distance_to_similarity(dist))
                        for i, d, m, dist in zip(ids, docs, metas, dists, strict=True)
                    ]
                )
            return out
        got = collection.query(query_embeddings=vectors, n_results=n, where=where, include=["distances"])
        records = self.cache.get_many(
            [i for ids in got["ids"] for i in ids],
            lambda missing: _records(collection.get(ids=missing, include=["documents", "metadatas"]), self.cipher),
        )
        return [
            [(records[i].pop(), distance_to_similarity(d)) for i, d in zip(ids, dists, strict=True) if i in records]
            for ids, dists in zip(got["ids"], got["distances"] or [], strict=True)
        ]

    @checked
    def count(self, partition: str) -> int:
        """Number of records in a partition."""
        collection = self._collection(partition, create=False)
        return 0 if collection is None else collection.count()
