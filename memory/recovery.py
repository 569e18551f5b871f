"""Crash recovery of the write protocol: settle the audit events a crash left uncommitted.

Every write is logged uncommitted, applied to the store, then committed (:meth:`memory.engine.MemoryEngine.apply`).
On open, each uncommitted event is rolled forward when the store has its change (the memory at that
revision or later; for a forget, no memory left) and discarded when it has not. A forget whose store
delete happened but whose text scrubbing did not is finished here (:func:`memory.forgetting.erase_text`).
After recovery there is no memory without its creation event and no event for a change that never happened.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memory.audit import EventKind

if TYPE_CHECKING:
    from memory.engine import MemoryEngine

log = logging.getLogger(__name__)


def recover(engine: MemoryEngine) -> dict[str, int]:
    """Roll forward or discard every uncommitted event; returns how many were committed and discarded."""
    keep: list[int] = []
    drop: list[int] = []
    forgotten: list[str] = []
    for event in engine.audit.pending():
        record = engine.store.get(event.memory_id)
        if event.kind is EventKind.FORGET:
            (keep if record is None else drop).append(event.seq)
            forgotten += [event.memory_id] if record is None else []
        elif record is not None and record.revision >= event.rev:
            keep.append(event.seq)
        else:
            drop.append(event.seq)
    if forgotten:
        from memory.forgetting import erase_text

        erase_text(engine, forgotten)
    engine.audit.commit(keep)
    engine.audit.discard(drop)
    if keep or drop:
        log.info(
            "recovered interrupted writes: %d event(s) committed (the store has them), %d discarded (it has not)",
            len(keep),
            len(drop),
        )
    return {"committed": len(keep), "discarded": len(drop)}
