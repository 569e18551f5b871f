"""The checkpointed loop of every lifecycle stage: skip the units an earlier run finished, run the rest.

A unit (one answer, one correction conversation, one session) has an id unique within its stage. Its
row is read back from ``progress.jsonl`` when an earlier run recorded it; otherwise it is worked out
and recorded at once, so an interrupted run continues from the first unfinished unit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from scenarios.checkpoint import Checkpoint, CheckpointError
from scenarios.context import Run
from scenarios.rows import UnitRow

R = TypeVar("R", bound=UnitRow)
T = TypeVar("T")


def _read(checkpoint: Checkpoint, stage: int, unit: str, stored: dict[str, Any], row: type[R]) -> R:
    """A recorded result as its row model; a result that does not fit is a :class:`CheckpointError`."""
    try:
        return row.model_validate(stored)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(map(str, problem["loc"])) or "result"
        raise CheckpointError(
            f"{checkpoint.path}: stage {stage} unit {unit!r}: {where}: {problem['msg']}; use a new --out folder"
        ) from None


async def run_units(
    run: Run,
    stage: int,
    label: str,
    units: Sequence[tuple[str, T]],
    work: Callable[[T], Awaitable[R]],
    row: type[R],
) -> list[R]:
    """Every unit's row in order: recorded ones read back, the others worked out and recorded.

    ``units`` pairs each unit's id with what ``work`` takes; ``run.progress(label, done, total)`` is
    called before each unit and once after the last.
    """
    rows: list[R] = []
    for done, (unit, item) in enumerate(units):
        run.progress(label, done, len(units))
        stored = run.checkpoint.get(stage, unit)
        if stored is None:
            result = await work(item)
            run.checkpoint.put(stage, unit, result.as_json())
        else:
            result = _read(run.checkpoint, stage, unit, stored, row)
        rows.append(result)
    run.progress(label, len(units), len(units))
    return rows


def recorded(checkpoint: Checkpoint, stage: int, row: type[R]) -> list[R]:
    """The rows of a stage that this run folder holds, in completion order (whichever run made them)."""
    return [_read(checkpoint, s, unit, stored, row) for (s, unit), stored in checkpoint.done.items() if s == stage]
