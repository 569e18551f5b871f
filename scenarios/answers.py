"""Scored answers: stage 1 (baseline, no memory) and stage 3 (injection, with memory) of the lifecycle.

Each answer comes from a fresh chatbot session and is scored against the key as its question presents
it (a paraphrase may re-letter the options) and against the record's reference (ICS, KPCS, AICS).
Stage 3 re-asks every record as its corrector and every paraphrase as another user, and reports harm,
gain and tokens per answer (:mod:`scenarios.effects`); both stages report dev and test apart when the
records carry a split.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from agents.chatbot import MarkMemory, build_chatbot
from memory.tokens import count_tokens, count_words
from scenarios import effects, metrics
from scenarios.context import Run, corrector, paraphrase_asker
from scenarios.results import (
    AlphaPoint,
    AnswerSummary,
    BaselineResult,
    Describe,
    Distribution,
    InjectionResult,
    InjectionSplit,
    Measured,
)
from scenarios.rows import AnswerRow
from scenarios.schema import Record
from scenarios.stage_loop import recorded, run_units

ALPHA = 0.1  # the paper's choice for AICS


async def answer(run: Run, record: Record, paraphrase: int | None, memory: MarkMemory | None) -> AnswerRow:
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
    return AnswerRow(
        id=record.id,
        paraphrase=paraphrase,
        split=record.split.value if record.split else None,
        user=memory.user_id if memory else None,
        answer=reply,
        letter=letter,
        key=key,
        option=record.listed_letter(letter, paraphrase),  # the chosen option's listed letter
        relettered=paraphrase is not None and record.paraphrases[paraphrase].order is not None,
        correct=letter == key,
        tokens=count_tokens(reply),
        completion_tokens=sum(u.completion_tokens for u in usage) if usage else None,
        prompt_tokens=sum(u.prompt_tokens for u in usage) if usage else None,
        words=count_words(reply),
        ics=ics,
        kpcs=kpcs,
        aics=metrics.aics(ics, kpcs, ALPHA),
        injected=memory.injected[-1] if memory and memory.injected else [],
        cited=[c.describe() for c in memory.cited[-1]] if memory and memory.cited else [],
    )


def summarise(rows: list[AnswerRow]) -> AnswerSummary:
    """Accuracy, mean ICS/KPCS/AICS, tokens per response, the alpha sweep and the distribution."""
    flags = [r.correct for r in rows]
    sweep = metrics.alpha_sweep([(r.ics, r.kpcs, r.correct) for r in rows])
    return AnswerSummary(
        records=rows,
        accuracy=metrics.accuracy(flags),
        distribution=Distribution.model_validate(metrics.distribution(flags)),
        ics=effects.mean([r.ics for r in rows]),
        kpcs=effects.mean([r.kpcs for r in rows]),
        aics=effects.mean([r.aics for r in rows]),
        tokens_per_response=Describe.of([r.tokens for r in rows]),
        answer_tokens=effects.token_means(rows),
        alpha_sweep=[AlphaPoint.model_validate(point) for point in sweep],
        best_alpha=metrics.best_alpha(sweep),
    )


async def stage1(run: Run) -> BaselineResult:
    """Baseline: every record answered without memory (with the scenario's knowledge, if it names any)."""
    started = time.monotonic()
    units = [(record.id, record) for record in run.scenario.records]

    async def without_memory(record: Record) -> AnswerRow:
        return await answer(run, record, None, run.knowledge_only(corrector(run.scenario, record)))

    rows = await run_units(run, 1, "stage 1: baseline", units, without_memory, AnswerRow)
    split_of = run.split_of()
    splits = effects.per_split(split_of, lambda s: effects.answer_metrics(effects.only(rows, split_of, s)))
    return BaselineResult(**dict(summarise(rows)), splits=splits, wall_s=time.monotonic() - started)


Job = tuple[Record, int | None, str]  # a record, which paraphrase (None: as written), who asks


def _jobs(run: Run) -> list[tuple[str, Job]]:
    """Stage 3's units: each record asked by its corrector, then each paraphrase by its asker."""
    scenario = run.scenario
    jobs: list[Job] = [(r, None, corrector(scenario, r)) for r in scenario.records]
    jobs += [(r, i, paraphrase_asker(scenario, r)) for r in scenario.records for i in range(len(r.paraphrases))]
    return [(f"{r.id}#q" if i is None else f"{r.id}#{i}@{user}", (r, i, user)) for r, i, user in jobs]


async def stage3(run: Run) -> InjectionResult:
    """Injection: each record re-asked by its corrector, each paraphrase by another user; new sessions, memory."""
    started = time.monotonic()

    async def with_memory(job: Job) -> AnswerRow:
        record, paraphrase, user = job
        return await answer(run, record, paraphrase, run.memory_for(user))

    rows = await run_units(run, 3, "stage 3: answers with memory", _jobs(run), with_memory, AnswerRow)
    originals = [r for r in rows if r.paraphrase is None]
    paraphrased = [r for r in rows if r.paraphrase is not None]
    baseline = recorded(run.checkpoint, 1, AnswerRow)  # stage 1 of this run folder, whenever it ran
    asker = ", ".join(sorted({r.user for r in paraphrased if r.user})) or None

    def measured(keep: Callable[[list[AnswerRow]], Sequence[AnswerRow]]) -> Measured:
        mine, theirs = keep(originals), keep(paraphrased)
        corrected = [r for r in mine if r.id in run.corrected]
        return Measured(
            corrected=effects.share(corrected),
            paraphrases=effects.share(theirs),
            **dict(effects.injection(keep(baseline), mine, theirs, run.corrected, asker)),
        )

    split_of = run.split_of()

    def in_split(split: str) -> InjectionSplit:
        def keep(rows: list[AnswerRow]) -> list[AnswerRow]:
            return effects.only(rows, split_of, split)

        return InjectionSplit(**dict(effects.answer_metrics(keep(originals))), **dict(measured(keep)))

    return InjectionResult(
        **dict(summarise(originals)),
        **dict(measured(list)),
        paraphrase_records=paraphrased,
        splits=effects.per_split(split_of, in_split),
        wall_s=time.monotonic() - started,
    )
