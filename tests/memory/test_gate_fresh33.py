"""The truth gate on what fresh33 found (session 21, read in full): a calculation that does not add up, a
negated subject longer than three words, and a claim that only the question's words support."""

from __future__ import annotations

import pytest

from memory.arithmetic import miscalculated
from memory.gate_terms import GateReason
from memory.grounding import check
from memory.models import MemoryType
from memory.option_gate import known_answers
from memory.wording import positive_text
from tests.memory.corrections import rejected_then_accepted


@pytest.mark.parametrize(
    "text",
    [
        "so the osmolal gap is 300 - 280 = 12.",  # fresh33's truth-1162: a retold sum with a step left out
        "Total score 4 + 5 + 6 = 14",
        "2 x 3 = 7",
        "3/4 = 70%",
    ],
)
def test_a_sum_that_does_not_add_up_is_refused(text: str) -> None:
    verdict = miscalculated(text)
    assert verdict is not None and verdict.reason is GateReason.UNSAID and "does not add up" in verdict.detail


@pytest.mark.parametrize(
    "text",
    [
        "Gap = 140 - (104 + 24) = 12.",
        "22/7 = 3.14",  # rounded as written
        "3/4 = 75%",
        "1,000 x 2 = 2,000",
        "7.4 - 6.1 = 1.3",
        "BP 120/80 = normal",  # not a sum
        "a 2.5*3.5 cm lesion, 20-40 yrs, a ratio of 20:1",  # no "=": nothing to check
    ],
)
def test_a_sum_that_adds_up_or_is_no_sum_passes(text: str) -> None:
    assert miscalculated(text) is None


GAP = "Blood: Na 140, Cl 104, HCO3 24 mEq/L. The anion gap is: A) 12, normal B) 20, high C) 4, low D) Cannot be said"


def test_the_gate_refuses_a_memory_whose_sum_is_wrong_and_keeps_it_right() -> None:
    said = ["No. The gap is sodium minus chloride plus bicarbonate: 140 - (104 + 24) = 12, which is normal."]
    facts = rejected_then_accepted(GAP, "B) 20, high.", said, "A) then.")
    assert check("The anion gap here is 140 - (104 + 24) = 12, which is normal.", MemoryType.RESIDUAL, facts).ok
    wrong = check("The anion gap here is 140 - 104 = 12, which is normal.", MemoryType.RESIDUAL, facts)
    assert not wrong.ok and wrong.reason is GateReason.UNSAID


def test_a_negated_subject_runs_back_to_its_clause_opener() -> None:
    # fresh33's truth-1163: "tumour markers or bone scans in a woman without symptoms do not improve survival"
    # kept "bone scans" as said (three words back), and the option the expert ruled out was stored as the answer
    assert "scans" not in positive_text("CT scans or tumour markers in a well patient are not recommended")
    # a clause of its own before the negated verb stays said
    assert positive_text("Paracetamol is safe but aspirin is not") == "Paracetamol is safe but"
    # an opening phrase says where, not what: the subject begins at its determiner (fresh15's truth-564)
    kept = positive_text("In mitral stenosis the left ventricle does not dilate")
    assert kept.startswith("In mitral stenosis")


NODULE = (
    "After surgery for a differentiated thyroid cancer, follow-up is by: A) Annual CT scan B) Tumour markers "
    "every month C) Clinical examination 6 monthly with annual ultrasound D) Clinical examination and a yearly PET"
)


def test_an_option_the_expert_ruled_out_is_not_accepted_from_a_closing_that_repeats_the_denial() -> None:
    # a guard in my own words (the code before the rule passes it too); the case itself is truth-1163's
    said = [
        "I agree that examination every six months is the core. However routine liver tests, tumour markers or CT "
        "scans in a patient without symptoms do not change survival and they are not advised. What she needs in "
        "addition is an ultrasound every year."
    ]
    closing = (
        "OK. Her follow-up is examination every 6 months plus an annual ultrasound; routine liver tests, tumour "
        "markers and CT scans in a patient without symptoms are not advised because they don't change survival."
    )
    facts = rejected_then_accepted(NODULE, "D) Clinical examination and a yearly PET.", said, closing)
    assert "A" not in known_answers(facts).accepted
    assert not check("For this follow-up question, the answer is Annual CT scan.", MemoryType.RESIDUAL, facts).ok


def test_a_claim_only_the_question_s_words_support_is_refused() -> None:
    # fresh33's truth-1163: "Tamoxifen is a breast cancer treatment, and it is recommended for patients with
    # breast cancer" from a question that said "She is now on tamoxifen"; the expert only said what is not
    # recommended
    question = (
        "A woman on letrozole after breast cancer surgery needs follow-up. Which is advised? A) Annual bone scan "
        "B) Monthly tumour markers C) Yearly mammogram D) Six-monthly liver tests"
    )
    said = ["No. Bone scans and tumour markers in a well woman are not recommended. A mammogram every year is."]
    facts = rejected_then_accepted(question, "B) Monthly tumour markers.", said, "C) then.")
    unsaid = check("Letrozole is recommended for women after breast cancer surgery.", MemoryType.RESIDUAL, facts)
    assert not unsaid.ok and unsaid.reason is GateReason.UNSAID
    # the accepted answer spelt out is the source's verdict, whatever words it shares with the source
    letter_only = rejected_then_accepted(question, "B) Monthly tumour markers.", ["It's C."], "C) then.")
    spelt = "For the question 'A woman on letrozole after breast cancer surgery needs follow-up', the answer is "
    spelt += "Yearly mammogram."
    assert check(spelt, MemoryType.RESIDUAL, letter_only).ok


SPREAD = (
    "Hospital stays of eight patients, in days: 2, 3, 3, 4, 4, 5, 6, 60. Which summary suits them best? "
    "A) Mean B) Median C) Range D) Variance"
)


def test_a_reason_the_expert_never_gave_is_refused_and_one_they_gave_is_kept() -> None:
    # fresh33's truth-1179: after "It's B." alone, "Median, as the median is the most representative average"
    # put a reason in the expert's mouth; written here in my own words
    letter_only = rejected_then_accepted(SPREAD, "A) Mean.", ["It's B."], "B) then.")
    added = check(
        "The summary that suits these hospital stays best is Median, as the median is the most typical of them.",
        MemoryType.RESIDUAL,
        letter_only,
    )
    assert not added.ok and added.reason is GateReason.UNSAID and "reason nobody gave" in added.detail
    said = ["No, B. One stay of 60 days drags the mean up; the median ignores that outlier."]
    explained = rejected_then_accepted(SPREAD, "A) Mean.", said, "B) then.")
    kept = check(
        "For these hospital stays the median suits best, because one stay of 60 days drags the mean up.",
        MemoryType.RESIDUAL,
        explained,
    )
    assert kept.ok, kept
