"""Write a lifecycle run's report: report.json, report.md (tables like the MARK paper's) and PNG plots.

The report this module renders is a ``report.json`` document: the JSON form of
:class:`scenarios.results.LifecycleReport` (``report.as_json()``), whose models name every block and
field (stage 1 :class:`~scenarios.results.BaselineResult`, stage 2
:class:`~scenarios.results.CorrectionsResult`, stage 3 :class:`~scenarios.results.InjectionResult`,
stage 4 :class:`~scenarios.results.SessionsResult`). Rendering reads the document, not the models, so
a partial or older report renders too: every key may be missing or None, a missing value renders "—",
and a missing stage is skipped with a line saying it was not run.

A "usage" block is rendered wherever it appears (top level or in any stage). Any stage may carry
"splits": {"dev": {...}, "test": {...}} with its numbers per split, rendered beside the overall ones
(``scenarios.report_effects``). The plots are drawn by ``scenarios.plots``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scenarios.plots import render_plots
from scenarios.report_effects import effect_lines, split_lines
from scenarios.report_memories import memory_lines
from scenarios.tables import DASH, fmt
from scenarios.tables import get as _get
from scenarios.tables import num as _num
from scenarios.tables import stage_of as _stage
from scenarios.tables import table as _table

__all__ = ["DASH", "fmt", "render_markdown", "render_summary", "write_report"]
STAGE_TITLES = {
    1: "Stage 1 — baseline without memory",
    2: "Stage 2 — memory construction from SME corrections",
    3: "Stage 3 — re-answering with memory injection",
    4: "Stage 4 — multi-turn, multi-user persistence",
}
_DESCRIBE_ROWS = (("turns", "Number of turns"), ("tokens", "Number of tokens"), ("words", "Number of words"))
_SCORES = (("accuracy", "Accuracy"), ("ics", "ICS"), ("kpcs", "KPCS"), ("aics", "AICS"))
_MEMORY_TYPES = ("residual", "user_question", "llm_response")


def _tokens_mean(stage: Mapping[str, Any] | None) -> Any:
    return _get(stage, "tokens_per_response", "mean")


def _change(before: Any, after: Any) -> tuple[Any, Any]:
    """Absolute and relative (%) change; None where it cannot be computed."""
    b, a = _num(before), _num(after)
    if b is None or a is None:
        return None, None
    relative = f"{(a - b) / b * 100:+.1f}%" if b != 0 else None
    return f"{a - b:+.3f}", relative


def _describe_table(title: str, block: Any) -> list[str]:
    rows = [
        [label, *(_get(block, key, col) for col in ("count", "mean", "std", "min", "max"))]
        for key, label in _DESCRIBE_ROWS
    ]
    return _table("Metric | Count | Mean | Std | Min | Max", rows, title)


def _usage_lines(title: str, usage: Any) -> list[str]:
    agents = _get(usage, "agents")
    if not isinstance(agents, Mapping) or not agents:
        return []
    cols = ("calls", "prompt_tokens", "completion_tokens", "failures")
    rows = [[name, *(_get(stats, c) for c in cols)] for name, stats in sorted(agents.items())]
    total = _get(usage, "total")
    if isinstance(total, Mapping):
        rows.append(["**total**", *(total.get(c) for c in cols)])
    return _table("Agent | Calls | Prompt tokens | Completion tokens | Failures", rows, f"LLM usage — {title}")


def _answer_stage_lines(stage: Mapping[str, Any], number: int) -> list[str]:
    rows: list[list[Any]] = [[label, stage.get(key)] for key, label in _SCORES]
    rows += [["Tokens per response (mean)", _tokens_mean(stage)], ["Best alpha", stage.get("best_alpha")]]
    for key, label in (("corrected", "Corrected records"), ("paraphrases", "Paraphrases")):
        if key in stage:
            rows.append([f"{label}: accuracy (n = {fmt(_get(stage, key, 'n'))})", _get(stage, key, "accuracy")])
    rows.append(["Wall time (s)", stage.get("wall_s")])
    lines = _table("Metric | Value", rows)
    sweep = stage.get("alpha_sweep")
    if isinstance(sweep, list) and sweep:
        rows = [[_get(r, k) for k in ("alpha", "correct", "incorrect", "gap")] for r in sweep]
        header = "alpha | Mean AICS correct | Mean AICS incorrect | Gap"
        lines += _table(header, rows, f"Alpha sweep (Figure 2), stage {number}")
    records = stage.get("records")
    if isinstance(records, list) and records:
        cols = ("id", "correct", "letter", "tokens", "ics", "kpcs", "aics")
        rows = [[_get(r, c) for c in cols] for r in records]
        lines += _table("Record | Correct | Letter | Tokens | ICS | KPCS | AICS", rows, "Records")
    return lines


def _stage2_lines(stage: Mapping[str, Any]) -> list[str]:
    lines = _describe_table("Table 4 — conversation statistics", stage.get("table4"))
    t5 = stage.get("table5")
    header = "Conversations | Residual / conv. | User question / conv. | LLM response / conv."
    row = [_get(t5, "conversations"), *(_get(t5, t) for t in _MEMORY_TYPES)]
    lines += _table(header, [row], "Table 5 — memories per conversation")
    conversations = stage.get("conversations")
    if isinstance(conversations, list) and conversations:
        cols = ("record", "rounds", "tokens", "words", "accepted")
        rows = [
            [*(_get(c, k) for k in cols), *(_get(c, "memories", t) for t in _MEMORY_TYPES), _get(c, "outcomes")]
            for c in conversations
        ]
        header = "Record | Rounds | Tokens | Words | Accepted | Residual | User question | LLM response | Outcomes"
        lines += _table(header, rows, "Conversations")
    lines += _evidence_lines(stage.get("evidence"))
    return [*lines, f"Wall time (s): {fmt(stage.get('wall_s'))}", ""]


def _evidence_lines(evidence: Any) -> list[str]:
    """What the veracity checker had: knowledge passages per candidate and its verdicts."""
    if not isinstance(evidence, Mapping) or not evidence.get("candidates"):
        return []
    checks = evidence.get("fact_checks") or {}
    rows = [
        ("Candidates the truth gate passed to the checker", evidence.get("candidates")),
        ("... with at least one knowledge passage", evidence.get("with_passages")),
        ("... that a passage supports", evidence.get("supported")),
        ("... that a passage contradicts (sent to a reviewer)", evidence.get("contradicted")),
        (
            "Fact-check verdicts (1.0 / 0.5 / 0.0 / none)",
            " / ".join(str(checks.get(k, 0)) for k in ("1.0", "0.5", "0.0", "none")),
        ),
    ]
    return _table("Evidence | Count", rows, "Evidence for the veracity checker")


def _stage4_lines(stage: Mapping[str, Any]) -> list[str]:
    lines = _describe_table("Table 6 — multi-turn conversation statistics", stage.get("table6"))
    exp = stage.get("expectations")
    rows = [
        ("Persistence rate (corrected records answered correctly)", stage.get("persistence_rate")),
        ("Asks", stage.get("asks")),
        ("Feedback events", stage.get("feedback_events")),
        ("Expectations passed", _get(exp, "passed")),
        ("Expectations failed", _get(exp, "failed")),
        ("Wall time (s)", stage.get("wall_s")),
    ]
    lines += _table("Metric | Value", rows)
    sessions = stage.get("sessions")
    if isinstance(sessions, list) and sessions:
        session_rows = []
        for s in sessions:
            steps = _get(s, "steps") if isinstance(_get(s, "steps"), list) else []
            asks = [st for st in steps if _get(st, "ask") is not None]
            correct = sum(1 for st in asks if _get(st, "correct") is True)
            session_rows.append([_get(s, "id"), _get(s, "user"), len(steps), len(asks), correct])
        lines += _table("Session | User | Steps | Asks | Correct asks", session_rows, "Sessions")
    details = _get(exp, "details")
    if isinstance(details, list) and details:
        lines += ["**Expectation checks**", ""]
        for d in details:
            if isinstance(d, Mapping):
                passed = d.get("passed")
                mark = "?" if not isinstance(passed, bool) else ("PASS" if passed else "FAIL")
                text = d.get("message") or d.get("detail") or json.dumps(d, sort_keys=True, default=str)
                lines.append(f"- {mark}: {fmt(text)}")
            else:
                lines.append(f"- {fmt(d)}")
        lines.append("")
    return lines


def stage_labels(report: Mapping[str, Any]) -> tuple[str, str]:
    """What stages 1 and 3 were given: memory alone, or knowledge too when the scenario named some."""
    if report.get("knowledge"):
        return "Stage 1 (knowledge only)", "Stage 3 (knowledge + memory)"
    return "Stage 1 (no memory)", "Stage 3 (memory)"


def _knowledge_lines(report: Mapping[str, Any]) -> list[str]:
    sources = report.get("knowledge")
    if not isinstance(sources, list) or not sources:
        return []
    lines = ["## Knowledge base", "", "The scenario's knowledge files, loaded into the run's store:", ""]
    rows = [[_get(s, "source"), str(_get(s, "version"))[:12], _get(s, "passages"), _get(s, "action")] for s in sources]
    lines += _table("Source | Version | Passages | Loaded", rows)
    counts = []
    for number in (1, 3):
        records = _get(report, f"stage{number}", "records")
        if isinstance(records, list) and records:
            cited = sum(bool(r.get("cited")) for r in records if isinstance(r, Mapping))
            counts.append([f"Stage {number}", len(records), cited])
    if counts:
        lines += _table("Stage | Answers | Answers given knowledge passages", counts)
    return lines


def _comparison_lines(report: Mapping[str, Any]) -> list[str]:
    s1, s3 = _stage(report, 1), _stage(report, 3)
    before_label, after_label = stage_labels(report)
    lines = ["## Before / after memory (Figure 4)", ""]
    if s1 is None and s3 is None:
        return [*lines, "Neither stage 1 nor stage 3 was run.", ""]
    rows = []
    for key, label in (*_SCORES, ("tokens", "Tokens per response (mean)")):
        before = _tokens_mean(s1) if key == "tokens" else _get(s1, key)
        after = _tokens_mean(s3) if key == "tokens" else _get(s3, key)
        rows.append([label, before, after, *_change(before, after)])
    lines += _table(f"Metric | {before_label} | {after_label} | Change | Relative", rows)
    lines += ["## Correct / incorrect distribution (Figure 5)", ""]
    runs = ((before_label, s1), (after_label, s3))
    rows = [[name, _get(s, "distribution", "correct"), _get(s, "distribution", "incorrect")] for name, s in runs]
    return lines + _table("Run | Correct | Incorrect", rows)


def render_markdown(report: Mapping[str, Any], plots: Sequence[str] = ()) -> str:
    """The report as Markdown; ``plots`` are PNG file names to link at the end."""
    lines = [f"# MARK report — {fmt(report.get('scenario'))}", ""]
    model = report.get("model")
    if isinstance(model, Mapping) and model:
        lines += ["Model: " + ", ".join(f"{k} = {fmt(v)}" for k, v in model.items()), ""]
    lines += [
        f"Stages run: {fmt(', '.join(map(str, report.get('stages_run') or [])))}",
        f"Total wall time (s): {fmt(report.get('wall_s'))}",
        "",
    ]
    lines += _knowledge_lines(report)
    lines += _comparison_lines(report)
    lines += effect_lines(report)
    for number in (1, 2, 3, 4):
        stage = _stage(report, number)
        lines += [f"## {STAGE_TITLES[number]}", ""]
        if stage is None:
            lines += [f"Stage {number} was not run.", ""]
        elif number in (1, 3):
            lines += _answer_stage_lines(stage, number)
        else:
            lines += _stage2_lines(stage) if number == 2 else _stage4_lines(stage)
        if stage is not None:
            lines += split_lines(stage, number)
    lines += memory_lines(report)
    usage = [("run", report.get("usage"))] + [(f"stage {n}", _get(report, f"stage{n}", "usage")) for n in (1, 2, 3, 4)]
    usage_lines = [line for title, block in usage for line in _usage_lines(title, block)]
    lines += ["## LLM calls and tokens per agent", "", *(usage_lines or ["No usage was recorded.", ""])]
    lines += ["## Wall times", ""]
    lines += _table(
        "Stage | Seconds",
        [*([f"Stage {n}", _get(report, f"stage{n}", "wall_s")] for n in (1, 2, 3, 4)), ["Total", report.get("wall_s")]],
    )
    if plots:
        lines += ["## Plots", "", *(f"![{Path(p).stem}]({p})" for p in plots), ""]
    return "\n".join(lines).rstrip() + "\n"


def _atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(out_dir: Path, report: dict[str, Any]) -> dict[str, Path]:
    """Write report.json, the PNG plots that have data, and report.md into ``out_dir``.

    Returns ``{"json": ..., "markdown": ..., and for each plot written "alpha_sweep" / "before_after" /
    "distribution": ...}``. Every file is written atomically (temporary file + rename).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "report.json"}
    _atomic_write(paths["json"], (json.dumps(report, indent=2, sort_keys=True, default=str) + "\n").encode())
    for name, png in render_plots(report).items():
        paths[name] = out_dir / f"{name}.png"
        _atomic_write(paths[name], png)
    plots = [p.name for key, p in paths.items() if key != "json"]
    paths["markdown"] = out_dir / "report.md"
    _atomic_write(paths["markdown"], render_markdown(report, plots).encode())
    return paths


def render_summary(report: Mapping[str, Any]) -> str:
    """A short plain-text before/after table for the terminal; the caller adds where the report lies."""
    s1, s3, s4 = _stage(report, 1), _stage(report, 3), _stage(report, 4)
    rows = [("metric", "stage 1", "stage 3", "change")]
    for label, before, after in (
        ("accuracy", _get(s1, "accuracy"), _get(s3, "accuracy")),
        ("AICS", _get(s1, "aics"), _get(s3, "aics")),
        ("tokens/response", _tokens_mean(s1), _tokens_mean(s3)),
    ):
        rows.append((label, fmt(before), fmt(after), fmt(_change(before, after)[0])))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"MARK — {fmt(report.get('scenario'))}"]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if s4 is None:
        lines.append("persistence (stage 4): not run")
    else:
        lines.append(f"persistence (stage 4): {fmt(s4.get('persistence_rate'))} over {fmt(s4.get('asks'))} asks")
    return "\n".join(lines)
