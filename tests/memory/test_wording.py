"""Wording helpers of the truth gate that are not covered through it."""

from __future__ import annotations

import pytest

from memory.wording import mend_cut


@pytest.mark.parametrize(
    ("text", "mended"),
    [
        ("Toxoid crosses to the baby and.", "Toxoid crosses to the baby..."),
        ("Ependymoma does not belong in tuberous sclerosis;.", "Ependymoma does not belong in tuberous sclerosis."),
        ("Methicillin is no longer used,.", "Methicillin is no longer used."),
        # a sentence may end on a name or a preposition
        ("Give vitamin A.", "Give vitamin A."),
        ("That is what the drug is for.", "That is what the drug is for."),
        ("Done.", "Done."),
    ],
)
def test_a_cut_off_ending_is_marked_and_a_finished_one_kept(text: str, mended: str) -> None:
    assert mend_cut(text) == mended
