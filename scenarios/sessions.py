"""Stage 4 of the lifecycle: multi-user, multi-turn sessions (persistence across sessions and users).

An ask of a paraphrase is scored against the key's letter as that paraphrase presents it (see
``Record.key_for``); asks are also reported per dev / test split when the records carry one.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from agents.building import BuildState, ReviewPolicy, Turn
from agents.chatbot import build_chatbot
from agents.checks import remember_with_judge
from agents.team import build_memories
from memory.models import Source, VoterRole
from memory.tokens import count_tokens, count_words
from scenarios import effects, metrics
from scenarios.answers import answer
from scenarios.context import Run
from scenarios.results import AskMetrics, ConversationStats, Describe, Expectations, SessionsResult
from scenarios.rows import (
    AnswerRow,
    AskStep,
    ExpectationCheck,
    FeedbackStep,
    RememberStep,
    SayStep,
    SessionRun,
    SessionStep,
)
from scenarios.schema import Role, Session, Step
from scenarios.stage_loop import run_units


async def stage4(run: Run) -> SessionsResult:
    """Run every session; asks are scored, expectations on injected memories checked, feedback applied."""
    started = time.monotonic()
    units = [(session.id, session) for session in run.scenario.sessions]

    async def in_session(session: Session) -> SessionRun:
        return await _session(run, session)

    sessions = await run_units(run, 4, "stage 4: multi-user sessions", units, in_session, SessionRun)
    asks = [ask for row in sessions for ask in row.asks()]
    checks = [c for row in sessions for c in row.checks]
    split_of = run.split_of()

    def in_split(split: str) -> AskMetrics:
        return _asks(effects.only(asks, split_of, split), run.corrected)

    return SessionsResult(
        sessions=sessions,
        table6=ConversationStats(
            turns=Describe.of([row.turns for row in sessions]),
            tokens=Describe.of([row.tokens for row in sessions]),
            words=Describe.of([row.words for row in sessions]),
        ),
        asks=len(asks),
        accuracy=metrics.accuracy([a.correct for a in asks]),
        persistence_rate=metrics.persistence_rate([(a.id, a.correct) for a in asks], run.corrected),
        expectations=Expectations(
            passed=sum(c.passed for c in checks),
            failed=sum(not c.passed for c in checks),
            details=checks,
        ),
        feedback_events=sum(row.feedback_events for row in sessions),
        splits=effects.per_split(split_of, in_split),
        wall_s=time.monotonic() - started,
    )


def _asks(asks: Sequence[AnswerRow], corrected: set[str]) -> AskMetrics:
    return AskMetrics(
        asks=len(asks),
        accuracy=effects.accuracy(asks),
        persistence_rate=metrics.persistence_rate([(a.id, a.correct) for a in asks], corrected),
    )


async def _session(run: Run, session: Session) -> SessionRun:
    memory = run.memory_for(session.user)
    steps: list[SessionStep] = []
    checks: list[ExpectationCheck] = []
    transcript: list[Turn] = []
    feedback_events = 0
    last: AnswerRow | None = None  # the previous answer, whose injected memories feedback rates
    for step in session.steps:
        if step.ask is not None:
            record = run.scenario.record(step.ask)
            last = await answer(run, record, step.paraphrase, memory)
            steps.append(AskStep(kind="ask", **dict(last)))
            checks.extend(_expectations(run, step, session, last.injected))
            transcript += [
                Turn(role="user", content=record.prompt(step.paraphrase)),
                Turn(role="assistant", content=last.answer),
            ]
        elif step.remember is not None:
            result = await remember_with_judge(run.engine, run.client, step.remember, session.user)
            steps.append(
                RememberStep(kind="remember", text=step.remember, action=result.action, superseded=result.superseded)
            )
        elif step.say is not None:
            bot = build_chatbot(run.client, memory, run.scenario.domain)
            reply = (await bot.run(task=step.say)).messages[-1].to_text()
            transcript += [Turn(role="user", content=step.say), Turn(role="assistant", content=reply)]
            steps.append(SayStep(kind="say", text=step.say, answer=reply))
        elif step.feedback is not None and last is not None and last.injected:
            correct = last.correct if step.feedback == "auto" else step.feedback == "correct"
            sme = run.scenario.user(session.user).role is Role.SME
            role = VoterRole.SME if sme else VoterRole.USER
            for memory_id in last.injected:
                run.engine.feedback(memory_id, correct, actor=f"user:{session.user}", role=role)
                feedback_events += 1
            steps.append(FeedbackStep(kind="feedback", correct=correct, memories=list(last.injected)))
    if any(isinstance(s, SayStep) for s in steps):
        await _build_session(run, session, transcript)
    text = "\n".join(t.content for t in transcript)
    return SessionRun(
        id=session.id,
        user=session.user,
        steps=steps,
        checks=checks,
        turns=sum(isinstance(s, AskStep | SayStep) for s in steps),
        tokens=count_tokens(text),
        words=count_words(text),
        feedback_events=feedback_events,
    )


def _expectations(run: Run, step: Step, session: Session, injected: list[str]) -> list[ExpectationCheck]:
    texts = [run.engine.get(i).text for i in injected]
    joined = " ".join(texts).lower()
    out = []
    if step.expect_memory is not None:
        passed = step.expect_memory.lower() in joined
        check = ExpectationCheck(
            session=session.id, step=step.ask, expect=step.expect_memory, passed=passed, injected=texts
        )
        out.append(check)
    if step.forbid_memory is not None:
        passed = step.forbid_memory.lower() not in joined
        check = ExpectationCheck(
            session=session.id, step=step.ask, forbid=step.forbid_memory, passed=passed, injected=texts
        )
        out.append(check)
    return out


async def _build_session(run: Run, session: Session, transcript: list[Turn]) -> None:
    """Build a session with free-form turns into memory, as an interactive chat does on exit."""
    role = run.scenario.user(session.user).role
    state = BuildState(
        transcript,
        session.user,
        source=Source.SME if role is Role.SME else Source.USER,
        policy=ReviewPolicy.AUTO,
        domain=run.scenario.domain,
        conversation_id=f"{run.scenario.name}:{session.id}",
        situation="",  # a chat may cover many subjects: no applicability check
    )
    await build_memories(run.engine, run.client, state)
