"""What the review page shows about a pending memory, gathered from the store, the audit log and the history.

For each candidate: who said it and when (the creation event's ``said_by``, the record's source and
user), the truth gate's verdict and the knowledge base's stance (the creation event's detail), the
veracity against the medium-risk gate, the build's fact check and any re-scores (RECHECK events), why
it waits for a reviewer (the build's review reason, the record, re-checks), the conversation it was
learnt from, and the memory it would supersede or merge with as a word diff. Nothing here writes; the
caller runs it under the service's engine lock.

The conversation excerpt comes from the user's history events: ``mark chat`` writes every turn there, with
its speaker, under ``chat:<user>:<session>``, and a build of a transcript (``mark memory build``, ``POST
/v1/build``, a lifecycle correction) keeps its conversation under the conversation's id. When none is kept
(an older build, a forgotten history), the opening question (the provenance's ``situation``) and the
candidates the truth gate refused in that conversation are shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory import veracity
from memory.audit import Event, EventKind
from memory.engine import MemoryEngine, UnknownMemoryError
from memory.history import HistoryEvent
from memory.knowledge_check import Stance
from memory.models import MemoryRecord, Source
from memory.veracity import Risk

EXCERPT_TURNS = 12  # turns shown when the memory's turn is unknown (the last ones of the session)
AROUND_TURN = 4  # turns shown either side of the memory's turn when it is known
NOT_KEPT = (
    "The transcript of this conversation was not kept (it was built before builds kept their conversations in the"
    " user's history, or the user's history was forgotten)."
)
NOT_LEARNT = "Written directly (not learnt from a conversation)."
NO_GATE = "not checked (written directly, not from a conversation)"


@dataclass(frozen=True)
class Line:
    """One turn of a conversation excerpt: who said it and what."""

    turn: int
    speaker: str
    text: str
    marked: bool  # the turn the memory was learnt from


@dataclass(frozen=True)
class Comparison:
    """An existing memory the candidate would replace or join, with the word diff from it to the candidate."""

    label: str
    memory_id: str
    status: str
    text: str
    segments: list[tuple[str, str]]  # ("same" | "del" | "ins", words)


@dataclass
class CandidateView:
    """Everything the queue shows about one pending memory."""

    record: MemoryRecord
    said_by: str
    gate: str
    knowledge: str
    threshold: float
    fact_checks: list[str]
    reasons: list[str]
    lines: list[Line]
    omitted: int  # earlier turns of the session left out of the excerpt
    transcript_note: str
    refusals: list[tuple[str, str]]  # (text, reason) refused by the truth gate in the same conversation
    comparisons: list[Comparison]
    visible: bool = field(default=False)  # whether the reviewer may open the memory's own page


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` -> ``new`` word by word, in reading order: ("same" | "del" | "ins", words) segments."""
    a, b = old.split(), new.split()
    segments: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            segments.append(("same", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            segments.append(("del", " ".join(a[i1:i2])))
        if j2 > j1:
            segments.append(("ins", " ".join(b[j1:j2])))
    return segments


def _speaker(event: HistoryEvent) -> str:
    names = {"user": f"{event.user_id} (user)", "sme": f"{event.user_id} (expert)", "assistant": "assistant"}
    return names.get(event.speaker.value, event.speaker.value)


def excerpt(events: Sequence[HistoryEvent], turn: int | None) -> tuple[list[Line], int]:
    """The turns around ``turn`` (or the session's last ones when unknown) and how many earlier ones are left out."""
    if turn is not None:
        shown = [e for e in events if abs(e.turn - turn) <= AROUND_TURN]
    else:
        shown = list(events[-EXCERPT_TURNS:])
    omitted = sum(1 for e in events if shown and e.turn < shown[0].turn)
    return [Line(e.turn, _speaker(e), e.text, e.turn == turn) for e in shown], omitted


def conversation(engine: MemoryEngine, record: MemoryRecord, said_by: str) -> tuple[list[Line], int, str]:
    """The kept turns of the memory's conversation, or why there are none."""
    conversation_id = record.provenance.conversation_id
    if not conversation_id:
        return [], 0, NOT_LEARNT
    for user in dict.fromkeys([record.user_id, said_by]):
        for session in dict.fromkeys([conversation_id.removeprefix(f"chat:{user}:"), conversation_id]):
            events = engine.episodes.store.session(user, session)
            if events:
                lines, omitted = excerpt(events, record.provenance.turn)
                return lines, omitted, ""
    return [], 0, NOT_KEPT


def refusals(engine: MemoryEngine, record: MemoryRecord) -> list[tuple[str, str]]:
    """The candidates the truth gate refused in the memory's conversation (text, reason)."""
    conversation_id = record.provenance.conversation_id
    if not conversation_id:
        return []
    found = []
    for candidate_id in engine.audit.rejected(record.user_id):
        for event in engine.audit.history(candidate_id):
            if event.kind is EventKind.REJECT and event.detail.get("conversation_id") == conversation_id:
                found.append((str(event.detail.get("text", "")), str(event.detail.get("reason", ""))))
    return found


def comparisons(engine: MemoryEngine, record: MemoryRecord, created: dict[str, Any]) -> list[Comparison]:
    """The memories it would supersede once approved, else the closest existing memory of its type."""
    out = []
    for old_id in created.get("supersedes_on_approval", []):
        try:
            old = engine.get(str(old_id))
        except UnknownMemoryError:  # forgotten since
            continue
        diff = word_diff(old.text, record.text)
        out.append(Comparison("Would supersede", old.id, old.status.value, old.text, diff))
    if out:
        return out
    near = [
        (r, s) for r, s in engine.conflict_candidates(record.text, record.type, record.user_id) if r.id != record.id
    ]
    if not near:
        return []
    old, similarity = near[0]
    label = (
        f"Closest existing {record.type.value} memory (similarity {similarity:.2f}): it may merge with or contradict it"
    )
    return [Comparison(label, old.id, old.status.value, old.text, word_diff(old.text, record.text))]


def fact_checks(events: Sequence[Event], created: dict[str, Any]) -> list[str]:
    """The build's fact check (from the creation event) and any re-scores (RECHECK events with an F)."""
    out = []
    if created.get("fact_check") not in {None, "", "none"}:
        out.append(f"F={created['fact_check']} when it was built: {created.get('fact_reason') or 'no reason given'}")
    for e in events:
        if e.kind is EventKind.RECHECK and "F" in e.detail:
            before, after = float(e.detail.get("veracity_before", 0.0)), float(e.detail.get("veracity_after", 0.0))
            out.append(f"F={e.detail['F']} on {e.at:%Y-%m-%d} by {e.actor}: veracity {before:.2f} -> {after:.2f}")
    return out


def reasons(record: MemoryRecord, created: dict[str, Any], events: Sequence[Event], threshold: float) -> list[str]:
    """Why the memory waits for a reviewer, as far as the record and its events tell."""
    found = [str(created["review_reason"])] if created.get("review_reason") else []
    if str(created.get("knowledge", "")).startswith(f"knowledge {Stance.CONTRADICTS.value}"):
        found.append("the knowledge base contradicts it")
    if record.shared and record.source is not Source.SME:
        found.append(f"shared memory from an untrusted source ({record.source.value}): every user would get it")
    if record.shared and record.veracity < threshold:
        found.append(f"veracity {record.veracity:.2f} is below the gate {threshold:.2f}")
    for e in events:
        if e.kind is EventKind.RECHECK and e.detail.get("status") == "pending_review":
            found.append(f"re-check on {e.at:%Y-%m-%d}: {e.detail.get('reason', '')}")
    return found or ["a review was asked for (the review policy, or a fact check that contradicts it)"]


def candidate_view(engine: MemoryEngine, record: MemoryRecord, threshold: float) -> CandidateView:
    """One pending memory as the queue shows it."""
    events = engine.history(record.id)
    created = next((dict(e.detail) for e in events if e.kind in {EventKind.CREATE, EventKind.IMPORT}), {})
    said_by = str(created.get("said_by") or record.user_id)
    lines, omitted, note = conversation(engine, record, said_by)
    return CandidateView(
        record=record,
        said_by=said_by,
        gate=str(created.get("gate") or NO_GATE),
        knowledge=str(created.get("knowledge") or "silent: no passage of the knowledge base states or contradicts it"),
        threshold=threshold,
        fact_checks=fact_checks(events, created),
        reasons=reasons(record, created, events, threshold),
        lines=lines,
        omitted=omitted,
        transcript_note=note,
        refusals=refusals(engine, record),
        comparisons=comparisons(engine, record, created),
    )


def candidate_views(engine: MemoryEngine, records: Sequence[MemoryRecord]) -> list[CandidateView]:
    """The queue's candidates, in the queue's order."""
    threshold = veracity.threshold(Risk.MEDIUM, engine.config.veracity)
    return [candidate_view(engine, r, threshold) for r in records]
