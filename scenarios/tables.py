"""Table cells for the lifecycle report: safe lookups in a partial report, number checks, Markdown.

Every report key may be missing or None; these helpers turn that into "—" instead of an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

DASH = "—"


def get(data: Any, *path: str) -> Any:
    """``data[path[0]][path[1]]...``, or None as soon as a level is missing or not a mapping."""
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def num(value: Any) -> float | None:
    """A finite number as float, else None (bools are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fmt(value: Any) -> str:
    """One table cell: "—" for missing, yes/no for bools, ints as is, floats to 3 (or 2 when >= 10) places."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) >= 10 else f"{value:.3f}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) or DASH
    text = str(value).replace("|", "\\|").replace("\n", " ").strip()
    return text or DASH


def table(header: str, rows: Sequence[Sequence[Any]], title: str | None = None) -> list[str]:
    """A Markdown table (under a bold title if given); ``header`` names the columns separated by ``|``."""
    columns = [c.strip() for c in header.split("|")]
    lines = [f"**{title}**", ""] if title else []
    lines += ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def stage_of(report: Mapping[str, Any], number: int) -> Mapping[str, Any] | None:
    """The block of stage ``number`` when the report holds one."""
    stage = report.get(f"stage{number}")
    return stage if isinstance(stage, Mapping) else None
