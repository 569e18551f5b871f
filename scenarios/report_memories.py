"""The report's audit section: every memory in the store with who said it and the truth gate's verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _cell(text: Any, limit: int = 220) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def memory_lines(report: Mapping[str, Any]) -> list[str]:
    """Markdown for the stored memories and the refused candidates ([] when the report has neither)."""
    rows = report.get("memory_ledger")
    refused = report.get("refused")
    if rows is None and refused is None:
        return []
    lines = ["## Memories: who said it, and the truth gate's verdict", ""]
    if rows:
        lines += [
            "| Type | Status | Memory | Said by (source) | Truth gate | Veracity |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['type']} | {r['status']} | {_cell(r['text'])} | {_cell(r['said_by'], 40)} ({r['source']}) "
            f"| {_cell(r['gate'], 160)} | {r['veracity']:.2f} |"
            for r in rows
        ]
        lines.append("")
    else:
        lines += ["No memory is stored.", ""]
    lines += ["**Refused by the truth gate (never stored)**", ""]
    if refused:
        lines += ["| Type | Candidate | Reason |", "|---|---|---|"]
        lines += [f"| {r['type']} | {_cell(r['text'])} | {_cell(r['reason'], 160)} |" for r in refused]
    else:
        lines.append("None.")
    return [*lines, ""]
