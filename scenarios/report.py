"""Write a lifecycle run's report: report.json, report.md (tables like the MARK paper's) and PNG plots.

The report dict this module accepts (every key may be missing or None; a missing value renders "—",
a missing stage is skipped with a line saying it was not run)::

    {"scenario": str, "model": {name: value}, "wall_s": float, "stages_run": [int],
     "stage1": {"records": [{"id", "correct": bool, "letter", "answer", "tokens": int,
                             "ics", "kpcs", "aics"}],
                "accuracy", "ics", "kpcs", "aics", "tokens_per_response": describe-dict,
                "alpha_sweep": [{"alpha", "correct", "incorrect", "gap", ...}], "best_alpha",
                "distribution": {"correct": n, "incorrect": n}, "wall_s"},
     "stage2": {"conversations": [{"record", "rounds", "tokens", "words", "accepted": bool,
                                   "memories": {"residual": n, "user_question": n, "llm_response": n},
                                   "outcomes": {name: value}}],
                "table4": {"turns": describe, "tokens": describe, "words": describe},
                "table5": {"conversations": n, "residual": mean, "user_question": mean, "llm_response": mean},
                "usage": {"agents": {name: {"calls", "prompt_tokens", "completion_tokens", "failures"}},
                          "total": {...}},
                "wall_s"},
     "stage3": like stage1, plus "corrected": {"accuracy", "n"} and "paraphrases": {"accuracy", "n"},
     "stage4": {"sessions": [{"id", "user", "steps": [{"ask"?, "correct"?, ...}]}],
                "table6": {"turns": describe, "tokens": describe, "words": describe},
                "persistence_rate", "asks": n,
                "expectations": {"passed": n, "failed": n, "details": [str | {"passed", "message"}]},
                "feedback_events": n, "wall_s"}}

A describe-dict is ``{"count", "mean", "std", "min", "max"}`` (see ``scenarios.metrics.describe``).
A "usage" block is rendered wherever it appears (top level or in any stage). Plots use matplotlib's
object API on the Agg canvas (no pyplot, no display, no global backend switch).
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DASH = "—"
STAGE_TITLES = {
    1: "Stage 1 — baseline without memory",
    2: "Stage 2 — memory construction from SME corrections",
    3: "Stage 3 — re-answering with memory injection",
    4: "Stage 4 — multi-turn, multi-user persistence",
}
_DESCRIBE_ROWS = (("turns", "Number of turns"), ("tokens", "Number of tokens"), ("words", "Number of words"))
_SCORES = (("accuracy", "Accuracy"), ("ics", "ICS"), ("kpcs", "KPCS"), ("aics", "AICS"))
_MEMORY_TYPES = ("residual", "user_question", "llm_response")


def _get(data: Any, *path: str) -> Any:
    """``data[path[0]][path[1]]...``, or None as soon as a level is missing or not a mapping."""
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _num(value: Any) -> float | None:
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


def _table(header: str, rows: Sequence[Sequence[Any]], title: str | None = None) -> list[str]:
    """A Markdown table (under a bold title if given); ``header`` names the columns separated by ``|``."""
    columns = [c.strip() for c in header.split("|")]
    lines = [f"**{title}**", ""] if title else []
    lines += ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _stage(report: Mapping[str, Any], number: int) -> Mapping[str, Any] | None:
    stage = report.get(f"stage{number}")
    return stage if isinstance(stage, Mapping) else None


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
    return [*lines, f"Wall time (s): {fmt(stage.get('wall_s'))}", ""]


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


def _comparison_lines(report: Mapping[str, Any]) -> list[str]:
    s1, s3 = _stage(report, 1), _stage(report, 3)
    lines = ["## Before / after memory (Figure 4)", ""]
    if s1 is None and s3 is None:
        return [*lines, "Neither stage 1 nor stage 3 was run.", ""]
    rows = []
    for key, label in (*_SCORES, ("tokens", "Tokens per response (mean)")):
        before = _tokens_mean(s1) if key == "tokens" else _get(s1, key)
        after = _tokens_mean(s3) if key == "tokens" else _get(s3, key)
        rows.append([label, before, after, *_change(before, after)])
    lines += _table("Metric | Stage 1 (no memory) | Stage 3 (memory) | Change | Relative", rows)
    lines += ["## Correct / incorrect distribution (Figure 5)", ""]
    runs = (("Stage 1 (no memory)", s1), ("Stage 3 (memory)", s3))
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
    lines += _comparison_lines(report)
    for number in (1, 2, 3, 4):
        stage = _stage(report, number)
        lines += [f"## {STAGE_TITLES[number]}", ""]
        if stage is None:
            lines += [f"Stage {number} was not run.", ""]
        elif number in (1, 3):
            lines += _answer_stage_lines(stage, number)
        else:
            lines += _stage2_lines(stage) if number == 2 else _stage4_lines(stage)
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


def _figure() -> tuple[Any, Any]:
    """A figure and its axes, on matplotlib's object API (no pyplot state, no display)."""
    from matplotlib.figure import Figure  # imported lazily: the CLI need not pay for matplotlib

    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    return fig, fig.add_subplot()


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def _alpha_sweep_png(report: Mapping[str, Any]) -> bytes | None:
    number = next((n for n in (1, 3) if _get(report, f"stage{n}", "alpha_sweep")), None)
    sweep = _get(report, f"stage{number}", "alpha_sweep")
    if not isinstance(sweep, list):
        return None
    points = [(_num(_get(r, "alpha")), _num(_get(r, "correct")), _num(_get(r, "incorrect"))) for r in sweep]
    points = [p for p in points if p[0] is not None and (p[1] is not None or p[2] is not None)]
    if not points:
        return None
    fig, ax = _figure()
    xs = [p[0] for p in points]
    for index, label, colour in ((1, "correct", "tab:green"), (2, "incorrect", "tab:red")):
        ax.plot(xs, [math.nan if p[index] is None else p[index] for p in points], marker="o", label=label, color=colour)
    best = _num(_get(report, f"stage{number}", "best_alpha"))
    if best is not None:
        ax.axvline(best, color="grey", linestyle="--", label=f"best alpha = {best:g}")
    ax.set(xlabel="alpha", ylabel="mean AICS", title=f"AICS by alpha, correct vs incorrect (stage {number})")
    ax.legend()
    return _png(fig)


