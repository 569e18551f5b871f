"""One Chroma client per process: the embedded folder (under a process lock) or a Chroma server.

The memory partitions (:mod:`memory.store.memories`) and the knowledge base
(:mod:`memory.store.knowledge`) share this client, so one process holds one lock on an embedded
store and both kinds of collection obey the same rules: cosine space, mark's injected embedder, and
a Chroma error of an embedded store whose ``chroma.sqlite3`` SQLite finds damaged reported as a
:class:`~memory.store_health.DamagedStoreError` that says how to recover.
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

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
from memory.store.scrub import scrub_forgotten
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


class StoreClient:
    """The process's Chroma client, its collections by name, and (embedded) the folder's lock."""

    def __init__(self, settings: Settings, embedder: Embedder) -> None:
        """Open the embedded store (taking the process lock) or connect to a Chroma server."""
        self.prefix = settings.store.collection_prefix
        self._lock_handle: Any = None
        self._collections: dict[str, Collection] = {}
        self._function = MarkEmbeddingFunction(embedder)
        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if settings.store.chroma_url:
            self.mode = "server"
            self.location = settings.store.chroma_url
            self.api = _connect_server(settings.store.chroma_url, chroma_settings)
        else:
            self.mode = "embedded"
            self.location = str(settings.store_path)
            self._lock_handle = _take_lock(settings.store_path)
            try:
                self.api = _open_embedded(settings.store_path, chroma_settings)
            except BaseException:
                self._release_lock()
                raise

    def close(self) -> None:
        """Forget the collections and release the process lock."""
        self._collections.clear()
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None

    def collection(self, name: str, create: bool, metadata: dict[str, Any]) -> Collection | None:
        """The collection ``name`` (cosine space, mark's embedder); None when absent and not ``create``.

        ``metadata`` is only written when the collection is created.
        """
        if name in self._collections:
            return self._collections[name]
        if create:
            collection = self.api.get_or_create_collection(
                name,
                embedding_function=self._function,  # type: ignore[arg-type]
                configuration=cast(Any, {"hnsw": {"space": SPACE}}),
                metadata=metadata,
            )
        else:
            try:
                collection = self.api.get_collection(name, embedding_function=self._function)  # type: ignore[arg-type]
            except Exception:  # chromadb raises NotFoundError/ValueError by version
                return None
        self._collections[name] = collection
        return collection

    def drop(self, name: str) -> bool:
        """Delete the collection ``name`` with everything in it (Chroma deletes its log rows too); False: none."""
        if self.collection(name, create=False, metadata={}) is None:
            return False
        self._collections.pop(name, None)
        self.api.delete_collection(name)
        return True

    def scrub(self, ids: Sequence[str]) -> None:
        """After records were deleted (or their collection dropped), erase Chroma's copies of their text.

        Embedded store only (see :mod:`memory.store.scrub`); a Chroma server keeps its own files, which
        its operator vacuums.
        """
        if self.mode != "embedded":
            log.info("Chroma server: forgotten records are deleted; its files are the server operator's to vacuum")
            return
        scrub_forgotten(Path(self.location) / _DATABASE, ids)

    def space(self, name: str) -> str | None:
        """The distance space the collection ``name`` was created with (None: no such collection)."""
        collection = self.collection(name, create=False, metadata={})
        if collection is None:
            return None
        hnsw = (collection.configuration or {}).get("hnsw") or {}
        return str(hnsw.get("space")) if hnsw.get("space") else None

    def collections(self) -> list[tuple[str, dict[str, Any]]]:
        """Name and metadata of every collection of this store whose name starts with the prefix."""
        return [
            (c.name, dict(c.metadata or {}))
            for c in self.api.list_collections()
            if c.name.startswith(self.prefix + "-")
        ]

    def batch_size(self) -> int:
        """The most records one Chroma call may write."""
        return int(self.api.get_max_batch_size())

    def diagnose(self, exc: BaseException) -> None:
        """After Chroma failed with ``exc``: raise :class:`DamagedStoreError` if an embedded database is damaged."""
        if self.mode == "embedded":
            check_database(Path(self.location), exc)


class UsesClient(Protocol):
    """Anything that works through a :class:`StoreClient` (the memory and the knowledge store)."""

    client: StoreClient


_S = TypeVar("_S", bound=UsesClient)


def checked(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """Report a Chroma error of an embedded store whose database SQLite finds damaged as such."""

    @functools.wraps(method)
    def wrapper(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except ChromaError as exc:
            self.client.diagnose(exc)
            raise

    return wrapper


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


def _holder(text: str) -> str:
    """Who holds the lock, from the lock file's record ("pid 4242, since 2026-11-29T13:35:05+00:00")."""
    try:
        record = json.loads(text)
        return f"pid {int(record['pid'])}, since {record['since']}"
    except (ValueError, TypeError, KeyError):
        return f"pid {text.strip()}" if text.strip() else "pid unknown"


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
        owner = _holder(handle.read())
        handle.close()
        raise StoreInUseError(
            f"the store at {path} is in use by another process ({owner}); stop it, or run a Chroma "
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
