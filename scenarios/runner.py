"""Run a scenario's lifecycle into a run folder: isolated store, checkpoints, report files."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient

from agents.providers import build_client, describe_provider
from memory import ledger, maintenance
from memory.config import Settings
from memory.engine import MemoryEngine, utcnow
from scenarios.checkpoint import Checkpoint
from scenarios.lifecycle import Progress, Run, fingerprint, stage1, stage2, stage3, summarise_corrections
from scenarios.report import write_report
from scenarios.schema import Scenario, ScenarioError
from scenarios.sessions import stage4


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
) -> dict[str, Any]:
    """Run the requested stages (default: the scenario's plan) and write report.json/.md and plots."""
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
        run.corrected = {r["record"] for r in checkpoint.results(2)}
        report: dict[str, Any] = {
            "scenario": scenario.name,
            "model": describe_provider(settings),
            "stages_run": stages,
            "embedder": engine.embedder.name,
        }
        if 1 in stages:
            report["stage1"] = await stage1(run)
        if 2 in stages:
            report["stage2"] = await stage2(run, _wrong(scenario, report.get("stage1")))
        elif checkpoint.results(2):  # corrections finished by an earlier (possibly interrupted) run
            report["stage2"] = {**summarise_corrections(checkpoint.results(2)), "partial": True}
        if 3 in stages:
            report["stage3"] = await stage3(run)
        if 4 in stages:
            report["stage4"] = await stage4(run)
        report["memories"] = _memory_counts(engine)
        report["memory_ledger"] = [row.model_dump() for row in ledger.memories(engine)]
        report["refused"] = [row.model_dump() for row in ledger.refusals(engine)]
    finally:
        engine.close()
    report["wall_s"] = time.monotonic() - started
    report["files"] = {k: str(v) for k, v in write_report(out_dir, report).items()}
    return report


def _wrong(scenario: Scenario, stage1_result: dict[str, Any] | None) -> list[str]:
    if stage1_result is None:
        return [r.id for r in scenario.records]
    return [row["id"] for row in stage1_result["records"] if not row["correct"]]


def _memory_counts(engine: MemoryEngine) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for record in engine.list():
        row = counts.setdefault(record.type.value, {})
        row[record.status.value] = row.get(record.status.value, 0) + 1
    return counts
