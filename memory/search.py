"""Memory Search Service (MARK MSS): top-N candidates per type, re-ranked by MRS.

Candidates under a relevance floor (``ScoringConfig.floor_for``: ``min_similarity`` or a per-type
``type_floors`` entry) are dropped before ranking:
recall count and freshness may reorder relevant memories, but must never lift an unrelated one
into the prompt (a frequently injected memory would otherwise snowball).

Applicability: a memory learnt from a question (``Provenance.situation``) is about that question. With
``situation_floor`` set, it is kept only for a query at least that similar to its situation, unless
the memory itself is at least ``situation_bypass`` similar to the query. An expert's answer to one
question must not be read as the answer to a neighbouring one.

Residual memories are domain knowledge: they are searched in the shared domain partition
regardless of user and agent. Personal types are searched only in the asking user's partition,
optionally narrowed by agent. Memories whose current veracity is under the task-risk threshold are
returned separately as ``needs_recheck`` instead of being silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict

from memory import scoring, veracity
from memory.embedder import cosine
from memory.models import SEARCHABLE, SHARED_USER, MemoryRecord, MemoryType
from memory.record_layout import metadata_where, search_key
from memory.scoring import MRSWeights, ScoreBreakdown, ScoringConfig
from memory.store import ChromaStore
from memory.veracity import Risk, VeracityConfig


class SearchHit(BaseModel):
    """One ranked memory with its MRS breakdown."""

    model_config = ConfigDict(extra="forbid")

    record: MemoryRecord
    score: float
    similarity: float
    veracity_now: float
    breakdown: ScoreBreakdown

    def to_public(self) -> dict[str, Any]:
        """The JSON shape of ``mark memory search --json``."""
        b = self.breakdown
        return {
            "id": self.record.id,
            "text": self.record.text,
            "type": self.record.type.value,
            "user_id": self.record.user_id,
            "score": round(self.score, 6),
            "breakdown": {"recall": b.recall, "recency": b.recency, "similarity": b.similarity, "feedback": b.feedback},
            "feedback_factor": round(b.feedback_factor, 4),
            "veracity": round(self.veracity_now, 4),
            "trust": round(self.record.trust, 4),
        }


class SearchResult(BaseModel):
    """Ranked hits per type plus the candidates held back for a veracity re-check."""

    model_config = ConfigDict(extra="forbid")

    hits: dict[MemoryType, list[SearchHit]]
    needs_recheck: list[SearchHit]

    def top(self) -> list[SearchHit]:
        """The best hit of each type (what MARK injects)."""
        return [hits[0] for hits in self.hits.values() if hits]

    def all_hits(self) -> list[SearchHit]:
        """Every ranked hit, best score first."""
        return sorted((h for hits in self.hits.values() for h in hits), key=lambda h: h.score, reverse=True)


def age_days(record: MemoryRecord, now: datetime) -> float:
    """Age of a memory in days (never negative)."""
    return max(0.0, (now - record.created_at).total_seconds() / 86400.0)


def veracity_now(record: MemoryRecord, now: datetime, cfg: VeracityConfig) -> float:
    """Veracity at ``now``: the stored score with its temporal term decayed since it was scored."""
    return veracity.current(record, now, cfg)


def search(
    store: ChromaStore,
    query_vector: Sequence[float],
    *,
    user_id: str,
    now: datetime,
    types: Sequence[MemoryType] = tuple(MemoryType),
    agent: str | None = None,
    k: int = 1,
    weights: MRSWeights | None = None,
    scoring_cfg: ScoringConfig | None = None,
    risk: Risk = Risk.MEDIUM,
    veracity_cfg: VeracityConfig | None = None,
    filters: dict[str, str] | None = None,
    embed: Callable[[Sequence[str]], list[list[float]]] | None = None,
) -> SearchResult:
    """Rank each requested type's top-N candidates by MRS and keep the best ``k`` per type.

    ``embed`` embeds the situations of the applicability check (no check without it).
    """
    scoring_cfg = scoring_cfg or ScoringConfig()
    veracity_cfg = veracity_cfg or VeracityConfig()
    tau = veracity.threshold(risk, veracity_cfg)
    hits: dict[MemoryType, list[SearchHit]] = {}
    held: list[SearchHit] = []
    wide: dict[str, list[tuple[MemoryRecord, float]]] = {}
    for memory_type in types:
        personal = memory_type is not MemoryType.RESIDUAL
        extra = dict(filters or {})
        extra["type"] = memory_type.value
        if personal and agent:
            extra["agent"] = agent
        partition = user_id if personal else SHARED_USER
        owner = user_id if personal else None
        pairs = candidates(store, partition, query_vector, scoring_cfg.top_n, extra, owner, wide)
        floor = scoring_cfg.floor_for(memory_type.value)
        pairs = [(r, s) for r, s in pairs if s >= floor]
        pairs = applicable(pairs, query_vector, embed, scoring_cfg)
        chosen = weights or scoring_cfg.weights_for(memory_type.value)
        ranked = _rank(pairs, now, chosen, scoring_cfg.epsilon, veracity_cfg, scoring_cfg.incorrect_penalty)
        hits[memory_type] = [h for h in ranked if h.veracity_now >= tau][:k]
        held.extend(h for h in ranked if h.veracity_now < tau)
    return SearchResult(hits=hits, needs_recheck=held)


def applicable(
    pairs: list[tuple[MemoryRecord, float]],
    query_vector: Sequence[float],
    embed: Callable[[Sequence[str]], list[list[float]]] | None,
    cfg: ScoringConfig,
) -> list[tuple[MemoryRecord, float]]:
    """The pairs whose memory applies to the query (see the module notes on applicability)."""
    floor = cfg.situation_floor
    if floor is None or embed is None:
        return pairs
    bypass = cfg.situation_bypass
    asked = list(dict.fromkeys(r.provenance.situation for r, s in pairs if r.provenance.situation and s < bypass))
    if not asked:
        return pairs
    near = {text: cosine(query_vector, vector) >= floor for text, vector in zip(asked, embed(asked), strict=True)}
    return [(r, s) for r, s in pairs if s >= bypass or near.get(r.provenance.situation or "", True)]


OVERFETCH = 3


def matches(record: MemoryRecord, fields: dict[str, str], owner: str | None) -> bool:
    """Whether a record is searchable and satisfies equality filters on its fields or metadata."""
    if record.status not in SEARCHABLE or (owner is not None and record.user_id != owner):
        return False
    for key, value in fields.items():
        if key == "metadata" or key not in MemoryRecord.model_fields:
            actual: Any = record.metadata.get(key)
        else:
            actual = getattr(record, key)
            if isinstance(actual, Enum):
                actual = actual.value
            elif not isinstance(actual, str):  # numbers, dates, None: as they are written in JSON
                actual = record.model_dump(mode="json", include={key})[key]
        if str(actual) != value:
            return False
    return True


def candidates(
    store: ChromaStore,
    partition: str,
    vector: Sequence[float],
    n: int,
    fields: dict[str, str],
    owner: str | None,
    cache: dict[str, list[tuple[MemoryRecord, float]]] | None = None,
) -> list[tuple[MemoryRecord, float]]:
    """The ``n`` most similar searchable records of a partition that match ``fields`` (``type`` required).

    The domain partition holds only residual memories: one unfiltered query fetches ``OVERFETCH * n``
    neighbours and status is checked in Python. When the store caches records (ids and distances are
    all Chroma returns), a personal partition is fetched the same way, ``OVERFETCH * n`` per personal
    type in one page that both types share (a user's partition is usually smaller than that page, so
    it comes back whole). Only when that leaves fewer than ``n`` out of a full page does the exact,
    filtered query run. Without a record cache, where Chroma hydrates every row it returns, personal
    partitions are queried with one equality on the composite search key (exact, and as cheap as no
    filter). Other field filters (agent, governance metadata) are applied in Python the same way.
    """
    key: dict[str, Any] = {"skey": search_key(partition, MemoryType(fields["type"]))}
    extra = {k: v for k, v in fields.items() if k != "type"}
    cache = {} if cache is None else cache
    shared = partition == SHARED_USER
    if shared or store.caches_records:
        full = n * OVERFETCH * (1 if shared else len(MemoryType) - 1)
        if partition not in cache:
            cache[partition] = store.query(partition, vector, full)
        page = cache[partition]
    else:
        full = n * OVERFETCH if extra else n
        page = store.query(partition, vector, full, key)
    kept = [(r, s) for r, s in page if matches(r, fields, owner)]
    if len(kept) >= n or len(page) < full:
        return kept[:n]
    where = {"$and": [key, metadata_where(extra)]} if extra else key
    exact = store.query(partition, vector, n, where)
    return [(r, s) for r, s in exact if matches(r, fields, owner)]


def _rank(
    pairs: list[tuple[MemoryRecord, float]],
    now: datetime,
    weights: MRSWeights,
    epsilon: float,
    veracity_cfg: VeracityConfig,
    penalty: float,
) -> list[SearchHit]:
    by_id = {record.id: (record, similarity) for record, similarity in pairs}
    candidates = [
        scoring.Candidate(
            id=record.id,
            recall_count=record.recall_count,
            age_days=age_days(record, now),
            similarity=similarity,
            feedback=record.feedback_score,
            correct=record.validated_correct,
            incorrect=record.validated_incorrect,
        )
        for record, similarity in pairs
    ]
    out: list[SearchHit] = []
    for scored in scoring.rank(candidates, weights, epsilon=epsilon, incorrect_penalty=penalty):
        record, similarity = by_id[scored.id]
        out.append(
            SearchHit(
                record=record,
                score=scored.score,
                similarity=similarity,
                breakdown=scored.breakdown,
                veracity_now=veracity_now(record, now, veracity_cfg),
            )
        )
    return out
