"""Stage 4 of the lifecycle: multi-user, multi-turn sessions (persistence across sessions and users).

An ask of a paraphrase is scored against the key's letter as that paraphrase presents it (see
``Record.key_for``); asks are also reported per dev / test split when the records carry one.
"""

from __future__ import annotations

import time
from typing import Any

from agents.building import BuildState, ReviewPolicy, Turn
from agents.chatbot import build_chatbot
from agents.mbs import build_memories, remember_with_judge
from memory.models import Source, VoterRole
from memory.tokens import count_tokens, count_words
from scenarios import effects, metrics
from scenarios.lifecycle import Run, answer
from scenarios.schema import Role, Session, Step


async def stage4(run: Run) -> dict[str, Any]:
    """Run every session; asks are scored, expectations on injected memories checked, feedback applied."""
    started = time.monotonic()
    sessions = []
    for done, session in enumerate(run.scenario.sessions):
        run.progress("stage 4: multi-user sessions", done, len(run.scenario.sessions))
        row = run.checkpoint.get(4, session.id)
        if row is None:
            row = await _session(run, session)
            run.checkpoint.put(4, session.id, row)
        sessions.append(row)
    run.progress("stage 4: multi-user sessions", len(sessions), len(sessions))
    asks = [s for row in sessions for s in row["steps"] if s["kind"] == "ask"]
    checks = [c for row in sessions for c in row["checks"]]
    split_of = run.split_of()
    return {
        "sessions": sessions,
        "table6": {k: metrics.describe([row[k] for row in sessions]) for k in ("turns", "tokens", "words")},
        "asks": len(asks),
        "accuracy": metrics.accuracy([a["correct"] for a in asks]),
        "persistence_rate": metrics.persistence_rate([(a["id"], a["correct"]) for a in asks], run.corrected),
        "expectations": {
            "passed": sum(c["passed"] for c in checks),
            "failed": sum(not c["passed"] for c in checks),
            "details": checks,
        },
        "feedback_events": sum(row["feedback_events"] for row in sessions),
        "splits": effects.per_split(split_of, lambda s: _asks(effects.only(asks, split_of, s), run.corrected)),
        "wall_s": time.monotonic() - started,
    }


def _asks(asks: list[effects.Row], corrected: set[str]) -> dict[str, Any]:
    return {
        "asks": len(asks),
        "accuracy": effects.accuracy(asks),
        "persistence_rate": metrics.persistence_rate([(a["id"], a["correct"]) for a in asks], corrected),
    }


async def _session(run: Run, session: Session) -> dict[str, Any]:
    memory = run.memory_for(session.user)
    steps: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    transcript: list[Turn] = []
    feedback_events = 0
    last_injected: list[str] = []
    last_correct: bool | None = None
    for step in session.steps:
        if step.ask is not None:
            record = run.scenario.record(step.ask)
            row = await answer(run, record, step.paraphrase, memory)
            last_injected, last_correct = row["injected"], row["correct"]
            steps.append({"kind": "ask", **row})
            checks.extend(_expectations(run, step, session, last_injected))
            transcript += [
                Turn(role="user", content=record.prompt(step.paraphrase)),
                Turn(role="assistant", content=row["answer"]),
            ]
        elif step.remember is not None:
            result = await remember_with_judge(run.engine, run.client, step.remember, session.user)
            steps.append(
                {"kind": "remember", "text": step.remember, "action": result.action, "superseded": result.superseded}
            )
        elif step.say is not None:
            bot = build_chatbot(run.client, memory, run.scenario.domain)
            reply = (await bot.run(task=step.say)).messages[-1].to_text()
            transcript += [Turn(role="user", content=step.say), Turn(role="assistant", content=reply)]
            steps.append({"kind": "say", "text": step.say, "answer": reply})
        elif step.feedback is not None and last_injected:
            correct = bool(last_correct) if step.feedback == "auto" else step.feedback == "correct"
            sme = run.scenario.user(session.user).role is Role.SME
            role = VoterRole.SME if sme else VoterRole.USER
            for memory_id in last_injected:
                run.engine.feedback(memory_id, correct, actor=f"user:{session.user}", role=role)
                feedback_events += 1
            steps.append({"kind": "feedback", "correct": correct, "memories": list(last_injected)})
    if any(s["kind"] == "say" for s in steps):
        await _build_session(run, session, transcript)
    text = "\n".join(t.content for t in transcript)
    return {
        "id": session.id,
        "user": session.user,
        "steps": steps,
        "checks": checks,
        "turns": sum(s["kind"] in {"ask", "say"} for s in steps),
        "tokens": count_tokens(text),
        "words": count_words(text),
        "feedback_events": feedback_events,
    }


def _expectations(run: Run, step: Step, session: Session, injected: list[str]) -> list[dict[str, Any]]:
    texts = [run.engine.get(i).text for i in injected]
    joined = " ".join(texts).lower()
    out = []
    if step.expect_memory is not None:
        out.append(
            {
                "session": session.id,
                "step": step.ask,
                "expect": step.expect_memory,
                "passed": step.expect_memory.lower() in joined,
                "injected": texts,
            }
        )
    if step.forbid_memory is not None:
        out.append(
            {
                "session": session.id,
                "step": step.ask,
                "forbid": step.forbid_memory,
                "passed": step.forbid_memory.lower() not in joined,
                "injected": texts,
            }
        )
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
