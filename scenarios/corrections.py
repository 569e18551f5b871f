"""Stage 2 of the lifecycle: an SME correction chat on each wrongly answered record, built into memory.

Each chat runs against the chatbot without memory (with the scenario's knowledge, if any) until the
SME's scripted lines accept an answer; the memory-building team then turns the transcript into memories
in the run's store. A redone conversation first forgets what an interrupted build of it left.
"""

from __future__ import annotations

import time

from agents.building import BuildState, EvidenceStats, ReviewPolicy
from agents.chatbot import build_chatbot
from agents.correction import run_correction
from agents.human import build_sme_proxy, sme_input_from
from agents.reviewers import reviewer_from
from agents.team import build_memories
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source
from scenarios import effects
from scenarios.context import Run
from scenarios.results import (
    ConversationStats,
    CorrectionsResult,
    CorrectionsSummary,
    Describe,
    MemoriesPerConversation,
)
from scenarios.rows import BuildUsage, Conversation
from scenarios.schema import Record, Role
from scenarios.stage_loop import run_units


async def stage2(run: Run, wrong: list[str]) -> CorrectionsResult:
    """Construction: SME correction chats on the wrongly answered records, then the MBS team."""
    started = time.monotonic()
    units = [(r.id, r) for r in run.scenario.records if r.id in wrong and r.correction]

    async def correct(record: Record) -> Conversation:
        return await _correct(run, record)

    conversations = await run_units(run, 2, "stage 2: SME corrections", units, correct, Conversation)
    run.corrected.update(c.record for c in conversations)
    split_of = run.split_of()
    splits = effects.per_split(split_of, lambda s: effects.correction_metrics(effects.only(conversations, split_of, s)))
    summary = summarise_corrections(conversations)
    return CorrectionsResult(**dict(summary), splits=splits, wall_s=time.monotonic() - started)


def summarise_corrections(conversations: list[Conversation]) -> CorrectionsSummary:
    """Tables 4 and 5 and the LLM usage of finished correction conversations."""
    usage: dict[str, dict[str, int]] = {}
    for conv in conversations:
        for agent, counts in conv.usage.agents.items():
            slot = usage.setdefault(agent, {})
            for key, value in counts.items():
                slot[key] = slot.get(key, 0) + value
    total = {k: sum(a.get(k, 0) for a in usage.values()) for k in ("calls", "prompt_tokens", "completion_tokens")}
    per_type = {t.value: effects.mean([c.memories[t.value] for c in conversations]) for t in MemoryType}
    return CorrectionsSummary(
        conversations=conversations,
        table4=ConversationStats(
            turns=Describe.of([c.rounds for c in conversations]),  # SME rounds, the paper's turns
            tokens=Describe.of([c.tokens for c in conversations]),
            words=Describe.of([c.words for c in conversations]),
        ),
        table5=MemoriesPerConversation(conversations=len(conversations), **per_type),
        usage=BuildUsage(agents=usage, total=total),
        evidence=total_evidence([c.evidence for c in conversations if c.evidence is not None]),
    )


def total_evidence(stats: list[EvidenceStats]) -> EvidenceStats:
    """The evidence of several builds, added up."""
    checks: dict[str, int] = {}
    for one in stats:
        for verdict, n in one.fact_checks.items():
            checks[verdict] = checks.get(verdict, 0) + n
    return EvidenceStats(
        candidates=sum(s.candidates for s in stats),
        with_passages=sum(s.with_passages for s in stats),
        supported=sum(s.supported for s in stats),
        contradicted=sum(s.contradicted for s in stats),
        fact_checks=checks,
    )


async def _correct(run: Run, record: Record) -> Conversation:
    assert record.correction is not None
    user_id = record.correction.user
    conversation = f"{run.scenario.name}:{record.id}"
    _discard_partial(run.engine, conversation)
    sme = build_sme_proxy(sme_input_from(run.scenario.sme, record.correction.script), name="sme")
    chatbot = build_chatbot(run.client, run.knowledge_only(user_id), run.scenario.domain)
    chat = await run_correction(chatbot, sme, record.prompt(), run.scenario.max_correction_turns)
    role = run.scenario.user(user_id).role
    state = BuildState(
        chat.turns,
        user_id,
        source=Source.SME if role is Role.SME else Source.USER,
        policy=ReviewPolicy.AUTO,
        evidence=record.reference(),
        domain=run.scenario.domain,
        conversation_id=conversation,
    )
    await build_memories(run.engine, run.client, state, reviewer_from(run.scenario.reviewer))
    built = state.report()
    return Conversation(
        record=record.id,
        rounds=chat.rounds,
        tokens=chat.tokens,
        words=chat.words,
        accepted=chat.accepted,
        memories=built.extracted,
        outcomes=built.counts,
        errors=built.errors,
        usage=BuildUsage.model_validate(built.usage.model_dump()),
        transcript=chat.turns,
        evidence=built.evidence,
    )


def _discard_partial(engine: MemoryEngine, conversation: str) -> None:
    """Forget memories an interrupted build of this conversation left, so the redo starts clean."""
    for record in engine.list():
        if record.provenance.conversation_id == conversation:
            engine.forget(record.id, actor="resume")
