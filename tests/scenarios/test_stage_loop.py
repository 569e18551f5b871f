"""The checkpointed stage loop: recorded units are read back (old rows exactly as stored), others run once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory.engine import MemoryEngine
from scenarios.checkpoint import Checkpoint, CheckpointError
from scenarios.context import Run, fingerprint
from scenarios.rows import AnswerRow, AskStep, SessionRun
from scenarios.schema import Record, Scenario, bundled, load_scenario
from scenarios.stage_loop import recorded, run_units
from tests.scenarios.fake_society import society

# a stage-1 row as the first lifecycle version wrote it: no split, user, key, option, relettered or
# client token counts
OLD_ROW: dict[str, Any] = {
    "id": "tropicamide",
    "paraphrase": None,
    "answer": "Answer: D. This is my best guess.",
    "letter": "D",
    "correct": False,
    "tokens": 9,
    "words": 7,
    "ics": 0.0,
    "kpcs": 0.25,
    "aics": 0.225,
    "injected": [],
}


def _write_progress(folder: Path, scenario: Scenario, *entries: dict[str, Any]) -> None:
    header = {"header": {"scenario": scenario.name, "fingerprint": fingerprint(scenario)}}
    lines = [json.dumps(entry, sort_keys=True) for entry in (header, *entries)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "progress.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _row(record: Record) -> AnswerRow:
    return AnswerRow(
        id=record.id,
        paraphrase=None,
        split=None,
        user=None,
        answer="Answer: A.",
        letter="A",
        key=record.key,
        option="A",
        relettered=False,
        correct=record.key == "A",
        tokens=3,
        completion_tokens=3,
        prompt_tokens=40,
        words=2,
        ics=0.0,
        kpcs=0.0,
        aics=0.0,
        injected=[],
    )


async def test_recorded_units_are_read_back_and_the_rest_run_once(engine: MemoryEngine, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["tropicamide"])
    folder = tmp_path / "run"
    _write_progress(folder, scenario, {"stage": 1, "unit": "tropicamide", "result": OLD_ROW})
    run = Run(scenario, engine, society(), Checkpoint(folder, scenario.name, fingerprint(scenario)))
    seen: list[tuple[str, int, int]] = []
    run.progress = lambda label, done, total: seen.append((label, done, total))
    worked: list[str] = []

    async def work(record: Record) -> AnswerRow:
        worked.append(record.id)
        return _row(record)

    units = [(r.id, r) for r in scenario.records]
    rows = await run_units(run, 1, "stage 1: baseline", units, work, AnswerRow)

    assert worked == [r.id for r in scenario.records[1:]]  # the recorded first record was not redone
    assert [r.id for r in rows] == [r.id for r in scenario.records]
    assert rows[0].as_json() == OLD_ROW  # an old row keeps its own keys: no nulls added for newer fields
    assert rows[0].relettered is False and rows[0].completion_tokens is None  # missing reads as missing
    n = len(units)
    assert seen == [("stage 1: baseline", done, n) for done in range(n + 1)]
    lines = [json.loads(line) for line in (folder / "progress.jsonl").read_text().splitlines()]
    assert [(e["stage"], e["unit"]) for e in lines[1:]] == [(1, r.id) for r in scenario.records]
    assert lines[2]["result"] == _row(scenario.records[1]).as_json()

    again = await run_units(run, 1, "stage 1: baseline", units, work, AnswerRow)  # a re-run redoes nothing
    assert len(worked) == n - 1 and [r.as_json() for r in again] == [r.as_json() for r in rows]


async def test_a_result_that_does_not_fit_its_row_is_a_checkpoint_error(engine: MemoryEngine, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["tropicamide"])
    folder = tmp_path / "run"
    broken = {k: v for k, v in OLD_ROW.items() if k != "correct"}
    _write_progress(folder, scenario, {"stage": 1, "unit": "tropicamide", "result": broken})
    run = Run(scenario, engine, society(), Checkpoint(folder, scenario.name, fingerprint(scenario)))

    async def work(record: Record) -> AnswerRow:
        raise AssertionError("a recorded unit must not run")

    with pytest.raises(CheckpointError, match=r"stage 1 unit 'tropicamide': correct: Field required; use a new"):
        await run_units(run, 1, "stage 1: baseline", [("tropicamide", scenario.records[0])], work, AnswerRow)


def test_recorded_reads_a_stage_in_completion_order_with_typed_steps(tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["preference-change"])
    ask = {**OLD_ROW, "kind": "ask"}
    remember = {"kind": "remember", "text": "I prefer tea", "action": "superseded", "superseded": ["m1"]}
    session = {
        "id": "s-1",
        "user": "alice",
        "steps": [ask, remember],
        "checks": [],
        "turns": 1,
        "tokens": 5,
        "words": 4,
        "feedback_events": 0,
    }
    entries = [
        {"stage": 1, "unit": "b", "result": {**OLD_ROW, "id": "b"}},
        {"stage": 4, "unit": "s-1", "result": session},
        {"stage": 1, "unit": "a", "result": {**OLD_ROW, "id": "a"}},
    ]
    _write_progress(tmp_path, scenario, *entries)
    checkpoint = Checkpoint(tmp_path, scenario.name, fingerprint(scenario))

    assert [r.id for r in recorded(checkpoint, 1, AnswerRow)] == ["b", "a"]
    (run,) = recorded(checkpoint, 4, SessionRun)
    assert [type(step).__name__ for step in run.steps] == ["AskStep", "RememberStep"]
    assert run.asks() == [AskStep.model_validate(ask)] and run.as_json() == session