def _grouped_bars(title: str, ylabel: str, labels: Sequence[str], series: Mapping[str, Sequence[Any]]) -> bytes:
    """Bars grouped by label, one colour per series; scores get a 0-1 axis, counts integer ticks."""
    from matplotlib.ticker import MaxNLocator

    fig, ax = _figure()
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        ax.bar(xs, [math.nan if _num(v) is None else v for v in values], width=width, label=name)
    ax.set_xticks(range(len(labels)), list(labels))
    ax.set(title=title, ylabel=ylabel)
    if ylabel == "score":
        ax.set_ylim(0, 1.15)
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper center", ncol=len(series))
    return _png(fig)


def _present_stages(report: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    """Stages 1 and 3 that exist and have at least one number among ``keys`` (dotted paths)."""
    found = {}
    for name, number in (("Stage 1 (no memory)", 1), ("Stage 3 (memory)", 3)):
        stage = _stage(report, number)
        if stage is not None and any(_num(_get(stage, *k.split("."))) is not None for k in keys):
            found[name] = stage
    return found


def _before_after_png(report: Mapping[str, Any]) -> bytes | None:
    stages = _present_stages(report, ["ics", "kpcs", "aics", "accuracy"])
    if not stages:
        return None
    labels = ["ICS", "KPCS", "AICS", "Accuracy"]
    series = {name: [s.get(k) for k in ("ics", "kpcs", "aics", "accuracy")] for name, s in stages.items()}
    return _grouped_bars("Metrics without and with memory (Figure 4)", "score", labels, series)


def _distribution_png(report: Mapping[str, Any]) -> bytes | None:
    stages = _present_stages(report, ["distribution.correct", "distribution.incorrect"])
    if not stages:
        return None
    series = {
        name: [_get(s, "distribution", "correct"), _get(s, "distribution", "incorrect")] for name, s in stages.items()
    }
    return _grouped_bars("Correct vs incorrect responses (Figure 5)", "responses", ["Correct", "Incorrect"], series)


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
    for name, render in (
        ("alpha_sweep", _alpha_sweep_png),
        ("before_after", _before_after_png),
        ("distribution", _distribution_png),
    ):
        png = render(report)
        if png is not None:
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
