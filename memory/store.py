"""The Chroma-backed memory store: the ONLY module that imports ``chromadb``.

Partitioning: every user's personal memories (``user_question`` and ``llm_response``) live in a
collection of their own, residual (domain) memories in one shared domain collection. A per-user
search therefore never pays for a ``where`` filter over everybody's memories, and a user can never
read another user's collection by construction. Collections are created in cosine space, and
:func:`distance_to_similarity` is the one place a Chroma distance becomes a similarity.

An embedded store whose ``chroma.sqlite3`` SQLite finds damaged fails with a
:class:`~memory.store_health.DamagedStoreError` that says how to recover; other Chroma errors keep
their traceback.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import chromadb
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import ChromaError

from memory.config import Settings
from memory.embedder import Embedder
from memory.models import SHARED_USER, MemoryRecord
from memory.record_cache import RecordCache
from memory.record_layout import from_metadata, partition_for, to_metadata
from memory.store_health import StoreError, StoreInUseError, damaged, sqlite_problem

log = logging.getLogger(__name__)
SPACE = "cosine"
_DATABASE = "chroma.sqlite3"
_P = ParamSpec("_P")
_R = TypeVar("_R")


def distance_to_similarity(distance: float) -> float:
    """Turn a Chroma cosine distance (1 - cos) into a cosine similarity, clamped to [-1, 1].

    Float32 rounding can put an identical text at a distance of -2e-7, i.e. a similarity above 1.
    """
    return min(1.0, max(-1.0, 1.0 - float(distance)))


class MarkEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma adapter around a mark :class:`~memory.embedder.Embedder`."""

    def __init__(self, embedder: Embedder) -> None:
        """Wrap ``embedder``."""
        self._embedder = embedder

    def __call__(self, input: Documents) -> Embeddings:
        """Embed documents for Chroma."""
        return [np.asarray(v, dtype=np.float32) for v in self._embedder.embed(list(input))]

    @staticmethod
    def name() -> str:
        """Registered name of this embedding function."""
        return "mark-embedder"

    def get_config(self) -> dict[str, Any]:
        """Serializable config (the embedder itself is injected, never persisted)."""
        return {"embedder": self._embedder.name}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MarkEmbeddingFunction:
        """Chroma calls this when it re-opens a collection; mark always injects its own embedder."""
        raise StoreError("mark collections must be opened through mark (the embedder is injected)")

    def default_space(self) -> str:  # type: ignore[override]
        """Cosine space."""
        return SPACE


def _records(got: Any) -> list[MemoryRecord]:
    """Records of a Chroma ``get`` result that included documents and metadatas."""
    docs, metas = got["documents"] or [], got["metadatas"] or []
    return [from_metadata(i, d, dict(m)) for i, d, m in zip(got["ids"], docs, metas, strict=True)]


def _as_read(record: MemoryRecord) -> MemoryRecord:
    """The record as a read from Chroma would rebuild it (what the record cache must hold)."""
    return from_metadata(record.id, record.text, to_metadata(record))


