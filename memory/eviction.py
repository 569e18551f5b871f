"""Which history events a budget removes first: none, least recently used, or least relevant (seed 004, P1). Pure.

The memory-augmented architecture of seed 004 keeps memory slots under a budget with one of two
policies: LRU eviction drops the slot whose last access is oldest; relevance-based pruning gives each
slot the highest cosine similarity it has with any of the last ``W`` queries and drops the least
relevant. ``aggregate="mean"`` averages over the window instead (smoother; mark's default).

Similarity to recent queries alone keeps what the user talked about lately, which in a long history is
rarely what they will ask about later (on LongMemEval it kept under half the evidence at a quarter of the
events). mark therefore adds a *salience* prior to the relevance score (``Salience``): a bonus for what
the user said (an assistant reply can be asked for again; what the user told us cannot), and one that
grows with the log of the turn's self-disclosure, its first-person words and quantities ("I've added 25
new postcards"). Both weights are settings; zero weights give the seed's policy unchanged. The weights
were chosen on the benchmark's dev split and are reported on its test split (``bench_history.py``).

Ties go to the older event (lower position), so the choice is deterministic. Nothing here reads a clock
or a store: the caller passes the events, their vectors and the queries.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from memory.config import Eviction
from memory.history import HistoryEvent, Speaker

Aggregate = Literal["max", "mean"]
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.IGNORECASE)
_QUANTITY = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|hundred)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Salience:
    """How much more than its relevance an event is worth keeping (both 0: the seed's policy)."""

    user_bonus: float = 0.0  # added when the user said it
    disclosure: float = 0.0  # times log(1 + first-person words + quantities)


def disclosure(text: str) -> int:
    """How much a turn says about its speaker: its first-person words and quantities, counted."""
    return len(_FIRST_PERSON.findall(text)) + len(_QUANTITY.findall(text))


def salience(event: HistoryEvent, weights: Salience) -> float:
    """The prior ``weights`` give ``event``: the user bonus if the user said it, plus its weighted disclosure."""
    bonus = weights.user_bonus if event.speaker is Speaker.USER else 0.0
    return bonus + (weights.disclosure * math.log1p(disclosure(event.text)) if weights.disclosure else 0.0)


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
    weights: Salience | None = None,
) -> list[str]:
    """The ids of the events to remove so that at most ``budget`` remain, under ``policy``.

    ``none`` removes nothing; ``lru`` removes the least recently accessed first (``last_access``,
    then position); ``relevance`` the lowest relevance to ``queries`` plus salience (``weights``) first
    (``vectors`` by event id; an event without a vector counts as a cosine of -2, below any real one).
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
        prior = weights or Salience()
        order = sorted(events, key=lambda e: (scores.get(e.id, -2.0) + salience(e, prior), e.position, e.id))
    return [e.id for e in order[:excess]]
