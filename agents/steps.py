"""The steps of the memory-building team: what each role does to the shared :class:`BuildState`.

Extractors propose candidates, the conflict resolver judges flagged pairs, the veracity checker scores
the candidates and applies the review policy, the reviewer decides on gated ones and the committer
writes through the engine (the only writer). The truth gate's step lives in :mod:`agents.truth`; the
wiring of the steps into a graph in :mod:`agents.team`.
"""

from __future__ import annotations

from autogen_core.models import ChatCompletionClient

from agents.building import BuildAction, BuildState, Candidate, Outcome, Step
from agents.checks import FactChecker, LLMJudge, quote, quote_line, unquote
from agents.reviewers import ReviewAction, ReviewDecision, Reviewer, ReviewItem, safe_review
from agents.schemas import Extraction, ResidualExtraction, ResponseExtraction
from agents.structured import call_structured, system, user
from memory import review as review_queue
from memory.audit import EventKind
from memory.conflicts import Verdict
from memory.engine import MemoryEngine, WriteAction
from memory.knowledge_check import Stance, assess
from memory.models import Category, MemoryRecord, MemoryType, Provenance, Status
from prompts import render

_REPLIES: dict[MemoryType, type[Extraction | ResidualExtraction | ResponseExtraction]] = {
    MemoryType.RESIDUAL: ResidualExtraction,
    MemoryType.USER_QUESTION: Extraction,
    MemoryType.LLM_RESPONSE: ResponseExtraction,
}
_PROMPTS = {
    MemoryType.RESIDUAL: "extract_residual",
    MemoryType.USER_QUESTION: "extract_user_question",
    MemoryType.LLM_RESPONSE: "extract_llm_response",
}
FACT_REASONS = {
    1.0: "the checker found it supported by the evidence",
    0.5: "the checker found the evidence does not settle it",
    0.0: "the checker found it contradicted by the evidence",
}
# the engine's write actions as build outcomes (a pending-review record is QUEUED whatever the write did)
_WRITTEN = {
    WriteAction.CREATED: BuildAction.COMMITTED,
    WriteAction.MERGED: BuildAction.MERGED,
    WriteAction.SUPERSEDED: BuildAction.SUPERSEDED,
}


def extractor_step(client: ChatCompletionClient, memory_type: MemoryType) -> Step:
    """The step of one refined-memory extractor."""

    async def step(state: BuildState) -> str:
        name = f"extract_{memory_type.value}"
        prompt = render(_PROMPTS[memory_type], domain=state.domain, conversation=quote(state.transcript))
        outcome = await call_structured(
            client, name, [system(prompt), user("Extract the memories as JSON.")], _REPLIES[memory_type], state.usage
        )
        if outcome.value is None:
            # what the expert said is still used: the truth gate adds the expert's own words and the
            # accepted answer when no extracted memory of that type survives
            state.errors.append(f"{name}: rejected after {outcome.attempts} attempt(s): {outcome.error}")
            return f"0 {memory_type.value} memories (rejected: {outcome.error})"
        seen = {c.text.lower() for c in state.candidates}
        fresh = [m for m in outcome.value.to_memories() if unquote(m.text).lower() not in seen]
        for memory in fresh:
            category = Category(memory.category.value)
            text, mistake = unquote(memory.text), not memory.grounded
            state.candidates.append(Candidate(type=memory_type, text=text, category=category, mistake=mistake))
        return f"{len(fresh)} {memory_type.value} memories"

    return step


def resolver_step(engine: MemoryEngine, client: ChatCompletionClient) -> Step:
    """The conflict resolver: judge only the pairs the similarity check flags."""

    async def step(state: BuildState) -> str:
        judge = LLMJudge(client, state.usage, config=engine.config.conflicts)
        judged = 0
        for candidate in state.candidates:
            for record, similarity in engine.conflict_candidates(candidate.text, candidate.type, state.user_id):
                verdict = await judge.judge(candidate.text, record.text, similarity)
                candidate.verdicts[record.id] = verdict
                if verdict is not Verdict.INDEPENDENT:
                    candidate.conflict_texts.append(f"{verdict.value}: {record.text}")
                judged += 1
        state.errors.extend(f"conflict_resolver: {f}" for f in judge.failures)
        return f"judged {judged} flagged pair(s)"

    return step


