"""What memory injection did to the answers: harm, gain, tokens per answer, and the per-split view.

Pure functions over the answer rows of the lifecycle (:class:`scenarios.rows.AnswerRow`). Rows
checkpointed by an older run may lack the token and lettering fields; they count as missing, not as
zero.

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
from typing import Protocol, TypeVar

from scenarios.results import (
    AnswerMetrics,
    CorrectionMetrics,
    Describe,
    Distribution,
    Gain,
    Harm,
    Injection,
    Share,
    TokenComparison,
    TokenMeans,
)
from scenarios.rows import AnswerRow, Conversation

T = TypeVar("T")


class OfRecord(Protocol):
    """A row about one record (an answer, a correction conversation)."""

    @property
    def record_id(self) -> str:
        """The record's id."""
        ...


R = TypeVar("R", bound=OfRecord)


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are present; None when none is."""
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def accuracy(rows: Sequence[AnswerRow]) -> float | None:
    """Share of rows answered correctly; None for no rows."""
    return sum(1 for r in rows if r.correct) / len(rows) if rows else None


def share(rows: Sequence[AnswerRow]) -> Share:
    """The accuracy of ``rows`` and how many there are."""
    return Share(accuracy=accuracy(rows), n=len(rows))


def token_means(rows: Sequence[AnswerRow]) -> TokenMeans:
    """Mean completion and prompt tokens per answer, as the model client reported them."""
    return TokenMeans(
        n=len(rows),
        completion=mean([r.completion_tokens for r in rows]),
        prompt=mean([r.prompt_tokens for r in rows]),
    )


def answer_metrics(rows: Sequence[AnswerRow]) -> AnswerMetrics:
    """Accuracy, counts, mean ICS / KPCS / AICS and tokens of a set of answers."""
    correct = sum(1 for r in rows if r.correct)
    return AnswerMetrics(
        n=len(rows),
        accuracy=accuracy(rows),
        distribution=Distribution(correct=correct, incorrect=len(rows) - correct),
        ics=mean([r.ics for r in rows]),
        kpcs=mean([r.kpcs for r in rows]),
        aics=mean([r.aics for r in rows]),
        tokens_per_response=Describe.of([r.tokens for r in rows]),
        answer_tokens=token_means(rows),
    )


def harm(baseline: Sequence[AnswerRow], with_memory: Sequence[AnswerRow]) -> Harm:
    """Records right without memory and wrong with it (and the reverse), over records answered in both."""
    before = {r.id: r.correct for r in baseline}
    after = {r.id: r.correct for r in with_memory if r.id in before}
    right = [i for i in after if before[i]]
    harmed = [i for i in right if not after[i]]
    return Harm(
        n=len(harmed),
        share=len(harmed) / len(right) if right else None,
        right_before=len(right),
        ids=harmed,
        helped=sum(1 for i, ok in after.items() if ok and not before[i]),
        compared=len(after),
    )


def gain(paraphrased: Sequence[AnswerRow], corrected: Collection[str], user: str | None) -> Gain:
    """Accuracy of corrected records' re-lettered paraphrases (``plain``: those that keep the order)."""
    mine = [r for r in paraphrased if r.id in corrected]
    moved = [r for r in mine if r.relettered]
    plain = [r for r in mine if not r.relettered]
    return Gain(accuracy=accuracy(moved), n=len(moved), user=user, plain=share(plain))


def injection(
    baseline: Sequence[AnswerRow],
    originals: Sequence[AnswerRow],
    paraphrased: Sequence[AnswerRow],
    corrected: Collection[str],
    user: str | None,
) -> Injection:
    """Stage 3's harm, gain and tokens (stage 1 beside stage 3) for one set of records."""
    before, after = token_means(baseline), token_means(originals)
    below = None
    if before.completion is not None and after.completion is not None:
        below = after.completion < before.completion
    return Injection(
        harm=harm(baseline, originals),
        gain=gain(paraphrased, corrected, user),
        tokens=TokenComparison(
            stage1=before,
            stage3=after,
            stage3_paraphrases=token_means(paraphrased),
            completion_below_baseline=below,
        ),
    )


def correction_metrics(conversations: Sequence[Conversation]) -> CorrectionMetrics:
    """Stage 2 for one set of records: conversations, accepted ones, mean SME rounds, memories per type."""
    kinds = sorted({kind for c in conversations for kind in c.memories})
    return CorrectionMetrics(
        conversations=len(conversations),
        accepted=sum(1 for c in conversations if c.accepted),
        rounds=mean([c.rounds for c in conversations]),
        memories={kind: mean([c.memories.get(kind) for c in conversations]) for kind in kinds},
    )


def split_names(split_of: Mapping[str, str | None]) -> list[str]:
    """The splits the records carry, sorted ("dev" before "test"); empty when none carries one."""
    return sorted({s for s in split_of.values() if s is not None})


def only(rows: Sequence[R], split_of: Mapping[str, str | None], split: str) -> list[R]:
    """The rows whose record belongs to ``split``."""
    return [r for r in rows if split_of.get(r.record_id) == split]


def per_split(split_of: Mapping[str, str | None], compute: Callable[[str], T]) -> dict[str, T]:
    """``compute(split)`` for every split the records carry ({} when they carry none)."""
    return {name: compute(name) for name in split_names(split_of)}
