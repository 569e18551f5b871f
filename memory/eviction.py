"""Which history events a budget removes first: none, least recently used, or least relevant (seed 004, P1). Pure.

The memory-augmented architecture of seed 004 keeps memory slots under a budget with one of two
policies: LRU eviction drops the slot whose last access is oldest; relevance-based pruning gives each
slot the highest cosine similarity it has with any of the last ``W`` queries and drops the least
relevant. ``aggregate="mean"`` averages over the window instead (a smoother variant, measured beside
the seed's maximum in ``benchmarks/bench_history.py``). Ties go to the older event (lower position),
so the choice is deterministic. Nothing here reads a clock or a store: the caller passes the events,
their vectors and the queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from memory.config import Eviction
from memory.history import HistoryEvent

Aggregate = Literal["max", "mean"]


def relevance(
    vectors: Sequence[Sequence[float]], queries: Sequence[Sequence[float]], aggregate: Aggregate = "max"
) -> list[float]:
    """Each vector's relevance to the recent queries: its best (or mean) cosine with them (0 without queries).

    Vectors are assumed L2-normalised (mark's embedders return them so), so a cosine is a dot product.
    """
    if not vectors:
        return []
    if not queries:
        return [0.0] * len(vectors)
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(queries, dtype=np.float32).T
    scores = sims.max(axis=1) if aggregate == "max" else sims.mean(axis=1)
    return [float(s) for s in scores]


def to_evict(
    events: Sequence[HistoryEvent],
    budget: int,
    policy: Eviction,
    vectors: Mapping[str, Sequence[float]] | None = None,
    queries: Sequence[Sequence[float]] = (),
    aggregate: Aggregate = "max",
) -> list[str]:
    """The ids of the events to remove so that at most ``budget`` remain, under ``policy``.

    ``none`` removes nothing; ``lru`` removes the least recently accessed first (``last_access``,
    then position); ``relevance`` the least relevant to ``queries`` first (``vectors`` by event id;
    an event without a vector counts as irrelevant).
    """
    excess = len(events) - max(0, budget)
    if excess <= 0 or policy is Eviction.NONE:
        return []
    if policy is Eviction.LRU:
        order = sorted(events, key=lambda e: (e.last_access, e.position, e.id))
    else:
        known = [e.id for e in events if vectors is not None and e.id in vectors]
        found = relevance([vectors[i] for i in known], queries, aggregate) if vectors is not None else []
        scores = dict(zip(known, found, strict=True))
        order = sorted(events, key=lambda e: (scores.get(e.id, float("-inf")), e.position, e.id))
    return [e.id for e in order[:excess]]