MAX_PASSAGES = 4  # knowledge passages in one fact-check prompt (about 160 tokens each)


def knowledge_evidence(engine: MemoryEngine, state: BuildState) -> str:
    """Ask the knowledge base about every candidate; the passages found, as evidence text for the fact check.

    Each candidate gets the knowledge base's stance (:func:`memory.knowledge_check.assess`), which the
    committer hands to the engine and the review policy reads (a contradiction goes to a reviewer).
    """
    texts = [c.text for c in state.candidates]
    found = engine.knowledge.relevant(texts) if texts else []
    passages: dict[str, str] = {}
    for candidate, hits in zip(state.candidates, found, strict=True):
        candidate.knowledge = assess(candidate.text, hits)
        candidate.passages = len(hits)
        for hit in hits:
            passages.setdefault(hit.chunk.id, f"[{quote_line(hit.chunk.citation())}] {quote_line(hit.chunk.text)}")
    stats = state.evidence_stats
    stats.candidates = len(texts)
    stats.with_passages = sum(c.passages > 0 for c in state.candidates)
    stats.supported = sum(c.knowledge is not None and c.knowledge.stance is Stance.SUPPORTS for c in state.candidates)
    stats.contradicted = sum(
        c.knowledge is not None and c.knowledge.stance is Stance.CONTRADICTS for c in state.candidates
    )
    chosen = list(passages.values())[:MAX_PASSAGES]
    return "Reference passages from the knowledge base:\n" + "\n".join(chosen) if chosen else ""


def veracity_step(engine: MemoryEngine, client: ChatCompletionClient) -> Step:
    """The veracity checker: F in {0, 0.5, 1} against trusted evidence, then the review policy.

    The evidence is the reference text, what the expert said and the knowledge base's passages for the
    candidates (found by the truth gate). Sets ``state.needs_review``, on which the team's graph routes
    to the reviewer or the committer.
    """

    async def step(state: BuildState) -> str:
        checker = FactChecker(client, state.domain, state.usage)
        if state.knowledge_evidence is None:  # the truth gate asks the knowledge base; a team without one, here
            state.knowledge_evidence = knowledge_evidence(engine, state)
        evidence = "\n".join(part for part in [state.expert_evidence, state.knowledge_evidence] if part)
        replies = await checker.check_all([c.text for c in state.candidates], evidence)
        for candidate, reply in zip(state.candidates, replies, strict=True):
            if reply is not None:
                candidate.fact_check = reply.score
                candidate.fact_reason = FACT_REASONS[reply.score]
            key = "none" if candidate.fact_check is None else str(candidate.fact_check)
            state.evidence_stats.fact_checks[key] = state.evidence_stats.fact_checks.get(key, 0) + 1
            candidate.review_reason = state.review_reason(candidate)
        state.errors.extend(f"veracity_checker: {f}" for f in checker.failures)
        queued = sum(bool(c.review_reason) for c in state.candidates)
        state.needs_review = queued > 0
        return f"review: {queued} memory(ies) need a reviewer" if queued else "no review needed"

    return step


def reviewer_step(reviewer: Reviewer | None) -> Step:
    """The human reviewer: decide now when one is plugged in, else leave the memories queued."""

    async def step(state: BuildState) -> str:
        decided = 0
        for candidate in (c for c in state.candidates if c.review_reason):
            if reviewer is None:
                continue
            item = ReviewItem(
                memory_id=None,
                text=candidate.text,
                memory_type=candidate.type.value,
                user_id=state.user_id,
                source=state.source.value,
                veracity=None,
                fact_check=candidate.fact_check,
                fact_reason=candidate.fact_reason,
                conflicts=[*candidate.conflict_texts, *_knowledge_conflict(candidate)],
                reason=candidate.review_reason,
            )
            decision = await safe_review(reviewer, item)
            if decision is None:
                state.errors.append(f"reviewer: no usable decision for {candidate.text[:60]!r}; left queued")
                continue
            candidate.decision = decision
            decided += 1
        return f"reviewed {decided} memory(ies)"

    return step


