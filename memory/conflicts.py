"""Conflict mechanics (seed 001 S4): who gets judged, and what each verdict does to the records.

Only existing memories whose similarity to the new one reaches ``candidate_threshold`` are shown to
the judge, so an unrelated write costs no judge call. The judge is a protocol: the agents package
plugs in an LLM judge, whose answer :mod:`memory.verdict_rules` turns into a verdict;
:class:`SimilarityJudge` is the deterministic fallback used without a model.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memory import veracity, votes
from memory.models import MemoryRecord, Source, Status
from memory.veracity import FactCheck, VeracityConfig

log = logging.getLogger(__name__)


class Verdict(str, Enum):
    """How a new memory relates to an existing one."""

    SAME = "same"
    CONTRADICTS = "contradicts"
    INDEPENDENT = "independent"
    UNSURE = "unsure"


class Judge(Protocol):
    """Decides the relation between a new memory text and an existing one."""

    def judge(self, new_text: str, old_text: str, similarity: float) -> Verdict:
        """Return the verdict for the pair."""
        ...


class ConflictConfig(BaseModel):
    """Thresholds for flagging and resolving conflicts."""

    model_config = ConfigDict(extra="forbid")

    candidate_threshold: float = Field(default=0.55, ge=0.0, le=1.0)
    duplicate_threshold: float = Field(default=0.95, ge=0.0, le=1.0)
    max_candidates: int = Field(default=5, ge=1, le=50)
    unsure_boost: float = Field(default=0.05, ge=0.0, le=1.0)
    keyword_weight: float = Field(default=0.7, ge=0.0, le=5.0)
    phrase_weight: float = Field(default=1.0, ge=0.0, le=5.0)
    rescue_threshold: float = Field(default=0.9, ge=0.0, le=10.0)
    same_band: float = Field(default=0.92, ge=0.0, le=1.0)
    contradiction_band: float = Field(default=0.63, ge=0.0, le=1.0)
    independent_below: float = Field(default=0.70, ge=0.0, le=1.0)


class SimilarityJudge:
    """Model-free judge: near-identical text is SAME, anything else flagged is UNSURE."""

    def __init__(self, duplicate_threshold: float = 0.95) -> None:
        """Set the similarity at or above which two texts count as the same memory."""
        self.duplicate_threshold = duplicate_threshold

    def judge(self, new_text: str, old_text: str, similarity: float) -> Verdict:
        """SAME above the duplicate threshold when no number or name differs, otherwise UNSURE (keep both).

        Near-identical wording can still be an update ("moved in 2015" -> "moved in 2020", swapped
        roles): merging would silently drop the correction, so a changed number or capitalised name
        keeps both memories instead.
        """
        if new_text.strip().lower() == old_text.strip().lower():
            return Verdict.SAME
        if similarity >= self.duplicate_threshold and _specifics(new_text) == _specifics(old_text):
            return Verdict.SAME
        return Verdict.UNSURE


class Judgement(BaseModel):
    """One judged pair."""

    model_config = ConfigDict(extra="forbid")

    existing_id: str
    similarity: float
    verdict: Verdict


_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "his",
        "her",
        "their",
        "its",
        "as",
        "that",
        "this",
        "not",
        "never",
        "no",
        "be",
        "been",
        "who",
        "which",
        "also",
        "into",
        "over",
        "than",
    ]
)


def keywords(text: str) -> set[str]:
    """Content words of a text (lower case, 3+ characters, no stop words)."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in _STOP}


def _idf_overlap(query: set[Any], sets: Sequence[set[Any]]) -> list[float]:
    """For each set, the share of the query's IDF weight (IDF over ``sets``) it holds."""
    idf = {w: math.log((1 + len(sets)) / (1 + sum(w in s for s in sets))) for w in query}
    total = sum(idf.values())
    if not total:
        return [0.0] * len(sets)
    return [sum(idf[w] for w in query & s) / total for s in sets]


def keyword_overlap(new_text: str, texts: Sequence[str]) -> list[float]:
    """For each text, the share of the new text's keyword weight it shares (0-1). Pure.

    Weights are IDF over ``texts``: a word every candidate shares (a person's name in their own
    memories) counts for nothing, a word only the overridden fact shares counts most.
    """
    return _idf_overlap(keywords(new_text), [keywords(t) for t in texts])


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return set(itertools.pairwise(words))


def phrase_overlap(new_text: str, texts: Sequence[str]) -> list[float]:
    """For each text, the IDF-weighted share of the new text's word pairs it shares (0-1). Pure.

    An update usually keeps the sentence frame of the fact it overrides and swaps the value
    ("published an article on X in a journal" -> "... on Y in a journal"); word pairs, stop words
    included, see that frame where single keywords and embeddings weigh the changed topic.
    """
    return _idf_overlap(_bigrams(new_text), [_bigrams(t) for t in texts])


def _specifics(text: str) -> tuple[list[str], list[str]]:
    """Numbers and capitalised words in order: what an update usually changes."""
    return re.findall(r"\d+(?:\.\d+)?", text), re.findall(r"\b[A-Z][a-z]+\b", text)


