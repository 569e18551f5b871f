"""Run a scenario's four-stage MARK lifecycle (spec M8) into a run folder: isolated store, checkpoints, report.

1 baseline: the chatbot answers every record without memory (with the scenario's knowledge files, when
it names any: a knowledge-only baseline); 2 construction: an SME correction chat
for each wrongly answered record, then the memory-building team; 3 injection: every record re-answered
by its corrector, and every paraphrase (options re-lettered where the scenario says so) asked by another
user, each in a new session with memory; 4 multi-user sessions that test whether corrections persist
across sessions and users. Stages 1 and 3 live in :mod:`scenarios.answers`, stage 2 in
:mod:`scenarios.corrections`, stage 4 in :mod:`scenarios.sessions`. Each finished record or session is
checkpointed (:mod:`scenarios.stage_loop`), so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import time
from pathlib import Path

from autogen_core.models import ChatCompletionClient

from agents.providers import build_client, describe_provider
from memory import ledger, maintenance
from memory.config import Settings
from memory.engine import MemoryEngine, utcnow
from scenarios.answers import stage1, stage3
from scenarios.checkpoint import Checkpoint
from scenarios.context import Progress, Run, fingerprint
from scenarios.corrections import stage2, summarise_corrections
from scenarios.report import write_report
from scenarios.results import BaselineResult, EarlierCorrections, KnowledgeRow, LifecycleReport
from scenarios.rows import Conversation
from scenarios.schema import Scenario, ScenarioError
from scenarios.sessions import stage4
from scenarios.stage_loop import recorded


def parse_stages(text: str) -> list[int]:
    """``"1,2,3"`` -> [1, 2, 3]; anything else is a clear error."""
    try:
        stages = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ScenarioError(f"stages must be a comma-separated list of 1-4, not {text!r}") from None
    unknown = [s for s in stages if s not in (1, 2, 3, 4)]
    if unknown or not stages:
        raise ScenarioError(f"unknown stage(s) {unknown or text!r}; stages are 1, 2, 3, 4")
    return stages


async def run_lifecycle(
    scenario: Scenario,
    settings: Settings,
    out_dir: Path,
    stages: list[int] | None = None,
    client: ChatCompletionClient | None = None,
    progress: Progress | None = None,
) -> LifecycleReport:
    """Run the requested stages (default: the scenario's plan) and write report.json/.md and plots.

    The returned report's ``as_json()`` is what ``report.json`` holds, plus the ``files`` written.
    """
    started = time.monotonic()
    stages = stages or scenario.stages
    run_settings = settings.model_copy(update={"home": out_dir / "store"})
    checkpoint = Checkpoint(out_dir, scenario.name, fingerprint(scenario))
    engine = MemoryEngine.open(run_settings)
    try:
        maintenance.run_if_due(engine, utcnow(), settings.maintenance.every_hours)
        run = Run(scenario, engine, client or build_client(settings), checkpoint)
        if progress is not None:
            run.progress = progress
        loaded = _load_knowledge(run)
        earlier = recorded(checkpoint, 2, Conversation)
        run.corrected = {c.record for c in earlier}
        report = LifecycleReport(
            scenario=scenario.name,
            model=describe_provider(settings),
            stages_run=stages,
            embedder=engine.embedder.name,
            knowledge=loaded,
            memories={},
            memory_ledger=[],
            refused=[],
            wall_s=0.0,
        )  # a stage is set once it ran; one that did not run stays absent from the report
        if 1 in stages:
            report.stage1 = await stage1(run)
        if 2 in stages:
            report.stage2 = await stage2(run, _wrong(scenario, report.stage1))
        elif earlier:  # corrections finished by an earlier (possibly interrupted) run
            report.stage2 = EarlierCorrections(**dict(summarise_corrections(earlier)), partial=True)
        if 3 in stages:
            report.stage3 = await stage3(run)
        if 4 in stages:
            report.stage4 = await stage4(run)
        report.memories = _memory_counts(engine)
        report.memory_ledger = ledger.memories(engine)
        report.refused = ledger.refusals(engine)
    finally:
        engine.close()
    report.wall_s = time.monotonic() - started
    report.files = {k: str(v) for k, v in write_report(out_dir, report.as_json()).items()}
    return report


def _load_knowledge(run: Run) -> list[KnowledgeRow]:
    """Add the scenario's knowledge files to the run's store (unchanged files are left as they are)."""
    files = run.scenario.knowledge_files()
    if not files:
        return []
    run.knowledge = run.engine.knowledge
    added = run.knowledge.add(files, now=utcnow(), actor="lifecycle")
    return [
        KnowledgeRow(source=r.source.name, version=r.source.version, passages=r.source.chunks, action=r.action.value)
        for r in added
    ]


def _wrong(scenario: Scenario, stage1_result: BaselineResult | None) -> list[str]:
    if stage1_result is None:
        return [r.id for r in scenario.records]
    return [row.id for row in stage1_result.records if not row.correct]


def _memory_counts(engine: MemoryEngine) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for record in engine.list():
        row = counts.setdefault(record.type.value, {})
        row[record.status.value] = row.get(record.status.value, 0) + 1
    return counts
