"""What a vote may do (spec M6, M7, S7, V2): feedback weighted by the voter's role, and confirmation.

A vote says a memory is correct or incorrect; who says it (:class:`~memory.models.VoterRole`)
decides what it may change:

* A **counted** vote moves the counters, the feedback score FS, confidence (seed 001 S7: +thumbs_up,
  -thumbs_down), trust TS and persistence PS (MARK appendix 1), as every vote did before roles.
* A "correct" vote is also a **confirmation** (VeriMem V2 with F = 1): ``V' = kappa * V(now) +
  (1 - kappa) * 1``, scored at ``now``; a probationary memory whose V' reaches the medium-risk gate
  becomes active. The same confirmation serves a restatement (``conflicts.merge_into``) and the
  re-check (``memory.recheck``).
* An "incorrect" vote from an SME or a reviewer is a trusted fact-check with F = 0 as well:
  ``V' = kappa * V(now)``.
* An "incorrect" vote from a user or an anonymous voter on a *shared SME memory* is a **dispute**:
  audited, but not counted, so it moves no score and can never prune domain knowledge; the
  ``review_after_disputes``-th dispute since the memory was last reviewed sends it to review.

Everything here is pure: records are changed in place and the audit detail is returned; the engine
writes both through its log.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from memory import trust, veracity
from memory.audit import Event, EventKind
from memory.models import SEARCHABLE, MemoryRecord, Source, Status, VoterRole
from memory.scoring import feedback_score
from memory.veracity import FactCheck, Risk, VeracityConfig

if TYPE_CHECKING:
    from memory.engine_config import EngineConfig

TRUSTED_ROLES = frozenset({VoterRole.SME, VoterRole.REVIEWER})
REVIEW_RESETS = frozenset({EventKind.REVIEW, EventKind.EDIT})


class VoteEffect(StrEnum):
    """Whether a vote counts in the scores, or is a dispute that only a reviewer can settle."""

    COUNTED = "counted"
    DISPUTE = "dispute"


def effect(record: MemoryRecord, correct: bool, role: VoterRole) -> VoteEffect:
    """A user's or anonymous "incorrect" on shared SME memory is a dispute; every other vote counts."""
    untrusted = role not in TRUSTED_ROLES
    if not correct and untrusted and record.shared and record.source is Source.SME:
        return VoteEffect.DISPUTE
    return VoteEffect.COUNTED


def disputes_since_review(history: Sequence[Event]) -> int:
    """Disputes in a memory's history after its last review (an approval or edit settles them)."""
    count = 0
    for event in history:
        if event.kind in REVIEW_RESETS:
            count = 0
        elif event.kind is EventKind.FEEDBACK and event.detail.get("effect") == VoteEffect.DISPUTE.value:
            count += 1
    return count


def confirm(record: MemoryRecord, now: datetime, cfg: VeracityConfig, fact_check: float) -> dict[str, Any]:
    """Re-score ``record``'s veracity at ``now`` with a fact-check F; returns the audit detail.

    ``V' = kappa * V(now) + (1 - kappa) * F`` and ``veracity_at = now``, so the temporal decay starts
    again from the confirmation. A probationary memory whose V' reaches the medium-risk gate is
    promoted to active; any other status is left to its owner (a pending memory waits for a reviewer).
    """
    before = veracity.current(record, now, cfg)
    record.veracity = veracity.recheck(before, fact_check, cfg)
    record.veracity_at = now
    detail: dict[str, Any] = {"F": float(fact_check), "veracity_before": before, "veracity_after": record.veracity}
    if record.status is Status.PROBATIONARY and record.veracity >= veracity.threshold(Risk.MEDIUM, cfg):
        record.status = Status.ACTIVE
        detail["status"] = Status.ACTIVE.value
    return detail


def _count(record: MemoryRecord, correct: bool, cfg: EngineConfig) -> None:
    """The counted part of a vote: counters, confidence, FS, TS and PS (MARK appendix 1)."""
    if correct:
        record.validated_correct += 1
        record.confidence = min(1.0, record.confidence + cfg.thumbs_up)
    else:
        record.validated_incorrect += 1
        record.confidence = max(0.0, record.confidence - cfg.thumbs_down)
    total = max(record.recall_count, record.validated_correct + record.validated_incorrect)
    record.feedback_score = feedback_score(record.validated_correct, record.validated_incorrect)
    record.trust = trust.next_trust(record.trust, record.validated_correct, total, cfg.trust)
    record.persistence = trust.persistence(total, record.validated_incorrect, cfg.trust)


def apply_vote(
    record: MemoryRecord,
    correct: bool,
    role: VoterRole,
    history: Sequence[Event],
    now: datetime,
    cfg: EngineConfig,
) -> dict[str, Any]:
    """Apply one vote to ``record`` (in place) and return the FEEDBACK event's detail. Pure.

    ``history`` is the memory's audited history before this vote (for the dispute count).
    """
    kind = effect(record, correct, role)
    detail: dict[str, Any] = {"correct": correct, "role": role.value, "effect": kind.value}
    if kind is VoteEffect.DISPUTE:
        disputes = disputes_since_review(history) + 1
        detail["disputes"] = disputes
        if disputes >= cfg.review_after_disputes and record.status in SEARCHABLE:
            record.status = Status.PENDING_REVIEW
            detail["status"] = Status.PENDING_REVIEW.value
            detail["reason"] = f"{disputes} 'incorrect' votes from users on a shared SME memory"
        return detail
    _count(record, correct, cfg)
    detail |= {"trust": record.trust, "persistence": record.persistence}
    if correct:
        detail |= confirm(record, now, cfg.veracity, FactCheck.CONFIRM)
    elif role in TRUSTED_ROLES:
        detail |= confirm(record, now, cfg.veracity, FactCheck.CONTRADICT)
    return detail
