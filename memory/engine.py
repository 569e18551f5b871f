"""The memory engine: one object over the store, the audit log and the scoring rules.

Write protocol (crash consistency): every change is (1) appended to the audit log *uncommitted*
with the memory's new revision, (2) applied to the store, (3) committed in the log; on open,
:mod:`memory.recovery` settles what a crash left. Read-modify-writes hold the write lock
(:meth:`MemoryEngine.writing`). Opening a data home makes it owner-only (:mod:`memory.private_files`).
"""

from __future__ import annotations

import builtins
import logging
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory import conflicts, policy, trust, veracity, votes
from memory.audit import AuditBackend, Event, EventKind
from memory.config import HistoryConfig, KnowledgeConfig, Settings
from memory.conflicts import Judge, SimilarityJudge, Verdict
from memory.engine_config import EngineConfig, default_config
from memory.knowledge_check import KnowledgeVerdict
from memory.models import (
    SHARED_USER,
    Category,
    Classification,
    MemoryRecord,
    MemoryType,
    Provenance,
    Source,
    Status,
    VoterRole,
)
from memory.outcomes import AddResult, UnknownMemoryError, WriteAction, utcnow
from memory.scoring import MRSWeights, preset_weights
from memory.veracity import Risk

if TYPE_CHECKING:  # the store (chromadb), search and embedder (numpy) load when an engine opens or searches
    from memory.embedder import Embedder
    from memory.episodic import History
    from memory.knowledge import KnowledgeBase
    from memory.search import SearchResult
    from memory.store import ChromaStore

log = logging.getLogger(__name__)
NEIGHBOURS = 20  # nearest memories of the same type a new one is compared with
__all__ = ["AddResult", "MemoryEngine", "UnknownMemoryError", "WriteAction", "utcnow"]


