"""The pure rule that combines a small model's decomposed answer with embedding similarity."""

from __future__ import annotations

import math

import pytest

from memory.conflicts import ConflictConfig, Verdict
from memory.verdict_rules import Assessment, combine

CFG = ConflictConfig()  # same_band 0.92, contradiction_band 0.63, independent_below 0.70
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
        (OTHER, 0.85, Verdict.CONTRADICTS),  # high in the band: a negation the model misread
        (OTHER, 0.70, Verdict.CONTRADICTS),
        (OTHER, 0.66, Verdict.INDEPENDENT),  # low in the band: trust "another attribute"
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
    narrow = ConflictConfig(same_band=0.99, contradiction_band=0.9, independent_below=0.945)
    assert combine(OTHER, 0.95, narrow) is Verdict.CONTRADICTS
    assert combine(OTHER, 0.93, narrow) is Verdict.INDEPENDENT
    assert combine(SAME, 0.97, narrow) is Verdict.SAME


def test_a_negation_change_is_never_the_same_fact() -> None:
    from memory.verdict_rules import negation_differs

    old = "Theresa Bronn has conducted the Kalamazoo Singers."
    new = "Theresa Bronn has never conducted the Kalamazoo Singers."
    assert negation_differs(new, old) and negation_differs(old, new)
    assert not negation_differs("Max doesn't smoke.", "Max does not smoke.")  # one negation each
    assert combine(SAME, 0.95, CFG, new, old) is Verdict.CONTRADICTS  # the model missed the "never"
    assert combine(SAME, 0.80, CFG, new, old) is Verdict.CONTRADICTS
    assert combine(OTHER, 0.66, CFG, new, old) is Verdict.CONTRADICTS  # not left as another attribute
    assert combine(OTHER, 0.50, CFG, new, old) is Verdict.INDEPENDENT  # far apart: the cue alone is not enough
    assert combine(SAME, 0.95, CFG, old, old) is Verdict.SAME


def test_keyword_overlap_ignores_words_every_candidate_shares() -> None:
    from memory.conflicts import keyword_overlap

    facts = ["Dara Hunst is a potter in Leeds.", "Dara Hunst met Ferd at a gala in 2018.", "Dara Hunst likes tea."]
    overlap = keyword_overlap("Dara Hunst met Ferd at a charity gala in 2019.", facts)
    # idf = ln((1+3)/(1+df)): dara, hunst df 3 -> 0; met, ferd, gala df 1 -> ln 2 = 0.693 each;
    # charity, 2019 df 0 -> ln 4 = 1.386 each. Total 3*0.693 + 2*1.386 = 4.852; fact 2 shares 2.079 -> 0.4286
    assert overlap[1] == pytest.approx(3 * math.log(2) / (3 * math.log(2) + 2 * math.log(4)))
    assert overlap[0] == overlap[2] == 0.0
    assert keyword_overlap("", facts) == [0.0, 0.0, 0.0]


def test_flag_candidates_orders_the_overridden_fact_first() -> None:
    from datetime import UTC, datetime

    from memory.conflicts import flag_candidates
    from memory.models import MemoryRecord, MemoryType

    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def rec(text: str) -> MemoryRecord:
        return MemoryRecord(text=text, type=MemoryType.USER_QUESTION, user_id="u", created_at=t0, updated_at=t0)

    potter, gala, tea = (
        rec("Dara Hunst is a potter in Leeds."),
        rec("Dara Hunst met Ferd at a gala."),
        rec("Dara likes tea."),
    )
    neighbours = [(potter, 0.70), (gala, 0.66), (tea, 0.50)]  # cosine alone puts the potter fact first
    flagged = flag_candidates(neighbours, CFG, "Dara Hunst met Ferd at a charity gala in 2019.")
    assert [r.text for r, _ in flagged] == [gala.text, potter.text]  # tea is below the 0.55 threshold
    assert flagged[0][1] == 0.66  # the plain cosine is what is reported
    assert [r for r, _ in flag_candidates(neighbours, CFG)] == [potter, gala]  # no text: cosine order


def test_similarity_judge_keeps_both_when_a_number_or_name_changed() -> None:
    from memory.conflicts import SimilarityJudge

    judge = SimilarityJudge(0.95)
    assert judge.judge("Lea moved to Porto in 2020.", "Lea moved to Porto in 2015.", 0.97) is Verdict.UNSURE
    assert judge.judge("Ana mentored Bo at school.", "Bo mentored Ana at school.", 0.98) is Verdict.UNSURE
    assert judge.judge("Lea moved to Porto in 2015!", "Lea moved to Porto in 2015.", 0.99) is Verdict.SAME
    assert judge.judge("lea likes tea", "Lea likes tea", 0.5) is Verdict.SAME


