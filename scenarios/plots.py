"""PNG plots of a lifecycle report (the MARK paper's Figures 2, 4 and 5).

Plots use matplotlib's object API on the Agg canvas (no pyplot, no display, no global backend switch);
a plot without data is not drawn.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scenarios.tables import get, num, stage_of


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
    number = next((n for n in (1, 3) if get(report, f"stage{n}", "alpha_sweep")), None)
    sweep = get(report, f"stage{number}", "alpha_sweep")
    if not isinstance(sweep, list):
        return None
    points = [(num(get(r, "alpha")), num(get(r, "correct")), num(get(r, "incorrect"))) for r in sweep]
    points = [p for p in points if p[0] is not None and (p[1] is not None or p[2] is not None)]
    if not points:
        return None
    fig, ax = _figure()
    xs = [p[0] for p in points]
    for index, label, colour in ((1, "correct", "tab:green"), (2, "incorrect", "tab:red")):
        ax.plot(xs, [math.nan if p[index] is None else p[index] for p in points], marker="o", label=label, color=colour)
    best = num(get(report, f"stage{number}", "best_alpha"))
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
        ax.bar(xs, [math.nan if num(v) is None else v for v in values], width=width, label=name)
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
        stage = stage_of(report, number)
        if stage is not None and any(num(get(stage, *k.split("."))) is not None for k in keys):
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
        name: [get(s, "distribution", "correct"), get(s, "distribution", "incorrect")] for name, s in stages.items()
    }
    return _grouped_bars("Correct vs incorrect responses (Figure 5)", "responses", ["Correct", "Incorrect"], series)


PLOTS: tuple[tuple[str, Callable[[Mapping[str, Any]], bytes | None]], ...] = (
    ("alpha_sweep", _alpha_sweep_png),
    ("before_after", _before_after_png),
    ("distribution", _distribution_png),
)


def render_plots(report: Mapping[str, Any]) -> dict[str, bytes]:
    """The plots that have data, as PNG bytes by name (``alpha_sweep``, ``before_after``, ``distribution``)."""
    drawn = {name: render(report) for name, render in PLOTS}
    return {name: png for name, png in drawn.items() if png is not None}
