"""Veracity re-checks (VeriMem V2): which memories are due, what the evidence says, and applying it.

Veracity decays at read time (``veracity.current``): a user's preference falls under the
medium-risk threshold after about 70 days, an SME fact after about a year. A memory that is due
(searchable, veracity at ``now`` under the threshold) is re-checked, ``V' = kappa * V(now) + (1 -
kappa) * F``, never left to drop out of search silently. The trusted evidence is the knowledge base
(:mod:`memory.knowledge_check`) and what the memory's own record and audited history hold:

* ``knowledge``: a passage of the knowledge base states it;
* ``sme_source``: an SME said it; ``reviewer_approval``: a reviewer approved or edited it;
  ``correct_vote``: someone voted it correct; ``restatement``: a person stated it again (a MERGE).

A memory that a passage contradicts goes to a reviewer (REVIEW, with the passage in the reason), due
or not: :func:`plan` asks the knowledge base about every memory it is given, so adding a guideline
surfaces the memories it disagrees with at the next maintenance.

Evidence gives F = 1 (REFRESH), unless the counted votes are net "incorrect" (contested). Without
usable evidence a shared memory goes to a reviewer (REVIEW: pending review, with the reason), and a
personal one gets F = 0.5 (NEUTRAL). A neutral re-check is not repeated until something new
happens to the memory (WAITING): asking the same absent evidence again says nothing new. Every
applied re-check is one audited RECHECK event. :func:`decide` is pure.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from memory import veracity, votes
from memory.audit import Event, EventKind
from memory.engine import MemoryEngine, utcnow
from memory.knowledge_check import KnowledgeVerdict, Stance, assess
from memory.models import SEARCHABLE, Classification, MemoryRecord, Source, Status
from memory.search import veracity_now
from memory.veracity import FactCheck, Risk, VeracityConfig

log = logging.getLogger(__name__)
ACTOR = "recheck"
# events that tell a re-check nothing new: reading a memory, or the re-check itself
_NOT_NEWS = frozenset({EventKind.INJECT, EventKind.RECHECK})


class Evidence(StrEnum):
    """Trusted evidence that a memory still holds."""

    KNOWLEDGE = "knowledge"
    SME_SOURCE = "sme_source"
    REVIEWER_APPROVAL = "reviewer_approval"
    CORRECT_VOTE = "correct_vote"
    RESTATEMENT = "restatement"


class RecheckAction(StrEnum):
    """What a re-check does to a due memory."""

    REFRESH = "refresh"  # evidence: F = 1
    NEUTRAL = "neutral"  # personal, no evidence: F = 0.5
    REVIEW = "review"  # shared, no evidence: pending review
    WAITING = "waiting"  # re-checked neutral already, nothing new since: nothing written


class RecheckDecision(BaseModel):
    """The re-check of one due memory, and why."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    action: RecheckAction
    evidence: list[Evidence]
    veracity: float
    fact_check: float | None
    reason: str


def due(engine: MemoryEngine, now: datetime, risk: Risk = Risk.MEDIUM) -> list[MemoryRecord]:
    """Searchable memories whose current veracity fell under the threshold of ``risk``."""
    return [r for r in engine.list() if is_due(r, now, engine.config.veracity, risk)]


def is_due(record: MemoryRecord, now: datetime, cfg: VeracityConfig, risk: Risk = Risk.MEDIUM) -> bool:
    """Whether a searchable memory's veracity at ``now`` is under the threshold of ``risk``."""
    return record.status in SEARCHABLE and veracity_now(record, now, cfg) < veracity.threshold(risk, cfg)


def evidence(
    record: MemoryRecord, history: Sequence[Event], knowledge: KnowledgeVerdict | None = None
) -> list[Evidence]:
    """The trusted evidence a memory's record, history and the knowledge base hold (each kind once, in order)."""
    found: list[Evidence] = []
    if knowledge is not None and knowledge.stance is Stance.SUPPORTS:
        found.append(Evidence.KNOWLEDGE)
    if record.source is Source.SME:
        found.append(Evidence.SME_SOURCE)
    if record.classification is Classification.GOOD:
        found.append(Evidence.REVIEWER_APPROVAL)
    if any(e.kind is EventKind.FEEDBACK and e.detail.get("correct") is True for e in history):
        found.append(Evidence.CORRECT_VOTE)
    if any(e.kind is EventKind.MERGE and e.detail.get("source") != Source.MODEL.value for e in history):
        found.append(Evidence.RESTATEMENT)
    return found


def _waiting(history: Sequence[Event]) -> bool:
    """Whether the last re-check was neutral and nothing but reads happened since."""
    for event in reversed(history):
        if event.kind is EventKind.RECHECK:
            return event.detail.get("action") == RecheckAction.NEUTRAL.value
        if event.kind not in _NOT_NEWS:
            return False
    return False


