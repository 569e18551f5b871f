"""What memory injection did to the answers: harm, gain, tokens per answer, and the per-split view.

Pure functions over the answer rows of the lifecycle (dicts as :func:`scenarios.lifecycle.answer`
writes them: ``id``, ``paraphrase``, ``correct``, ``relettered``, ``tokens``, ``completion_tokens``,
``prompt_tokens``, ``ics``, ``kpcs``, ``aics``). Rows checkpointed by an older run may lack the token
and lettering fields; they count as missing, not as zero.

* harm: records answered right in stage 1 (no memory) and wrong in stage 3 (memory), as a count and as
  a share of the stage-1-right records, with their ids; ``helped`` counts the opposite move.
* gain: accuracy on the re-lettered paraphrases of corrected records (asked by another user than the
  corrector); paraphrases that keep the listed order are counted apart under ``plain``.
* tokens: mean completion and prompt tokens of the chatbot's answers, stage 1 beside stage 3.

A scenario whose records carry a ``split`` (dev / test) gets every number again per split: tune
thresholds and prompts on dev, report test.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from scenarios.metrics import describe

Row = Mapping[str, Any]


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are present; None when none is."""
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def accuracy(rows: Sequence[Row]) -> float | None:
    """Share of rows answered correctly; None for no rows."""
    return sum(1 for r in rows if r["correct"]) / len(rows) if rows else None


def token_means(rows: Sequence[Row]) -> dict[str, Any]:
    """Mean completion and prompt tokens per answer, as the model client reported them."""
    return {
        "n": len(rows),
        "completion": mean([r.get("completion_tokens") for r in rows]),
        "prompt": mean([r.get("prompt_tokens") for r in rows]),
    }


def answer_metrics(rows: Sequence[Row]) -> dict[str, Any]:
    """Accuracy, counts, mean ICS / KPCS / AICS and tokens of a set of answers."""
    correct = sum(1 for r in rows if r["correct"])
    return {
        "n": len(rows),
        "accuracy": accuracy(rows),
        "distribution": {"correct": correct, "incorrect": len(rows) - correct},
        **{score: mean([r.get(score) for r in rows]) for score in ("ics", "kpcs", "aics")},
        "tokens_per_response": describe([r["tokens"] for r in rows if r.get("tokens") is not None]),
        "answer_tokens": token_means(rows),
    }


def harm(baseline: Sequence[Row], with_memory: Sequence[Row]) -> dict[str, Any]:
    """Records right without memory and wrong with it (and the reverse), over records answered in both."""
    before = {r["id"]: bool(r["correct"]) for r in baseline}
    after = {r["id"]: bool(r["correct"]) for r in with_memory if r["id"] in before}
    right = [i for i in after if before[i]]
    harmed = [i for i in right if not after[i]]
    return {
        "n": len(harmed),
        "share": len(harmed) / len(right) if right else None,
        "right_before": len(right),
        "ids": harmed,
        "helped": sum(1 for i, ok in after.items() if ok and not before[i]),
        "compared": len(after),
    }


def gain(paraphrased: Sequence[Row], corrected: Collection[str], user: str | None) -> dict[str, Any]:
    """Accuracy of corrected records' re-lettered paraphrases (``plain``: those that keep the order)."""
    mine = [r for r in paraphrased if r["id"] in corrected]
    moved = [r for r in mine if r.get("relettered")]
    plain = [r for r in mine if not r.get("relettered")]
    return {
        "accuracy": accuracy(moved),
        "n": len(moved),
        "user": user,
        "plain": {"accuracy": accuracy(plain), "n": len(plain)},
    }


def injection(
    baseline: Sequence[Row],
    originals: Sequence[Row],
    paraphrased: Sequence[Row],
    corrected: Collection[str],
    user: str | None,
) -> dict[str, Any]:
    """Stage 3's harm, gain and tokens (stage 1 beside stage 3) for one set of records."""
    before, after = token_means(baseline), token_means(originals)
    below = None
    if before["completion"] is not None and after["completion"] is not None:
        below = after["completion"] < before["completion"]
    return {
        "harm": harm(baseline, originals),
        "gain": gain(paraphrased, corrected, user),
        "tokens": {
            "stage1": before,
            "stage3": after,
            "stage3_paraphrases": token_means(paraphrased),
            "completion_below_baseline": below,
        },
    }


def correction_metrics(conversations: Sequence[Row]) -> dict[str, Any]:
    """Stage 2 for one set of records: conversations, accepted ones, mean SME rounds, memories per type."""
    kinds = sorted({kind for c in conversations for kind in c.get("memories", {})})
    return {
        "conversations": len(conversations),
        "accepted": sum(1 for c in conversations if c.get("accepted")),
        "rounds": mean([c.get("rounds") for c in conversations]),
        "memories": {kind: mean([c.get("memories", {}).get(kind) for c in conversations]) for kind in kinds},
    }


def split_names(split_of: Mapping[str, str | None]) -> list[str]:
    """The splits the records carry, sorted ("dev" before "test"); empty when none carries one."""
    return sorted({s for s in split_of.values() if s is not None})


def only(rows: Sequence[Row], split_of: Mapping[str, str | None], split: str, key: str = "id") -> list[Row]:
    """The rows whose record (``row[key]``) belongs to ``split``."""
    return [r for r in rows if split_of.get(str(r[key])) == split]


def per_split(split_of: Mapping[str, str | None], compute: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """``compute(split)`` for every split the records carry ({} when they carry none)."""
    return {name: compute(name) for name in split_names(split_of)}
