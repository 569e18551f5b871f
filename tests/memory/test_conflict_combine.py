"""The pure rule that combines a small model's decomposed answer with embedding similarity."""

from __future__ import annotations

import pytest

from memory.conflicts import Assessment, ConflictConfig, Verdict, combine

CFG = ConflictConfig()  # same_band 0.92, contradiction_band 0.63, middle of the band 0.775
SAME = Assessment(same_attribute=True, same_value=True)
CHANGED = Assessment(same_attribute=True, same_value=False)
OTHER = Assessment(same_attribute=False, same_value=False)


@pytest.mark.parametrize(
    ("assessment", "similarity", "expected"),
    [
        (SAME, 0.97, Verdict.SAME),  # near-identical and the model agrees
        (OTHER, 0.97, Verdict.SAME),  # near-identical wording wins over a confused model
        (CHANGED, 0.97, Verdict.CONTRADICTS),  # "moved in 2015" vs "moved in 2020": value changed
        (SAME, 0.80, Verdict.SAME),
        (CHANGED, 0.70, Verdict.CONTRADICTS),
        (OTHER, 0.85, Verdict.CONTRADICTS),  # upper half of the band: a negation the model misread
        (OTHER, 0.70, Verdict.INDEPENDENT),  # lower half: trust "another attribute"
        (CHANGED, 0.50, Verdict.CONTRADICTS),  # rephrased update the embedding misses
        (OTHER, 0.50, Verdict.INDEPENDENT),
        (SAME, 0.40, Verdict.INDEPENDENT),  # "same value" without the same attribute means nothing
        (None, 0.95, Verdict.SAME),  # no usable model answer: by band, keeping both when unsure
        (None, 0.75, Verdict.UNSURE),
        (None, 0.30, Verdict.INDEPENDENT),
    ],
)
def test_combine(assessment: Assessment | None, similarity: float, expected: Verdict) -> None:
    assert combine(assessment, similarity, CFG) is expected


def test_bands_are_configurable() -> None:
    narrow = ConflictConfig(same_band=0.99, contradiction_band=0.9)
    assert combine(OTHER, 0.95, narrow) is Verdict.CONTRADICTS
    assert combine(OTHER, 0.93, narrow) is Verdict.INDEPENDENT
    assert combine(SAME, 0.97, narrow) is Verdict.SAME