def flag_candidates(
    neighbours: Sequence[tuple[MemoryRecord, float]], cfg: ConflictConfig, new_text: str = ""
) -> list[tuple[MemoryRecord, float]]:
    """Neighbours likely enough to conflict to be judged, most likely first, at most ``max_candidates``.

    Each neighbour gets ``cosine + keyword_weight * keyword overlap + phrase_weight * phrase overlap``
    (overlaps IDF-weighted over all neighbours, see :func:`keyword_overlap` and
    :func:`phrase_overlap`): that score moves the fact an update overrides ahead of other facts
    about the same person. A neighbour is flagged when its cosine reaches ``candidate_threshold``,
    or when its score reaches ``rescue_threshold`` (an update reworded enough to drop the cosine
    while keeping the old fact's frame). The returned similarity is the plain cosine.
    """
    texts = [r.text for r, _ in neighbours]
    words = keyword_overlap(new_text, texts) if new_text else [0.0] * len(texts)
    pairs = phrase_overlap(new_text, texts) if new_text else [0.0] * len(texts)
    scored = [
        (s + cfg.keyword_weight * w + cfg.phrase_weight * p, r, s)
        for (r, s), w, p in zip(neighbours, words, pairs, strict=True)
    ]
    kept = [(score, r, s) for score, r, s in scored if s >= cfg.candidate_threshold or score >= cfg.rescue_threshold]
    kept.sort(key=lambda item: item[0], reverse=True)
    return [(r, s) for _, r, s in kept[: cfg.max_candidates]]


def judge_candidates(
    judge: Judge,
    new_text: str,
    flagged: Sequence[tuple[MemoryRecord, float]],
    decided: Mapping[str, Verdict] | None = None,
) -> list[Judgement]:
    """Ask the judge about each flagged pair; stops at the first SAME (the write becomes a merge).

    ``decided`` holds verdicts already reached by memory id (the agents' LLM resolver); only the
    other pairs go to ``judge``.
    """
    out: list[Judgement] = []
    for record, similarity in flagged:
        given = (decided or {}).get(record.id)
        verdict = given or judge.judge(new_text, record.text, similarity)
        log.debug(
            "conflict with %s (cosine %.3f): %s by the %s",
            record.id,
            similarity,
            verdict.value,
            "resolver" if given else "judge",
        )
        out.append(Judgement(existing_id=record.id, similarity=similarity, verdict=verdict))
        if verdict is Verdict.SAME:
            break
    return out


def merge_into(existing: MemoryRecord, incoming: MemoryRecord, cfg: VeracityConfig | None = None) -> MemoryRecord:
    """The existing record after absorbing a duplicate: counters kept, confidence and metadata merged.

    The fact restated by a person (not the model) is a confirmation (``votes.confirm``, F = 1) at the
    time of the restatement (the newcomer's ``veracity_at``); the merged veracity is the better of the
    existing one at that time and the newcomer's, scored then.
    """
    merged = existing.model_copy(deep=True)
    now = incoming.veracity_at or incoming.created_at
    cfg = cfg or VeracityConfig()
    if incoming.source is not Source.MODEL:
        votes.confirm(merged, now, cfg, FactCheck.CONFIRM)
    merged.confidence = max(existing.confidence, incoming.confidence)
    merged.veracity = max(veracity.current(merged, now, cfg), incoming.veracity)
    merged.veracity_at = now
    merged.metadata = {**incoming.metadata, **existing.metadata}
    return merged


def supersede(old: MemoryRecord, new: MemoryRecord) -> tuple[MemoryRecord, MemoryRecord]:
    """Old is superseded by new: old keeps its text for audit, confidence 0; new is the next version."""
    old_after = old.model_copy(deep=True)
    old_after.status = Status.SUPERSEDED
    old_after.superseded_by = new.id
    old_after.confidence = 0.0
    new_after = new.model_copy(deep=True)
    new_after.version = max(new.version, old.version + 1)
    return old_after, new_after


def prefer_newer(old: MemoryRecord, new: MemoryRecord, boost: float) -> MemoryRecord:
    """Keep both on an unsure verdict, the newer with the higher confidence."""
    newer = new.model_copy(deep=True)
    newer.confidence = min(1.0, max(new.confidence, old.confidence + boost))
    return newer


def resolve(
    record: MemoryRecord,
    judgements: Sequence[Judgement],
    existing: Callable[[str], MemoryRecord],
    unsure_boost: float,
) -> tuple[MemoryRecord, list[MemoryRecord], list[str]]:
    """Apply CONTRADICTS / UNSURE verdicts to a new record (SAME is the caller's merge). Pure.

    Returns the record as it ends, the superseded old records (to write with SUPERSEDE events) and
    the ids a pending-review record will supersede only once approved.
    """
    superseded: list[MemoryRecord] = []
    deferred: list[str] = []
    for judgement in judgements:
        old = existing(judgement.existing_id)
        if judgement.verdict is Verdict.CONTRADICTS and record.status is Status.PENDING_REVIEW:
            deferred.append(old.id)
            log.info("%s contradicts %s: superseded once %s is approved", record.id, old.id, record.id)
        elif judgement.verdict is Verdict.CONTRADICTS:
            old_after, record = supersede(old, record)
            superseded.append(old_after)
            log.info("%s contradicts %s: %s superseded", record.id, old.id, old.id)
        elif judgement.verdict is Verdict.UNSURE:
            record = prefer_newer(old, record, unsure_boost)
            log.info(
                "%s unsure against %s: both kept, the newer at confidence %.2f", record.id, old.id, record.confidence
            )
    return record, superseded, deferred
