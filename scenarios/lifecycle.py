"""The four-stage MARK lifecycle (spec M8) over a scenario.

1 baseline: the chatbot answers every record without memory; 2 construction: an SME correction
chat for each wrongly answered record, then the memory-building team; 3 injection: every record
re-answered by its corrector, and every paraphrase (options re-lettered where the scenario says so)
asked by another user, each in a new session with memory; 4 multi-user sessions that test whether
corrections persist across sessions and users. Each finished record or session is checkpointed, so
an interrupted run continues where it stopped. Stage 3 also reports harm, gain and tokens per answer
(``scenarios.effects``), and every stage reports dev and test apart when records carry a split.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autogen_core.models import ChatCompletionClient

from agents.building import BuildState, ReviewPolicy
from agents.chatbot import MarkMemory, build_chatbot
from agents.correction import run_correction
from agents.evaluator import KeyPointExtractor
from agents.human import ScriptedInput, build_sme_proxy
from agents.mbs import build_memories
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source
from memory.tokens import count_tokens, count_words
from scenarios import effects, metrics
from scenarios.checkpoint import Checkpoint
from scenarios.schema import Record, Role, Scenario

Progress = Callable[[str, int, int], None]
ALPHA = 0.1  # the paper's choice for AICS


@dataclass
class Run:
    """Everything one lifecycle run needs."""

    scenario: Scenario
    engine: MemoryEngine
    client: ChatCompletionClient
    checkpoint: Checkpoint
    progress: Progress = field(default=lambda label, done, total: None)
    corrected: set[str] = field(default_factory=set)
    points: dict[str, list[str]] = field(default_factory=dict)

    def memory_for(self, user_id: str) -> MarkMemory:
        """A user's MarkMemory with the scenario's retrieval settings."""
        return MarkMemory(self.engine, user_id, k=self.scenario.k, preset=self.scenario.preset)

    async def key_points_for(self, record: Record, paraphrase: int | None = None) -> list[str]:
        """Key points of a record without hand-written ones (evaluator agent's, else derived), key as shown."""
        shown = record.key_for(paraphrase)
        slot = f"{record.id}#{shown}"
        if slot not in self.points:
            extracted = None
            if self.scenario.llm_key_points:
                reference = record.reference(paraphrase)
                extracted = await KeyPointExtractor(self.client, self.scenario.domain).key_points(reference)
            self.points[slot] = extracted or metrics.derive_key_points(
                shown, record.options[record.key], record.explanation
            )
        return self.points[slot]

    def split_of(self) -> dict[str, str | None]:
        """Each record's split (dev / test), None for records without one."""
        return {r.id: r.split.value if r.split else None for r in self.scenario.records}

    def embed(self, texts: list[str]) -> list[list[float]]:
        """The engine's embedder (used for ICS/KPCS)."""
        return self.engine.embedder.embed(texts)


def fingerprint(scenario: Scenario) -> str:
    """A hash of the scenario's content: a run folder only resumes the same scenario."""
    return hashlib.sha256(scenario.model_dump_json().encode()).hexdigest()[:16]


def corrector(scenario: Scenario, record: Record) -> str:
    """The user who corrects a record (its correction user, else the first SME, else the first user)."""
    if record.correction:
        return record.correction.user
    smes = [u.id for u in scenario.users if u.role is Role.SME]
    return smes[0] if smes else scenario.users[0].id


def paraphrase_asker(scenario: Scenario, record: Record) -> str:
    """Who asks a record's paraphrases in stage 3: the scenario's ``paraphrase_user``, else another user.

    The default is the first non-SME user other than the corrector, then any other user; a scenario
    with a single user falls back to the corrector.
    """
    if scenario.paraphrase_user is not None:
        return scenario.paraphrase_user
    fixer = corrector(scenario, record)
    others = [u for u in scenario.users if u.id != fixer]
    users = [u.id for u in others if u.role is not Role.SME] or [u.id for u in others]
    return users[0] if users else fixer


async def answer(run: Run, record: Record, paraphrase: int | None, memory: MarkMemory | None) -> dict[str, Any]:
    """One answer in a fresh session, scored against the key as presented and the reference."""
    bot = build_chatbot(run.client, memory, run.scenario.domain)
    result = await bot.run(task=record.prompt(paraphrase))
    reply = result.messages[-1].to_text() if result.messages else ""
    usage = [m.models_usage for m in result.messages if m.models_usage is not None]
    letter = metrics.answer_letter(reply, record.shown_options(paraphrase))
    key = record.key_for(paraphrase)
    reference = record.reference(paraphrase)
    points = record.key_points or await run.key_points_for(record, paraphrase)
    ics = metrics.ics(reply, reference, run.embed)
    kpcs = metrics.kpcs(reply, points, run.embed)
    injected = memory.injected[-1] if memory and memory.injected else []
    return {
        "id": record.id,
        "paraphrase": paraphrase,
        "split": record.split.value if record.split else None,
        "user": memory.user_id if memory else None,
        "answer": reply,
        "letter": letter,
        "key": key,
        "option": record.listed_letter(letter, paraphrase),  # the chosen option's listed letter
        "relettered": paraphrase is not None and record.paraphrases[paraphrase].order is not None,
        "correct": letter == key,
        "tokens": count_tokens(reply),
        "completion_tokens": sum(u.completion_tokens for u in usage) if usage else None,
        "prompt_tokens": sum(u.prompt_tokens for u in usage) if usage else None,
        "words": count_words(reply),
        "ics": ics,
        "kpcs": kpcs,
        "aics": metrics.aics(ics, kpcs, ALPHA),
        "injected": injected,
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy, mean ICS/KPCS/AICS, tokens per response, the alpha sweep and the distribution."""
    flags = [bool(r["correct"]) for r in rows]
    sweep = metrics.alpha_sweep([(r["ics"], r["kpcs"], r["correct"]) for r in rows])
    return {
        "records": rows,
        "accuracy": metrics.accuracy(flags),
        "distribution": metrics.distribution(flags),
        "ics": _mean([r["ics"] for r in rows]),
        "kpcs": _mean([r["kpcs"] for r in rows]),
        "aics": _mean([r["aics"] for r in rows]),
        "tokens_per_response": metrics.describe([r["tokens"] for r in rows]),
        "answer_tokens": effects.token_means(rows),
        "alpha_sweep": sweep,
        "best_alpha": metrics.best_alpha(sweep),
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


async def stage1(run: Run) -> dict[str, Any]:
    """Baseline: no memory."""
    started = time.monotonic()
    rows = []
    for done, record in enumerate(run.scenario.records):
        run.progress("stage 1: baseline", done, len(run.scenario.records))
        row = run.checkpoint.get(1, record.id)
        if row is None:
            row = await answer(run, record, None, None)
            run.checkpoint.put(1, record.id, row)
        rows.append(row)
    run.progress("stage 1: baseline", len(rows), len(rows))
    split_of = run.split_of()
    splits = effects.per_split(split_of, lambda s: effects.answer_metrics(effects.only(rows, split_of, s)))
    return {**summarise(rows), "splits": splits, "wall_s": time.monotonic() - started}


async def stage2(run: Run, wrong: list[str]) -> dict[str, Any]:
    """Construction: SME correction chats on the wrongly answered records, then the MBS team."""
    started = time.monotonic()
    records = [r for r in run.scenario.records if r.id in wrong and r.correction]
    conversations = []
    for done, record in enumerate(records):
        run.progress("stage 2: SME corrections", done, len(records))
        row = run.checkpoint.get(2, record.id)
        if row is None:
            row = await _correct(run, record)
            run.checkpoint.put(2, record.id, row)
        conversations.append(row)
        run.corrected.add(record.id)
    run.progress("stage 2: SME corrections", len(records), len(records))
    split_of = run.split_of()
    splits = effects.per_split(
        split_of, lambda s: effects.correction_metrics(effects.only(conversations, split_of, s, key="record"))
    )
    return {**summarise_corrections(conversations), "splits": splits, "wall_s": time.monotonic() - started}


def summarise_corrections(conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """Tables 4 and 5 and the LLM usage of finished correction conversations."""
    usage: dict[str, dict[str, int]] = {}
    for conv in conversations:
        for agent, counts in conv["usage"]["agents"].items():
            slot = usage.setdefault(agent, {})
            for key, value in counts.items():
                slot[key] = slot.get(key, 0) + value
    total = {k: sum(a.get(k, 0) for a in usage.values()) for k in ("calls", "prompt_tokens", "completion_tokens")}
    per_type = {t.value: _mean([c["memories"][t.value] for c in conversations]) for t in MemoryType}
    return {
        "conversations": conversations,
        "table4": {
            "turns": metrics.describe([c["rounds"] for c in conversations]),  # SME rounds, the paper's turns
            **{k: metrics.describe([c[k] for c in conversations]) for k in ("tokens", "words")},
        },
        "table5": {"conversations": len(conversations), **per_type},
        "usage": {"agents": usage, "total": total},
    }


async def _correct(run: Run, record: Record) -> dict[str, Any]:
    assert record.correction is not None
    user_id = record.correction.user
    conversation = f"{run.scenario.name}:{record.id}"
    _discard_partial(run.engine, conversation)
    sme = build_sme_proxy(ScriptedInput(record.correction.script), name="sme")
    chat = await run_correction(
        build_chatbot(run.client, None, run.scenario.domain), sme, record.prompt(), run.scenario.max_correction_turns
    )
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
    await build_memories(run.engine, run.client, state)
    built = state.report()
    return {
        "record": record.id,
        "rounds": chat.rounds,
        "tokens": chat.tokens,
        "words": chat.words,
        "accepted": chat.accepted,
        "memories": built["extracted"],
        "outcomes": built["counts"],
        "errors": built["errors"],
        "usage": built["usage"],
        "transcript": [t.model_dump() for t in chat.turns],
    }


def _discard_partial(engine: MemoryEngine, conversation: str) -> None:
    """Forget memories an interrupted build of this conversation left, so the redo starts clean."""
    for record in engine.list():
        if record.provenance.conversation_id == conversation:
            engine.forget(record.id, actor="resume")


async def stage3(run: Run) -> dict[str, Any]:
    """Injection: each record re-asked by its corrector, each paraphrase by another user; new sessions, memory."""
    started = time.monotonic()
    scenario = run.scenario
    jobs = [(r, None, corrector(scenario, r)) for r in scenario.records] + [
        (r, i, paraphrase_asker(scenario, r)) for r in scenario.records for i in range(len(r.paraphrases))
    ]
    rows = []
    for done, (record, paraphrase, user) in enumerate(jobs):
        run.progress("stage 3: answers with memory", done, len(jobs))
        unit = f"{record.id}#q" if paraphrase is None else f"{record.id}#{paraphrase}@{user}"
        row = run.checkpoint.get(3, unit)
        if row is None:
            row = await answer(run, record, paraphrase, run.memory_for(user))
            run.checkpoint.put(3, unit, row)
        rows.append(row)
    run.progress("stage 3: answers with memory", len(jobs), len(jobs))
    originals = [r for r in rows if r["paraphrase"] is None]
    paraphrased = [r for r in rows if r["paraphrase"] is not None]
    baseline = run.checkpoint.results(1)  # stage 1 of this run folder, whenever it ran
    askers = sorted({u for u in (r.get("user") for r in paraphrased) if u})
    asker = ", ".join(askers) or None

    def measured(keep: Callable[[list[dict[str, Any]]], Sequence[effects.Row]]) -> dict[str, Any]:
        mine, theirs = keep(originals), keep(paraphrased)
        corrected = [r for r in mine if r["id"] in run.corrected]
        return {
            "corrected": {"accuracy": effects.accuracy(corrected), "n": len(corrected)},
            "paraphrases": {"accuracy": effects.accuracy(theirs), "n": len(theirs)},
            **effects.injection(keep(baseline), mine, theirs, run.corrected, asker),
        }

    split_of = run.split_of()
    splits = effects.per_split(
        split_of,
        lambda s: {
            **effects.answer_metrics(effects.only(originals, split_of, s)),
            **measured(lambda rows: effects.only(rows, split_of, s)),
        },
    )
    return {
        **summarise(originals),
        **measured(list),
        "paraphrase_records": paraphrased,
        "splits": splits,
        "wall_s": time.monotonic() - started,
    }
