"""An in-process cache of records by id, for an embedded store that only this process writes.

Chroma's query is cheap when it returns ids and distances only and about four times dearer when it
also hydrates documents and metadata (every metadata key is a row of its SQLite index). An embedded
store is locked to one process, and every write goes through :class:`memory.store.ChromaStore`, which
updates this cache after each successful write, so a cached record is always the stored one. A Chroma
server can be written by other processes: the store never uses this cache in server mode.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable

from memory.models import MemoryRecord


def _detached(record: MemoryRecord) -> MemoryRecord:
    """A copy whose fields and metadata dict can be changed without touching the original.

    Provenance is frozen, so sharing it is safe; a shallow copy costs about a tenth of a deep one.
    """
    return record.model_copy(update={"metadata": dict(record.metadata)})


class RecordCache:
    """Least-recently-used records by id; ``capacity`` 0 keeps nothing."""

    def __init__(self, capacity: int) -> None:
        """Keep at most ``capacity`` records."""
        self.capacity = max(0, capacity)
        self._items: OrderedDict[str, MemoryRecord] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        """Number of records held."""
        return len(self._items)

    def __contains__(self, memory_id: object) -> bool:
        """Whether a record is held (does not count as a use)."""
        return memory_id in self._items

    def get(self, memory_id: str) -> MemoryRecord | None:
        """A detached copy of the cached record, or None."""
        record = self._items.get(memory_id)
        if record is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(memory_id)
        return _detached(record)

    def get_many(
        self, ids: list[str], fetch: Callable[[list[str]], list[MemoryRecord]]
    ) -> dict[str, list[MemoryRecord]]:
        """One detached copy per occurrence of each id: cached, or fetched in one call (then cached).

        Ids that ``fetch`` does not return are left out.
        """
        counts: dict[str, int] = {}
        for memory_id in ids:
            counts[memory_id] = counts.get(memory_id, 0) + 1
        found = {i: self._items[i] for i in counts if i in self._items}
        self.hits += len(found)
        missing = [i for i in counts if i not in found]
        self.misses += len(missing)
        if missing:
            fetched = fetch(missing)
            self.put(fetched)
            found.update((r.id, r) for r in fetched)
        for memory_id in found:
            if memory_id in self._items:
                self._items.move_to_end(memory_id)
        return {i: [_detached(r) for _ in range(counts[i])] for i, r in found.items()}

    def put(self, records: Iterable[MemoryRecord]) -> None:
        """Remember records as they are now stored (copies: later changes to them do not leak in)."""
        if not self.capacity:
            return
        for record in records:
            self._items[record.id] = _detached(record)
            self._items.move_to_end(record.id)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def drop(self, memory_ids: Iterable[str]) -> None:
        """Forget records (deleted, or a write whose outcome is unknown)."""
        for memory_id in memory_ids:
            self._items.pop(memory_id, None)

    def clear(self) -> None:
        """Forget everything."""
        self._items.clear()