def test_phrase_overlap_weighs_the_shared_sentence_frame() -> None:
    from memory.conflicts import phrase_overlap

    facts = [
        "Anjel Huyen published an article on urban design in a journal.",
        "Anjel Huyen plays classical piano.",
    ]
    overlap = phrase_overlap("Anjel Huyen published an article on piano in a journal.", facts)
    # idf = ln((1+2)/(1+df)). anjel huyen: df 2 -> 0. huyen published, published an, an article,
    # article on, in a, a journal: df 1 -> ln 1.5 each, all in fact 1. on piano, piano in: df 0 -> ln 3.
    # Fact 1: 6 ln 1.5 / (6 ln 1.5 + 2 ln 3) = 0.525; fact 2 ("classical piano") shares no pair.
    assert overlap[0] == pytest.approx(6 * math.log(1.5) / (6 * math.log(1.5) + 2 * math.log(3)))
    assert overlap[1] == 0.0
    assert phrase_overlap("", facts) == [0.0, 0.0]


def test_a_reworded_update_keeping_the_frame_is_rescued_below_the_threshold() -> None:
    from datetime import UTC, datetime

    from memory.conflicts import flag_candidates
    from memory.models import MemoryRecord, MemoryType

    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def rec(text: str) -> MemoryRecord:
        return MemoryRecord(text=text, type=MemoryType.USER_QUESTION, user_id="u", created_at=t0, updated_at=t0)

    article = rec("Anjel Huyen published an article on urban design in a renowned journal.")
    piano = rec("Anjel Huyen plays classical piano at weekends.")
    neighbours = [(piano, 0.60), (article, 0.50)]  # the embedding prefers the topic, not the frame
    new = "Anjel Huyen published an article on classical piano technique in a renowned journal."
    flagged = flag_candidates(neighbours, CFG, new)
    assert flagged[0][0].text == article.text  # rescued (0.50 < 0.55) and ranked first
    strict = ConflictConfig(rescue_threshold=10.0)
    assert [r.text for r, _ in flag_candidates(neighbours, strict, new)] == [piano.text]


SWAPS = [  # (old, new): a name, place or number replaced by another
    ("Bryen Forster is a designer based in Seattle.", "Bryen Forster is a designer based in Austin."),
    ("Nora Fishel and Eliza Woodley ran a gala.", "Joren Sullivar and Eliza Woodley ran a gala."),
    ("The adult dose is 5 mg twice daily.", "The adult dose is 10 mg twice daily."),
    ("Jonas Snyden published 'Urban Reflections'.", "Jonas Snyden published 'City Lights'."),
]
NOT_SWAPS = [  # paraphrases and added details
    ("Every weekend, Lea volunteers at the shelter.", "Lea volunteers at the shelter every weekend."),
    ("Jonas Snyden often uses Matthias Crook's music.", "Matthias Crook's music often appears in Snyden's work."),
    ("He won for his series on Patagonian glaciers.", "He won for his series about the glaciers of Patagonia."),
    ("Austen graduated from New York University.", "Austen is a graduate of NYU."),
    ("The clinic opens at 9 am.", "The clinic opens at nine in the morning."),
    ("Max works as a pharmacist.", "Max works as a pharmacist in Leeds."),
]


@pytest.mark.parametrize(
    ("old", "new", "swapped"), [(*pair, True) for pair in SWAPS] + [(*pair, False) for pair in NOT_SWAPS]
)
def test_names_substituted(old: str, new: str, swapped: bool) -> None:
    from memory.verdict_rules import names_substituted

    assert names_substituted(new, old) is swapped
    assert names_substituted(old, new) is swapped  # symmetric


def test_a_swapped_name_is_never_the_same_fact() -> None:
    old = "Bryen Forster is an accomplished graphic designer based in Seattle."
    new = "Bryen Forster is an accomplished graphic designer based in Austin, Texas."
    assert combine(SAME, 0.88, CFG, new, old) is Verdict.CONTRADICTS  # the model read it as the same value
    assert combine(SAME, 0.95, CFG, new, old) is Verdict.CONTRADICTS
    assert combine(SAME, 0.88, CFG, old, old) is Verdict.SAME
    # below the contradiction band the pair shares no frame: a new name there means another fact
    assert combine(SAME, 0.50, CFG, new, old) is Verdict.INDEPENDENT