def _knowledge_conflict(candidate: Candidate) -> list[str]:
    """The passage a candidate contradicts, shown to the reviewer beside it ([] when none does)."""
    verdict = candidate.knowledge
    if verdict is None or verdict.stance is not Stance.CONTRADICTS:
        return []
    return [f"knowledge ({verdict.citation}): {verdict.passage}"]


def committer_step(engine: MemoryEngine) -> Step:
    """Commit every candidate that passed its gates through the engine (the only writer).

    When any call of the build could not reach the model (an endpoint down, a timeout), nothing is
    committed: a half-built conversation is not stored, and the caller can build it again.
    """

    async def step(state: BuildState) -> str:
        if state.usage.unreachable:  # all or nothing: a build the model dropped out of writes nothing
            state.errors += [
                f"committer: nothing written, the model could not be reached ({u})" for u in state.usage.unreachable
            ]
            return "committed nothing: the model could not be reached"
        for candidate in state.candidates:
            state.outcomes.append(_commit(engine, state, candidate))
        counts = state.counts()
        return "committed: " + ", ".join(f"{t} {dict(sorted(c.items()))}" for t, c in sorted(counts.items()))

    return step


def _commit(engine: MemoryEngine, state: BuildState, candidate: Candidate) -> Outcome:
    """Write one candidate and queue it, or apply its reviewer's decision the way the review queue does.

    A candidate a reviewer decided on during the build is written pending first, then approved, edited
    or rejected through :mod:`memory.review`: the decision is audited like one taken in the queue (the
    reviewer as actor, the text before an edit, the reason of a rejection), and a rejected memory is
    kept, archived and labelled bad, where it stays visible.
    """
    decision = candidate.decision
    result = engine.add(
        candidate.text,
        candidate.type,
        state.user_id,
        agent=state.agent,
        category=candidate.category,
        source=state.source,
        provenance=Provenance(conversation_id=state.conversation_id, origin="mbs", situation=state.situation),
        review=bool(candidate.review_reason) or decision is not None,
        fact_check=candidate.fact_check,
        verdicts=candidate.verdicts,
        knowledge=candidate.knowledge,
        actor="committer",
        note={
            "gate": candidate.gate,
            "said_by": state.user_id,
            "fallback": str(candidate.fallback).lower(),
            "fact_check": "none" if candidate.fact_check is None else str(candidate.fact_check),
            "fact_reason": candidate.fact_reason,
            "review_reason": candidate.review_reason,
        },
    )
    record = result.record
    if decision is not None:
        record = _decide(engine, record, decision, candidate.text)
    if decision is not None and decision.action is ReviewAction.REJECT:
        action = BuildAction.REJECTED
    else:
        action = BuildAction.QUEUED if record.status is Status.PENDING_REVIEW else _WRITTEN[result.action]
    return Outcome(
        action=action,
        type=candidate.type,
        text=record.text,
        memory_id=record.id,
        status=record.status,
        superseded=result.superseded,
        reason=decision.reason if decision is not None and decision.reason else candidate.review_reason,
        gate=candidate.gate,
        knowledge=candidate.knowledge.describe() if candidate.knowledge is not None else "",
    )


def _decide(engine: MemoryEngine, record: MemoryRecord, decision: ReviewDecision, text: str) -> MemoryRecord:
    """Apply a reviewer's decision to a freshly written memory through the review queue (audited there).

    A candidate that merged into an existing memory (a restatement) leaves that memory as it is; the
    decision is recorded on it as a review event naming the candidate's text.
    """
    who = decision.reviewer
    if record.status is Status.PENDING_REVIEW:
        if decision.action is ReviewAction.REJECT:
            return review_queue.reject(engine, record.id, who, decision.reason)
        if decision.action is ReviewAction.EDIT:
            return review_queue.edit(engine, record.id, decision.text or text, who)
        return review_queue.approve(engine, record.id, who)
    detail = {"decision": decision.action.value, "candidate": text, "reason": decision.reason, "merged": True}
    return engine.set_status(record.id, record.status, EventKind.REVIEW, detail, actor=f"reviewer:{who}")
