"""Tests for scenarios.report: report.json, report.md tables, PNG plots, the terminal summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scenarios.report import fmt, render_markdown, render_summary, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _describe(count: int, mean: float, std: float, lo: float, hi: float) -> dict[str, Any]:
    return {"count": count, "mean": mean, "std": std, "min": lo, "max": hi}


def _stage1() -> dict[str, Any]:
    # Uses the paper's Figure 4 averages for stage 1 -> stage 3: ICS 0.76 -> 0.76, KPCS 0.12 -> 0.32,
    # AICS 0.18 -> 0.36, and tokens per response 415.22 -> 149.
    return {
        "records": [
            {
                "id": "r1",
                "correct": True,
                "letter": "B",
                "answer": "B) 0.1",
                "tokens": 120,
                "ics": 0.8,
                "kpcs": 0.2,
                "aics": 0.26,
            },
            {
                "id": "r2",
                "correct": False,
                "letter": "A",
                "answer": "A | pipe",
                "tokens": 180,
                "ics": 0.7,
                "kpcs": 0.05,
                "aics": 0.115,
            },
        ],
        "accuracy": 0.5,
        "ics": 0.76,
        "kpcs": 0.12,
        "aics": 0.18,
        "tokens_per_response": _describe(2, 415.22, 42.43, 120, 180),
        "alpha_sweep": [
            {"alpha": 0.0, "correct": 0.2, "incorrect": 0.05, "gap": 0.15},
            {"alpha": 0.1, "correct": 0.26, "incorrect": 0.115, "gap": 0.145},
            {"alpha": 0.5, "correct": 0.5, "incorrect": 0.375, "gap": 0.125},
        ],
        "best_alpha": 0.0,
        "distribution": {"correct": 1, "incorrect": 1},
        "wall_s": 12.5,
    }


def _full_report() -> dict[str, Any]:
    stage3 = _stage1() | {
        "accuracy": 0.75,
        "kpcs": 0.32,
        "aics": 0.36,
        "tokens_per_response": _describe(4, 149.0, 10.0, 140, 160),
        "distribution": {"correct": 3, "incorrect": 1},
        "corrected": {"accuracy": 1.0, "n": 1},
        "paraphrases": {"accuracy": 0.5, "n": 2},
        "wall_s": 20.0,
    }
    usage = {
        "agents": {
            "chatbot": {"calls": 4, "prompt_tokens": 1200, "completion_tokens": 300, "failures": 0},
            "residual_extractor": {"calls": 1, "prompt_tokens": 500, "completion_tokens": 90, "failures": 1},
        },
        "total": {"calls": 5, "prompt_tokens": 1700, "completion_tokens": 390, "failures": 1},
    }
    return {
        "scenario": "medmcqa-mini",
        "model": {"provider": "replay", "name": "tiny"},
        "wall_s": 61.25,
        "stages_run": [1, 2, 3, 4],
        "stage1": _stage1(),
        "stage2": {
            "conversations": [
                {
                    "record": "r2",
                    "rounds": 2,
                    "tokens": 400,
                    "words": 120,
                    "accepted": True,
                    "memories": {"residual": 3, "user_question": 2, "llm_response": 4},
                    "outcomes": {"accepted": 1},
                },
            ],
            # turns 2, 3, 2: mean 7/3 = 2.333; sample std sqrt((1/9 + 4/9 + 1/9) / 2) = sqrt(1/3) = 0.577
            "table4": {
                "turns": _describe(3, 7 / 3, (1 / 3) ** 0.5, 2, 3),
                "tokens": _describe(3, 415.22, 275.57, 116, 1665),
                "words": _describe(3, 130.65, 58.81, 67, 434),
            },
            "table5": {"conversations": 46, "residual": 2.57, "user_question": 2.8, "llm_response": 4.0},
            "usage": usage,
            "wall_s": 8.0,
        },
        "stage3": stage3,
        "stage4": {
            "sessions": [
                {"id": "s1", "user": "alice", "steps": [{"ask": "r2", "correct": True}, {"say": "thanks"}]},
                {"id": "s2", "user": "bob", "steps": [{"ask": "r2", "correct": False}]},
            ],
            "table6": {
                "turns": _describe(15, 1.73, 0.80, 1, 3),
                "tokens": _describe(15, 1089.47, 684.67, 397, 2508),
                "words": _describe(15, 107.13, 60.26, 35, 246),
            },
            "persistence_rate": 0.5,
            "asks": 2,
            "expectations": {
                "passed": 1,
                "failed": 1,
                "details": [
                    {"passed": True, "message": "bob recalls r2"},
                    {"passed": False, "message": "s2 ok"},
                    "raw",
                ],
            },
            "feedback_events": 3,
            "wall_s": 9.5,
        },
    }


def _only_stage1() -> dict[str, Any]:
    return {"scenario": "baseline-only", "model": None, "wall_s": 12.5, "stages_run": [1], "stage1": _stage1()}


def _assert_png(path: Path) -> None:
    assert path.exists()
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_write_report_full(tmp_path: Path) -> None:
    report = _full_report()
    paths = write_report(tmp_path / "out", report)

    assert set(paths) == {"json", "markdown", "alpha_sweep", "before_after", "distribution"}
    for name in ("alpha_sweep", "before_after", "distribution"):
        _assert_png(paths[name])
        assert paths[name].name == f"{name}.png"
    assert json.loads(paths["json"].read_text()) == report
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "alpha_sweep.png",
        "before_after.png",
        "distribution.png",
        "report.json",
        "report.md",
    ]  # no temporary files left behind

    md = paths["markdown"].read_text()
    assert md.startswith("# MARK report — medmcqa-mini\n")
    assert "Model: provider = replay, name = tiny" in md
    # Figure 4 table: KPCS 0.12 -> 0.32 is +0.200 and +166.7 %; AICS 0.18 -> 0.36 is +100 %;
    # tokens 415.22 -> 149: 149 - 415.22 = -266.22, / 415.22 = -64.1 %
    assert "| Metric | Stage 1 (no memory) | Stage 3 (memory) | Change | Relative |" in md
    assert "| Accuracy | 0.500 | 0.750 | +0.250 | +50.0% |" in md
    assert "| ICS | 0.760 | 0.760 | +0.000 | +0.0% |" in md
    assert "| KPCS | 0.120 | 0.320 | +0.200 | +166.7% |" in md
    assert "| AICS | 0.180 | 0.360 | +0.180 | +100.0% |" in md
    assert "| Tokens per response (mean) | 415.22 | 149.00 | -266.220 | -64.1% |" in md
    # Figure 5
    assert "| Run | Correct | Incorrect |" in md
    assert "| Stage 1 (no memory) | 1 | 1 |" in md
    assert "| Stage 3 (memory) | 3 | 1 |" in md
    # Table 4 / 5 / 6
    assert "**Table 4 — conversation statistics**" in md
    assert "| Metric | Count | Mean | Std | Min | Max |" in md
    assert "| Number of turns | 3 | 2.333 | 0.577 | 2 | 3 |" in md
    assert "| Number of tokens | 3 | 415.22 | 275.57 | 116 | 1665 |" in md
    assert "| Conversations | Residual / conv. | User question / conv. | LLM response / conv. |" in md
    assert "| 46 | 2.570 | 2.800 | 4.000 |" in md
    assert "**Table 6 — multi-turn conversation statistics**" in md
    assert "| Number of tokens | 15 | 1089.47 | 684.67 | 397 | 2508 |" in md
    assert "| r2 | 2 | 400 | 120 | yes | 3 | 2 | 4 | accepted: 1 |" in md
    # alpha sweep (Figure 2)
    assert "| alpha | Mean AICS correct | Mean AICS incorrect | Gap |" in md
    assert "| 0.100 | 0.260 | 0.115 | 0.145 |" in md
    # stage 3 extras and the per-record table
    assert "| Corrected records: accuracy (n = 1) | 1.000 |" in md
    assert "| Paraphrases: accuracy (n = 2) | 0.500 |" in md
    assert "| r1 | yes | B | 120 | 0.800 | 0.200 | 0.260 |" in md
    # stage 4
    assert "| Persistence rate (corrected records answered correctly) | 0.500 |" in md
    assert "| s1 | alice | 2 | 1 | 1 |" in md
    assert "| s2 | bob | 1 | 1 | 0 |" in md
    assert "- PASS: bob recalls r2" in md
    assert "- FAIL: s2 ok" in md
    assert "- raw" in md
    # usage, wall times, plot links
    assert "**LLM usage — stage 2**" in md
    assert "| residual_extractor | 1 | 500 | 90 | 1 |" in md
    assert "| **total** | 5 | 1700 | 390 | 1 |" in md
    assert "| Stage 2 | 8.000 |" in md
    assert "| Total | 61.25 |" in md
    assert "![alpha_sweep](alpha_sweep.png)" in md
    assert "was not run" not in md


def test_write_report_only_stage1(tmp_path: Path) -> None:
    report = _only_stage1()
    paths = write_report(tmp_path, report)

    assert set(paths) == {"json", "markdown", "alpha_sweep", "before_after", "distribution"}
    for name in ("alpha_sweep", "before_after", "distribution"):
        _assert_png(paths[name])
    assert json.loads(paths["json"].read_text()) == report
    md = paths["markdown"].read_text()
    for number in (2, 3, 4):
        assert f"Stage {number} was not run." in md
    assert "Stage 1 was not run." not in md
    assert "| Accuracy | 0.500 | — | — | — |" in md
    assert "| Stage 3 (memory) | — | — |" in md
    assert "| Best alpha | 0.000 |" in md
    assert "No usage was recorded." in md
    assert "Stages run: 1" in md


def test_write_report_empty_and_none_values(tmp_path: Path) -> None:
    report: dict[str, Any] = {"stage1": {"accuracy": None, "alpha_sweep": None}, "stage2": None, "stage4": {}}
    paths = write_report(tmp_path, report)
    assert set(paths) == {"json", "markdown"}  # no data for any plot
    md = paths["markdown"].read_text()
    assert md.startswith("# MARK report — —\n")
    assert "| Accuracy | — |" in md
    assert "Stage 2 was not run." in md
    assert "| Number of turns | — | — | — | — | — |" in md  # stage 4 with no table6

    paths = write_report(tmp_path / "empty", {})
    md = paths["markdown"].read_text()
    assert "Neither stage 1 nor stage 3 was run." in md
    assert all(f"Stage {n} was not run." in md for n in (1, 2, 3, 4))


def test_write_report_overwrites_previous_files(tmp_path: Path) -> None:
    write_report(tmp_path, _full_report())
    paths = write_report(tmp_path, {"scenario": "second"})
    assert json.loads(paths["json"].read_text()) == {"scenario": "second"}
    assert "# MARK report — second" in paths["markdown"].read_text()


def test_render_markdown_lists_plots() -> None:
    md = render_markdown({"scenario": "x"}, plots=["before_after.png"])
    assert "![before_after](before_after.png)" in md


def test_render_summary_full_and_partial() -> None:
    summary = render_summary(_full_report())
    lines = summary.splitlines()
    assert lines[0] == "MARK — medmcqa-mini"
    assert lines[1].split() == ["metric", "stage", "1", "stage", "3", "change"]
    assert lines[2].split() == ["accuracy", "0.500", "0.750", "+0.250"]
    assert lines[3].split() == ["AICS", "0.180", "0.360", "+0.180"]
    assert lines[4].split() == ["tokens/response", "415.22", "149.00", "-266.220"]
    assert lines[5] == "persistence (stage 4): 0.500 over 2 asks"

    partial = render_summary(_only_stage1()).splitlines()
    assert partial[2].split() == ["accuracy", "0.500", "—", "—"]
    assert partial[-1] == "persistence (stage 4): not run"


def test_fmt_cells() -> None:
    assert fmt(None) == "—"
    assert fmt(float("nan")) == "—"
    assert fmt(True) == "yes"
    assert fmt(3) == "3"
    assert fmt(0.12345) == "0.123"
    assert fmt(415.223) == "415.22"
    assert fmt("a|b\nc") == "a\\|b c"
    assert fmt({}) == "—"
