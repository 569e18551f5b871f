"""The write policy: the status a new memory starts in, the same for every entry point (CLI, agents, API). Pure."""

from __future__ import annotations

from memory import veracity
from memory.models import MemoryRecord, Source, Status
from memory.veracity import Risk, VeracityConfig


def initial_status(record: MemoryRecord, review: bool, cfg: VeracityConfig) -> Status:
    """Pending review when asked, for shared memory from anyone but an SME, and for shared memory under the gate.

    Domain knowledge from an untrusted source reaches other users only through a reviewer; a personal
    memory under the medium-risk veracity gate starts probationary (searchable at low risk only).
    """
    gate = veracity.threshold(Risk.MEDIUM, cfg)
    untrusted_shared = record.shared and record.source is not Source.SME
    if review or untrusted_shared or (record.shared and record.veracity < gate):
        return Status.PENDING_REVIEW
    return Status.ACTIVE if record.veracity >= gate else Status.PROBATIONARY