class MemoryEngine:
    """Framework-free MARK memory: add, search, inject, feedback, supersede, review, maintain."""

    def __init__(
        self,
        store: ChromaStore,
        audit: AuditBackend,
        embedder: Embedder,
        config: EngineConfig | None = None,
        judge: Judge | None = None,
        knowledge: KnowledgeConfig | None = None,
        history: HistoryConfig | None = None,
    ) -> None:
        """Assemble an engine from its parts and settle any interrupted writes."""
        self.store, self.audit, self.embedder = store, audit, embedder
        self.config = config or default_config(embedder)
        self.judge: Judge = judge or SimilarityJudge(self.config.conflicts.duplicate_threshold)
        self.knowledge_config = knowledge or KnowledgeConfig()
        self._knowledge: KnowledgeBase | None = None
        self.history_config = history or HistoryConfig()
        self._history: History | None = None
        self.recovered = self.recover()

    @classmethod
    def open(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        config: EngineConfig | None = None,
        judge: Judge | None = None,
    ) -> MemoryEngine:
        """Open the configured store and audit log (the home and its files made owner-only first)."""
        from memory.audit import open_audit_log
        from memory.embedder import build_embedder
        from memory.private_files import make_private
        from memory.store import ChromaStore

        make_private(settings.home, settings.store_path)
        embedder = embedder or build_embedder(settings.embedder)
        store = ChromaStore(settings, embedder)
        try:  # SQLite in MARK_HOME, or PostgreSQL with MARK_DATABASE_URL
            audit = open_audit_log(settings, store.cipher)
        except Exception:
            store.close()
            raise
        return cls(store, audit, embedder, config, judge, settings.knowledge, settings.history)

    @property
    def knowledge(self) -> KnowledgeBase:
        """The knowledge base beside this engine's store (opened on first use): evidence for every write."""
        if self._knowledge is None:
            from memory.knowledge import KnowledgeBase

            self._knowledge = KnowledgeBase.beside(self.store, self.audit, self.knowledge_config, utcnow())
        return self._knowledge

    @property
    def episodes(self) -> History:
        """Users' conversation histories as episodic events, beside the store (opened on first use)."""
        if self._history is None:
            from memory.episodic import History

            self._history = History.beside(self.store, self.audit, self.embedder, self.history_config)
        return self._history

    def close(self) -> None:
        """Release the store and the log."""
        if self._history is not None:
            self._history.store.close()
        self.store.close()
        self.audit.close()

    # -- the write protocol ------------------------------------------------------------------
    def writing(self) -> AbstractContextManager[None]:
        """The write lock: held around every read-modify-write, so writers never lose each other's changes.

        Reentrant within a thread; across the processes of one machine (SQLite log) or of several
        machines (PostgreSQL log) it is the audit log's lock (:meth:`memory.audit.AuditBackend.write_lock`).
        Several ``mark serve`` workers on a Chroma server therefore count every vote and merge identical adds.
        """
        return self.audit.write_lock()

    def apply(
        self,
        changes: Sequence[tuple[MemoryRecord, EventKind, dict[str, Any]]],
        now: datetime,
        actor: str,
        reembed: Sequence[MemoryRecord] = (),
        bump: bool = True,
    ) -> None:
        """Apply changes through the write protocol: log uncommitted, write the store, commit.

        ``reembed`` lists records whose text is new (embedded and upserted); the others only have
        their metadata rewritten. ``bump`` advances each record's revision and ``updated_at``.
        """
        for record, _, _ in changes if bump else ():
            record.revision += 1
            record.updated_at = now
        seqs = self.audit.append_many([(r.id, kind, now, r.revision, actor, d) for r, kind, d in changes])
        fresh_ids = {r.id for r in reembed}
        final = {r.id: r for r, _, _ in changes}  # a record changed twice is written once, as it ends
        self.store.put([r for r in final.values() if r.id in fresh_ids])
        self.store.update_metadata([r for r in final.values() if r.id not in fresh_ids])
        self.audit.commit(seqs)
        for record, kind, _ in changes:
            log.debug("%s %s rev %d by %s: %s", kind.value, record.id, record.revision, actor, record.status.value)

    def recover(self) -> dict[str, int]:
        """Settle uncommitted events left by a crash (:func:`memory.recovery.recover`); kept and dropped counts."""
        from memory.recovery import recover

        with self.writing():
            return recover(self)

    # -- reads -------------------------------------------------------------------------------
    def get(self, memory_id: str, user_id: str | None = None) -> MemoryRecord:
        """A memory by id; with ``user_id``, only that user's personal memories or shared ones."""
        partitions = None if user_id is None else [user_id, SHARED_USER]
        record = self.store.get(memory_id, partitions)
        if record is None:
            raise UnknownMemoryError(memory_id)
        return record

    def list(
        self,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        statuses: Sequence[Status] | None = None,
    ) -> list[MemoryRecord]:
        """Memories visible to ``user_id`` (their own plus shared), or every memory when None."""
        partitions = self.store.partitions() if user_id is None else [user_id, SHARED_USER]
        out = [r for p in partitions for r in self.store.scan(p)]
        if types:
            out = [r for r in out if r.type in types]
        if statuses:
            out = [r for r in out if r.status in statuses]
        return sorted(out, key=lambda r: (r.created_at, r.id))

    def history(self, memory_id: str) -> builtins.list[Event]:
        """Every audited change of a memory, oldest first."""
        events = self.audit.history(memory_id)
        if not events:
            raise UnknownMemoryError(memory_id)
        return events

    def search(
        self,
        query: str,
        user_id: str,
        *,
        now: datetime | None = None,
        types: Sequence[MemoryType] = tuple(MemoryType),
        agent: str | None = None,
        k: int = 1,
        weights: MRSWeights | None = None,
        preset: str | None = None,
        risk: Risk | str = Risk.MEDIUM,
        filters: dict[str, str] | None = None,
    ) -> SearchResult:
        """MSS: ranked memories per type for ``user_id``; recall counts are NOT touched here."""
        from memory.search import search

        weights = weights if weights is not None or preset is None else preset_weights(preset)
        vector = self.embedder.embed([query])[0]
        return search(
            self.store,
            vector,
            user_id=user_id,
            now=now or utcnow(),
            types=types,
            agent=agent,
            k=k,
            weights=weights,
            scoring_cfg=self.config.scoring,
            risk=veracity.parse_risk(risk),
            veracity_cfg=self.config.veracity,
            filters=filters,
            embed=self.embedder.embed,
        )

    # -- writes ------------------------------------------------------------------------------
    def add(
        self,
        text: str,
        memory_type: MemoryType,
        user_id: str,
        *,
        agent: str = "chatbot",
        category: Category = Category.FACT,
        source: Source = Source.USER,
        confidence: float = 0.8,
        metadata: dict[str, str] | None = None,
        provenance: Provenance | None = None,
        review: bool = False,
        now: datetime | None = None,
        actor: str = "engine",
        judge: Judge | None = None,
        fact_check: float | None = None,
        note: dict[str, str] | None = None,
        verdicts: Mapping[str, Verdict] | None = None,
        knowledge: KnowledgeVerdict | None = None,
    ) -> AddResult:
        """Write a memory after conflict checks and veracity scoring.

        ``verdicts`` are decisions already reached by existing memory id (the agents' LLM resolver);
        pairs without one go to ``judge`` (default: the engine's). ``fact_check`` (F in {0, 0.5, 1})
        is folded into the initial veracity with V' = kappa*V + (1-kappa)*F before the status gate.
        ``note`` (who said it, the truth gate's verdict) is kept in the creation or merge event.
        ``knowledge`` is the knowledge base's stance when the caller already assessed it (else the
        write assesses it: a contradicted memory waits for a reviewer, a supported one gains consistency).
        """
        from memory.batch import NewMemory, add_many  # the one write path (batch imports this module)

        item = NewMemory(
            text=text,
            type=memory_type,
            user_id=user_id,
            agent=agent,
            category=category,
            source=source,
            confidence=confidence,
            metadata=metadata or {},
            provenance=provenance or Provenance(),
            review=review,
            fact_check=fact_check,
            verdicts=dict(verdicts or {}),
            note=note or {},
            knowledge=knowledge,
        )
        return add_many(self, [item], now or utcnow(), actor, judge)[0]

    def conflict_candidates(
        self, text: str, memory_type: MemoryType, user_id: str
    ) -> builtins.list[tuple[MemoryRecord, float]]:
        """The memories a new one must be judged against: its type, in its partition, similar enough."""
        from memory.record_layout import partition_for
        from memory.search import candidates

        vector = self.embedder.embed([text])[0]
        owner = None if memory_type is MemoryType.RESIDUAL else user_id
        where = {"type": memory_type.value}
        near = candidates(self.store, partition_for(memory_type, user_id), vector, NEIGHBOURS, where, owner)
        return conflicts.flag_candidates(near, self.config.conflicts, text)

    def initial_status(self, record: MemoryRecord, review: bool) -> Status:
        """The write policy, the same for every entry point (:func:`memory.policy.initial_status`)."""
        return policy.initial_status(record, review, self.config.veracity)

    def reject_candidate(
        self,
        text: str,
        memory_type: MemoryType,
        user_id: str,
        reason: str,
        *,
        detail: dict[str, Any] | None = None,
        now: datetime | None = None,
        actor: str = "truth-gate",
    ) -> str:
        """Audit a candidate memory the truth gate refused (nothing is stored); returns the event's id."""
        candidate_id = uuid.uuid4().hex
        info = {"text": text, "type": memory_type.value, "user_id": user_id, "reason": reason, **(detail or {})}
        seq = self.audit.append(candidate_id, EventKind.REJECT, now or utcnow(), 0, actor, info)
        self.audit.commit([seq])
        log.info("rejected a %s memory for %s (event %s): %s", memory_type.value, user_id, candidate_id, reason)
        return candidate_id

    def mark_injected(self, ids: Sequence[str], now: datetime | None = None, actor: str = "chatbot") -> None:
        """Count one recall for each memory actually injected into a prompt."""
        now = now or utcnow()
        with self.writing():
            changes = []
            for memory_id in dict.fromkeys(ids):
                record = self.get(memory_id)
                record.recall_count += 1
                record.persistence = trust.persistence(
                    record.recall_count, record.validated_incorrect, self.config.trust
                )
                changes.append((record, EventKind.INJECT, {"recall_count": record.recall_count}))
            self.apply(changes, now, actor)

    def feedback(
        self,
        memory_id: str,
        correct: bool,
        now: datetime | None = None,
        actor: str = "user",
        role: VoterRole = VoterRole.USER,
    ) -> MemoryRecord:
        """Validate a memory as correct or incorrect, weighted by the voter's role (see ``memory.votes``).

        A "correct" vote also refreshes veracity; a user's "incorrect" on shared SME memory is a dispute.
        """
        now = now or utcnow()
        with self.writing():  # read, count and write the vote as one step: no vote is lost to another writer
            record = self.get(memory_id)
            detail = votes.apply_vote(record, correct, role, self.audit.history(memory_id), now, self.config)
            self.apply([(record, EventKind.FEEDBACK, detail)], now, actor)
        return record

    def remember(self, text: str, user_id: str, *, now: datetime | None = None, **kwargs: Any) -> AddResult:
        """An explicit "remember X": a personal user-question memory at full confidence."""
        kwargs.setdefault("category", Category.PREFERENCE)
        return self.add(text, MemoryType.USER_QUESTION, user_id, source=Source.USER, confidence=1.0, now=now, **kwargs)

    def set_status(
        self,
        memory_id: str,
        status: Status,
        kind: EventKind,
        detail: dict[str, Any],
        *,
        now: datetime | None = None,
        actor: str = "engine",
        text: str | None = None,
        classification: Classification | None = None,
    ) -> MemoryRecord:
        """Change a memory's status (and optionally its text and label) through the log."""
        with self.writing():
            record = self.get(memory_id)
            record.status = status
            if classification is not None:
                record.classification = classification
                detail = {**detail, "classification": classification.value}
            reembed: list[MemoryRecord] = []
            if text is not None and text.strip() != record.text:
                record.text = text
                record.version += 1
                reembed = [record]
            self.apply([(record, kind, {"status": status.value, **detail})], now or utcnow(), actor, reembed)
        return record

    def forget(
        self, memory_id: str, user_id: str | None = None, now: datetime | None = None, actor: str = "user"
    ) -> None:
        """Erase a memory and every copy of its text (:mod:`memory.forgetting`); a text-free FORGET event remains."""
        from memory.forgetting import forget_records

        forget_records(self, [self.get(memory_id, user_id)], now or utcnow(), actor)

    def forget_user(self, user_id: str, now: datetime | None = None) -> int:
        """Erase a user's personal memories, history, profile and refused candidates (domain memories stay).

        Returns how many memories were forgotten (see :func:`memory.forgetting.forget_user`).
        """
        from memory.forgetting import forget_user

        return forget_user(self, user_id, now or utcnow())