def _checked(method: Callable[Concatenate[ChromaStore, _P], _R]) -> Callable[Concatenate[ChromaStore, _P], _R]:
    """Report a Chroma error of an embedded store whose database SQLite finds damaged as such."""

    @functools.wraps(method)
    def checked(self: ChromaStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except ChromaError as exc:
            if self.mode == "embedded":
                check_database(Path(self.location), exc)
            raise

    return checked


def check_database(folder: Path, exc: BaseException) -> None:
    """After Chroma failed with ``exc``: raise :class:`DamagedStoreError` if SQLite finds its database damaged."""
    problem = sqlite_problem(folder / _DATABASE)
    if problem is not None:
        log.debug("damaged Chroma database %s: %s (Chroma said: %s)", folder / _DATABASE, problem, exc)
        raise damaged("memory store", folder / _DATABASE, problem, folder.parent) from exc


def _open_embedded(folder: Path, chroma_settings: ChromaSettings) -> ClientAPI:
    """The embedded Chroma client; a damaged database is a :class:`DamagedStoreError`."""
    try:
        return chromadb.PersistentClient(path=str(folder), settings=chroma_settings)
    except Exception as exc:
        # Chroma caches a client's system per folder even when it failed to start: drop it, so a
        # later open in this process (after the folder was restored) starts afresh
        getattr(SharedSystemClient, "_identifier_to_system", {}).pop(str(folder), None)
        check_database(folder, exc)
        raise


class ChromaStore:
    """Records and their embeddings in Chroma, partitioned per user plus one domain partition."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        """Open the embedded store (taking the process lock) or connect to a Chroma server."""
        self.embedder = embedder
        self.prefix = settings.store.collection_prefix
        self._lock_handle: Any = None
        self._collections: dict[str, Collection] = {}
        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if settings.store.chroma_url:
            self.mode = "server"
            self.location = settings.store.chroma_url
            self._client = _connect_server(settings.store.chroma_url, chroma_settings)
        else:
            self.mode = "embedded"
            self.location = str(settings.store_path)
            self._lock_handle = _take_lock(settings.store_path)
            try:
                self._client = _open_embedded(settings.store_path, chroma_settings)
            except BaseException:
                self._release_lock()
                raise
        self._function = MarkEmbeddingFunction(embedder)
        # server mode: other processes may write, so a cached record could be stale
        self.cache = RecordCache(settings.store.record_cache if self.mode == "embedded" else 0)

    @property
    def caches_records(self) -> bool:
        """Whether reads are served from the record cache (Chroma then returns ids and distances only)."""
        return self.cache.capacity > 0

    def close(self) -> None:
        """Release the process lock."""
        self._collections.clear()
        self.cache.clear()
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None

    # -- collections -------------------------------------------------------------------------
    def collection_name(self, partition: str) -> str:
        """Chroma-safe collection name of a partition (users are hashed, never spelled out)."""
        if partition == SHARED_USER:
            return f"{self.prefix}-domain"
        return f"{self.prefix}-u-{hashlib.sha256(partition.encode()).hexdigest()[:24]}"

    def _collection(self, partition: str, create: bool) -> Collection | None:
        name = self.collection_name(partition)
        if name in self._collections:
            return self._collections[name]
        if create:
            collection = self._client.get_or_create_collection(
                name,
                embedding_function=self._function,  # type: ignore[arg-type]
                configuration=cast(Any, {"hnsw": {"space": SPACE}}),
                metadata={"partition": partition, "mark": 1},
            )
        else:
            try:
                collection = self._client.get_collection(name, embedding_function=self._function)  # type: ignore[arg-type]
            except Exception:  # chromadb raises NotFoundError/ValueError by version
                return None
        self._collections[name] = collection
        return collection

    @_checked
    def space(self, partition: str) -> str | None:
        """The distance space a partition's collection was created with."""
        collection = self._collection(partition, create=False)
        if collection is None:
            return None
        hnsw = (collection.configuration or {}).get("hnsw") or {}
        return str(hnsw.get("space")) if hnsw.get("space") else None

    @_checked
    def partitions(self) -> list[str]:
        """Every partition that has a collection (the domain partition plus each user)."""
        names: list[str] = []
        for collection in self._client.list_collections():
            meta = collection.metadata or {}
            if collection.name.startswith(self.prefix + "-") and "partition" in meta:
                names.append(str(meta["partition"]))
        return sorted(names)

    # -- writes ------------------------------------------------------------------------------
    @_checked
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
                documents=[records[i].text for i in indexes],
                embeddings=np.asarray([vectors[i] for i in indexes], dtype=np.float32),
                metadatas=cast(Any, [to_metadata(records[i]) for i in indexes]),
            )
            self.cache.put(_as_read(records[i]) for i in indexes)

    @_checked
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

    @_checked
    def delete(self, records: Sequence[MemoryRecord]) -> None:
        """Remove records from the index (only used by recovery and forget-with-purge)."""
        for record in records:
            collection = self._collection(partition_for(record.type, record.user_id), create=False)
            if collection is not None:
                collection.delete(ids=[record.id])
            self.cache.drop([record.id])

    # -- reads -------------------------------------------------------------------------------
    @_checked
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
            found = _records(collection.get(ids=[memory_id], include=["documents", "metadatas"]))
            if found:
                self.cache.put(found)
                return found[0]
        return None

    @_checked
    def scan(self, partition: str, where: dict[str, Any] | None = None) -> list[MemoryRecord]:
        """All records of a partition matching ``where``."""
        collection = self._collection(partition, create=False)
        if collection is None:
            return []
        return _records(collection.get(where=where, include=["documents", "metadatas"]))

    @_checked
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

    @_checked
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
                        (from_metadata(i, d, dict(m)), distance_to_similarity(dist))
                        for i, d, m, dist in zip(ids, docs, metas, dists, strict=True)
                    ]
                )
            return out
        got = collection.query(query_embeddings=vectors, n_results=n, where=where, include=["distances"])
        records = self.cache.get_many(
            [i for ids in got["ids"] for i in ids],
            lambda missing: _records(collection.get(ids=missing, include=["documents", "metadatas"])),
        )
        return [
            [(records[i].pop(), distance_to_similarity(d)) for i, d in zip(ids, dists, strict=True) if i in records]
            for ids, dists in zip(got["ids"], got["distances"] or [], strict=True)
        ]

    @_checked
    def count(self, partition: str) -> int:
        """Number of records in a partition."""
        collection = self._collection(partition, create=False)
        return 0 if collection is None else collection.count()


def _connect_server(url: str, chroma_settings: ChromaSettings) -> ClientAPI:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    if parsed.scheme not in {"http", "https"} or not parsed.hostname:
        raise StoreError(f"MARK_CHROMA_URL={url!r} is not an http(s)://host:port URL")
    try:
        client = chromadb.HttpClient(
            host=parsed.hostname,
            port=parsed.port or (443 if parsed.scheme == "https" else 8000),
            ssl=parsed.scheme == "https",
            settings=chroma_settings,
        )
        client.heartbeat()
    except Exception as exc:  # connection errors come in several types
        raise StoreError(
            f"cannot reach the Chroma server at {url}: start it with `chroma run` or unset MARK_CHROMA_URL "
            f"({exc.__class__.__name__})"
        ) from exc
    return client


def _take_lock(path: Path) -> Any:
    try:
        path.mkdir(parents=True, exist_ok=True)
        handle = (path / ".mark.lock").open("a+")
    except OSError as exc:
        raise StoreError(
            f"data directory {path} is not writable ({exc.strerror}); set MARK_HOME to a writable folder"
        ) from exc
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise StoreInUseError(
            f"the store at {path} is in use by another process (pid {owner}); stop it, or run a Chroma "
            "server (`chroma run --path DIR`) and set MARK_CHROMA_URL so several processes can share it"
        ) from None
    handle.seek(0)
    previous = handle.read().strip()
    log.debug("took the store lock %s (last holder: %s)", path / ".mark.lock", previous or "none")
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "since": datetime.now(UTC).isoformat()}))
    handle.flush()
    return handle