def decide(
    record: MemoryRecord,
    history: Sequence[Event],
    now: datetime,
    cfg: VeracityConfig,
    risk: Risk = Risk.MEDIUM,
    knowledge: KnowledgeVerdict | None = None,
) -> RecheckDecision | None:
    """The re-check of one memory at ``now`` (None: nothing to do). Pure.

    ``knowledge`` is the knowledge base's stance on the memory: a contradiction sends a searchable
    memory to review even when it is not due, unless a reviewer already approved it (their call stands).
    """
    v = veracity_now(record, now, cfg)
    contradicted = knowledge is not None and knowledge.stance is Stance.CONTRADICTS
    if contradicted and record.status in SEARCHABLE and record.classification is not Classification.GOOD:
        assert knowledge is not None
        return _decision(record, RecheckAction.REVIEW, [], v, None, f"{knowledge.describe()}: a reviewer must decide")
    if not is_due(record, now, cfg, risk):
        return None
    found = evidence(record, history, knowledge)
    contested = record.validated_incorrect > record.validated_correct
    if found and not contested:
        names = ", ".join(e.value for e in found)
        return _decision(record, RecheckAction.REFRESH, found, v, FactCheck.CONFIRM, f"confirmed by {names}")
    why = (
        f"contested: {record.validated_incorrect} 'incorrect' vs {record.validated_correct} 'correct' votes"
        if contested
        else "no trusted evidence"
    )
    if record.shared:
        return _decision(record, RecheckAction.REVIEW, found, v, None, f"{why}: a reviewer must confirm it")
    if _waiting(history):
        return _decision(record, RecheckAction.WAITING, found, v, None, f"{why} since the last re-check")
    return _decision(record, RecheckAction.NEUTRAL, found, v, FactCheck.NEUTRAL, why)


def _decision(
    record: MemoryRecord, action: RecheckAction, found: list[Evidence], v: float, f: float | None, reason: str
) -> RecheckDecision:
    fact_check = None if f is None else float(f)
    return RecheckDecision(
        memory_id=record.id, action=action, evidence=found, veracity=v, fact_check=fact_check, reason=reason
    )


def plan(
    engine: MemoryEngine,
    now: datetime,
    records: Sequence[MemoryRecord] | None = None,
    risk: Risk = Risk.MEDIUM,
) -> list[RecheckDecision]:
    """Re-check decisions for ``records`` (default: the whole store): due ones and those knowledge contradicts.

    Changes nothing. The knowledge base is asked about every searchable memory (one passage query).
    """
    pool = engine.list() if records is None else records
    cfg = engine.config.veracity
    searchable = [r for r in pool if r.status in SEARCHABLE]
    found = engine.knowledge.relevant([r.text for r in searchable]) if searchable else []
    stances = {r.id: assess(r.text, hits) for r, hits in zip(searchable, found, strict=True)}
    planned = []
    for record in searchable:
        stance = stances[record.id]
        disputed = stance.stance is Stance.CONTRADICTS and record.classification is not Classification.GOOD
        if disputed or is_due(record, now, cfg, risk):
            decision = decide(record, engine.audit.history(record.id), now, cfg, risk, stance)
            if decision is not None:
                planned.append(decision)
    log.debug("re-check: %d of %d memories due at %s risk", len(planned), len(pool), risk.value)
    return planned


def apply(engine: MemoryEngine, decisions: Sequence[RecheckDecision], now: datetime, actor: str = ACTOR) -> None:
    """Write the decisions through the audit log: one RECHECK event per memory (WAITING writes nothing)."""
    with engine.writing():
        _apply(engine, decisions, now, actor)


def _apply(engine: MemoryEngine, decisions: Sequence[RecheckDecision], now: datetime, actor: str) -> None:
    changes = []
    for d in decisions:
        if d.action is RecheckAction.WAITING:
            continue
        record = engine.get(d.memory_id)
        evidence_names = [e.value for e in d.evidence]
        detail: dict[str, Any] = {"action": d.action.value, "evidence": evidence_names, "reason": d.reason}
        if d.fact_check is None:
            record.status = Status.PENDING_REVIEW
            detail |= {"status": Status.PENDING_REVIEW.value, "veracity": d.veracity}
        else:
            detail |= votes.confirm(record, now, engine.config.veracity, d.fact_check)
        changes.append((record, EventKind.RECHECK, detail))
        log.info("re-check %s: %s (%s)", d.memory_id, d.action.value, d.reason)
    if changes:
        engine.apply(changes, now, actor)


def apply_fact_check(
    engine: MemoryEngine, memory_id: str, fact_check: float, now: datetime | None = None, actor: str = "veracity"
) -> MemoryRecord:
    """V' = kappa*V + (1-kappa)*F with F in {0, 0.5, 1}, from the veracity at ``now``; audited.

    An external fact-check (a knowledge base, an SME asked directly); a probationary memory whose V'
    reaches the medium-risk gate becomes active.
    """
    now = now or utcnow()
    record = engine.get(memory_id)
    detail = votes.confirm(record, now, engine.config.veracity, fact_check)
    engine.apply([(record, EventKind.RECHECK, detail)], now, actor)
    return record
