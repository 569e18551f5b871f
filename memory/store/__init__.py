"""The Chroma store: the ONLY package that imports ``chromadb``.

- :mod:`memory.store.client`: the process's one Chroma client (embedded folder under a process
  lock, or a Chroma server), cosine space, and :func:`distance_to_similarity`, the one place a
  Chroma distance becomes a similarity.
- :mod:`memory.store.memories`: the memory partitions (one collection per user, one domain
  collection): :class:`ChromaStore`.
- :mod:`memory.store.knowledge`: the shared knowledge base's collections (passages and their
  sources), never mixed with memory: :class:`KnowledgeStore`.
"""

from __future__ import annotations

from memory.store.client import SPACE, StoreClient, distance_to_similarity
from memory.store.knowledge import KnowledgeStore
from memory.store.memories import ChromaStore
from memory.store_health import StoreError, StoreInUseError

__all__ = [
    "SPACE",
    "ChromaStore",
    "KnowledgeStore",
    "StoreClient",
    "StoreError",
    "StoreInUseError",
    "distance_to_similarity",
]
