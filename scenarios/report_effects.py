"""The report's injection-effects section (harm, gain, tokens per answer) and the per-split tables.

Columns are "Overall" and then one per split the records carry (dev, test): thresholds and prompts
are tuned on dev, so a number tuned there is read on test only. The keys are the ones
``scenarios.effects`` writes into the stage blocks (``harm``, ``gain``, ``tokens``, ``splits``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scenarios.tables import fmt, get, stage_of, table

_EFFECTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Records right without memory (stage 1)", ("harm", "right_before")),
    ("Harm: right without memory, wrong with it", ("harm", "n")),
    ("Harm: share of the records right without memory", ("harm", "share")),
    ("Helped: wrong without memory, right with it", ("harm", "helped")),
    ("Gain: corrected records right on re-lettered paraphrases", ("gain", "accuracy")),
    ("Gain: re-lettered paraphrases of corrected records (n)", ("gain", "n")),
    ("Corrected records right on paraphrases in listed order", ("gain", "plain", "accuracy")),
    ("Completion tokens per answer, stage 1 (no memory)", ("tokens", "stage1", "completion")),
    ("Completion tokens per answer, stage 3 (memory)", ("tokens", "stage3", "completion")),
    ("Completion tokens per answer, stage 3 paraphrases", ("tokens", "stage3_paraphrases", "completion")),
    ("Prompt tokens per answer, stage 1 (no memory)", ("tokens", "stage1", "prompt")),
    ("Prompt tokens per answer, stage 3 (memory)", ("tokens", "stage3", "prompt")),
    ("Completion tokens below the no-memory baseline", ("tokens", "completion_below_baseline")),
)
_ANSWERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Accuracy", ("accuracy",)),
    ("Correct", ("distribution", "correct")),
    ("Incorrect", ("distribution", "incorrect")),
    ("ICS", ("ics",)),
    ("KPCS", ("kpcs",)),
    ("AICS", ("aics",)),
    ("Tokens per response (mean)", ("tokens_per_response", "mean")),
    ("Completion tokens per answer (mean)", ("answer_tokens", "completion")),
    ("Prompt tokens per answer (mean)", ("answer_tokens", "prompt")),
    ("Corrected records: accuracy", ("corrected", "accuracy")),
    ("Paraphrases: accuracy", ("paraphrases", "accuracy")),
    ("Harm: right without memory, wrong with it", ("harm", "n")),
    ("Gain: corrected records right on re-lettered paraphrases", ("gain", "accuracy")),
)
_CORRECTIONS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Conversations", ("table5", "conversations"), ("conversations",)),
    ("Residual memories / conversation", ("table5", "residual"), ("memories", "residual")),
    ("User question memories / conversation", ("table5", "user_question"), ("memories", "user_question")),
    ("LLM response memories / conversation", ("table5", "llm_response"), ("memories", "llm_response")),
)
_SESSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Asks", ("asks",)),
    ("Accuracy", ("accuracy",)),
    ("Persistence rate", ("persistence_rate",)),
)


def _splits(stage: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    found = get(stage, "splits")
    if not isinstance(found, Mapping):
        return {}
    return {str(name): block for name, block in found.items() if isinstance(block, Mapping)}


def _columns(stage: Mapping[str, Any], rows: Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]]) -> list[str]:
    """A Metric | Overall | <split>... table; each row reads its overall and its per-split path."""
    splits = _splits(stage)
    header = " | ".join(["Metric", "Overall", *splits])
    cells = [
        [label, get(stage, *whole), *(get(block, *part) for block in splits.values())] for label, whole, part in rows
    ]
    return table(header, [row for row in cells if any(cell is not None for cell in row[1:])])


def effect_lines(report: Mapping[str, Any]) -> list[str]:
    """Harm, gain and tokens per answer of stage 3, overall and per split ([] when stage 3 lacks them)."""
    stage = stage_of(report, 3)
    if stage is None or "harm" not in stage:
        return []
    lines = ["## Injection effects: harm, gain, tokens per answer", ""]
    lines += [
        "Harm compares each record's stage-1 answer (no memory) with its stage-3 answer (memory, asked by the"
        " corrector). Gain is the accuracy on the re-lettered paraphrases of corrected records, asked by"
        f" {fmt(get(stage, 'gain', 'user'))} in new sessions. Tokens are the model's own counts per answer.",
        "",
    ]
    if _splits(stage):
        lines += ["Thresholds and prompts are tuned on dev; a number tuned there is reported on test only.", ""]
    lines += _columns(stage, [(label, path, path) for label, path in _EFFECTS])
    harmed = [("Overall", get(stage, "harm", "ids"))]
    harmed += [(name, get(block, "harm", "ids")) for name, block in _splits(stage).items()]
    for name, ids in harmed:
        if isinstance(ids, list):
            lines.append(f"Harmed records ({name}): {', '.join(map(str, ids)) if ids else 'none'}")
    return [*lines, ""]


def split_lines(stage: Mapping[str, Any], number: int) -> list[str]:
    """A stage's numbers per split beside the overall ones ([] when the records carry no split)."""
    if not _splits(stage):
        return []
    if number in (1, 3):
        rows = [(label, path, path) for label, path in _ANSWERS]
    elif number == 2:
        rows = list(_CORRECTIONS)
    else:
        rows = [(label, path, path) for label, path in _SESSIONS]
    return ["**Per split (dev / test)**", "", *_columns(stage, rows)]
