"""The truth gate on what a terse correction does not say, and on negative questions (session 13).

"That is not right. The correct answer is B) ..." rejects the chatbot's pick as the answer and says
nothing else of it; a negative question's answer is the option that lacks what the question names.
Written from the held-out run's store (session 12), fresh18's truth-680, -689 and -701, fresh19's truth-712,
-717 and -731 and fresh20's truth-749, each in other words; and session 14's check that an LLM-response memory
is filed under the question's topic (fresh20's truth-771).
"""

from __future__ import annotations

import pytest

from memory.grounding import Evidence, GateReason, check
from memory.letters import unletter
from memory.models import MemoryType
from memory.option_gate import known_answers
from memory.options import answers, negative_question, parse_options
from memory.wording import negated_stems
from tests.memory.corrections import rejected_then_accepted

R, Q, L = MemoryType.RESIDUAL, MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE

ANTIDOTE = (
    "Which drug is the antidote for paracetamol poisoning? A) Flumazenil B) N-acetylcysteine C) Naloxone D) Atropine"
)


def antidote(*sme: str) -> Evidence:
    said = list(sme) or ["That is not right.", "The correct answer is B) N-acetylcysteine."]
    return rejected_then_accepted(ANTIDOTE, "C) Naloxone. It reverses an overdose.", said, "B) N-acetylcysteine.")


def test_a_bare_rejection_says_nothing_else_of_the_rejected_option() -> None:
    terse = antidote()
    verdict = check("Naloxone is not the antidote for paracetamol poisoning.", R, terse)
    assert (verdict.ok, verdict.reason) == (False, GateReason.UNSAID), verdict
    assert "C) Naloxone" in verdict.detail
    assert check("N-acetylcysteine, not naloxone, is the antidote for paracetamol poisoning.", R, terse).ok
    said = antidote("Naloxone is for opioids, not paracetamol.", "The correct answer is B) N-acetylcysteine.")
    assert check("Naloxone is not the antidote for paracetamol poisoning.", R, said).ok


ANAEMIA = (
    "Which of the following is not a cause of microcytic anaemia? A) Iron deficiency B) Thalassaemia "
    "C) Vitamin B12 deficiency D) Anaemia of chronic disease"
)


def anaemia() -> Evidence:
    return rejected_then_accepted(
        ANAEMIA,
        "B) Thalassaemia. It gives large cells.",
        ["That is not right.", "The correct answer is C) Vitamin B12 deficiency."],
        "C) Vitamin B12 deficiency.",
    )


@pytest.mark.parametrize(
    "reversed_claim",
    [
        "For the causes of microcytic anaemia, the right option is Vitamin B12 deficiency.",
        "Vitamin B12 deficiency is a cause of microcytic anaemia.",
    ],
)
def test_a_negative_question_s_answer_is_not_given_what_the_question_denies_it(reversed_claim: str) -> None:
    verdict = check(reversed_claim, R, anaemia())
    assert (verdict.ok, verdict.reason) == (False, GateReason.NEGATED), verdict


@pytest.mark.parametrize(
    "kept",
    [
        "For the question 'Which is not a cause of microcytic anaemia', the answer is Vitamin B12 deficiency.",
        "Vitamin B12 deficiency is not a cause of microcytic anaemia.",
    ],
)
def test_a_negative_question_s_answer_said_with_its_negation_is_kept(kept: str) -> None:
    assert check(kept, R, anaemia()).ok


def test_a_premise_s_negation_does_not_make_a_negative_question() -> None:
    liner = "Soft liners are not left in place for long because they A) Harden in the mouth B) Cost too much C) Smell"
    facts = rejected_then_accepted(liner, "B) Cost too much.", ["Should be A."], "A) Harden in the mouth.")
    assert check("For soft liners left in place, the accepted answer is Harden in the mouth.", L, facts).ok


def test_an_option_called_by_its_letter_is_refused() -> None:
    lettered = "N-acetylcysteine is the antidote for paracetamol poisoning, unlike options A and C."
    verdict = check(lettered, R, antidote())
    assert (verdict.ok, verdict.reason) == (False, GateReason.OTHER_OPTION), verdict
    assert "letter" in verdict.detail


BURNS = (
    "In a burns patient, which is the best guide to fluid resuscitation? A) Haemoglobin level B) Urine output "
    "C) Heart rate D) Central venous pressure"
)


def test_a_user_memory_does_not_ask_about_the_chatbot_s_rejected_option() -> None:
    facts = rejected_then_accepted(
        BURNS,
        "A) Haemoglobin level. A rising level shows the blood is concentrating.",
        ["Partly. A high Hb shows concentration late. Titrate the fluids to an hourly urine output of 0.5 to 1 ml/kg."],
        "B) Urine output.",
    )
    verdict = check(
        "The user asks whether haemoglobin is the best guide to fluid resuscitation in a burns patient.", Q, facts
    )
    assert (verdict.ok, verdict.reason) == (False, GateReason.MISREPORTED), verdict
    assert check("The user asks what best guides fluid resuscitation in a burns patient.", Q, facts).ok


SLIP = (
    "Which view is the least helpful for a pars fracture? A) CT B) MR C) X-ray lumbar spine- AP view "
    "D) X-ray lumbar spine- Lateral view"
)


def test_a_two_letter_word_and_a_least_question_find_the_answer() -> None:
    assert negative_question(SLIP)
    assert not negative_question("At least how many doses are given? A) One B) Two")
    facts = rejected_then_accepted(
        SLIP,
        "A) CT. Plain films show it best.",
        ["No. CT shows the pars defect well and the lateral film grades the slip. The AP view adds least."],
        "C) X-ray lumbar spine- AP view.",
    )
    assert known_answers(facts).accepted == {"C"}


def test_a_turn_of_one_number_names_that_option_and_a_listed_number_does_not() -> None:
    options = parse_options("Which organism causes most otitis media? A) Pneumococcus B) Moraxella C) Klebsiella")
    assert answers(["(1)"], ["B) Moraxella."], options, ["A) Pneumococcus."]).accepted == {"A"}
    scores = parse_options("How many grades has the index? A) 4 B) 6 C) 8 D) 5")
    listed = ["Six: weighted 0, 0.5, 1, 2, 3 and 4."]
    assert "B" not in answers(listed, ["C) 8."], scores, ["B) 6."]).accepted


def test_a_dash_ends_a_negation_and_a_lower_case_letter_ends_a_verdict() -> None:
    options = parse_options("SGOT rises in: A) Renal failure B) Gout C) Myocardial infarction D) Asthma")
    dashed = ["not renal failure — myocardial infarction. It leaks from damaged heart muscle."]
    assert answers(dashed, ["A) Renal failure."], options, ["C) Myocardial infarction."]).accepted == {"C"}
    assert answers(["wrong one. it's c"], ["A) Renal failure."], options, ["C) Myocardial infarction."]).accepted == {
        "C"
    }
    # session 14, from fresh21's truth-787: a whole turn of "no", a dash and a letter
    for turn in ("no — c", "No - C.", "no – c"):
        assert answers([turn], ["A) Renal failure."], options, ["C) Myocardial infarction."]).accepted == {"C"}, turn
    assert answers(["no —"], ["A) Renal failure."], options, ["C) Myocardial infarction."]).accepted == set()


def test_an_option_called_by_its_place_is_refused() -> None:
    placed = "N-acetylcysteine is the second option for paracetamol poisoning."
    verdict = check(placed, R, antidote())
    assert (verdict.ok, verdict.reason) == (False, GateReason.OTHER_OPTION), verdict
    assert (
        check(
            "The postnatal dose is the second one; N-acetylcysteine is the antidote for paracetamol poisoning.",
            R,
            antidote(),
        ).reason
        is not GateReason.OTHER_OPTION
    )


def test_the_closing_picks_which_of_the_options_the_expert_spoke_for_is_the_answer() -> None:
    options = parse_options(
        "Drug not needing a dose change in renal failure? A) Gentamicin B) Vancomycin C) Calcium channel blocker"
    )
    said = [
        "Vancomycin goes by the kidney. The one that needs no renal dose change at all is the CCB. Gentamicin needs it."
    ]
    assert answers(said, ["B) Vancomycin."], options, ["C) Calcium channel blocker."], negative=True).accepted == {"C"}


def test_an_llm_response_memory_is_filed_under_the_question_s_topic() -> None:
    # session 14, from fresh20's truth-771: the expert mentioned a landmark near the answer, and the model
    # filed the rejected answer under that landmark, a question nobody asked
    evidence = rejected_then_accepted(
        "The lateral lingual swellings give rise to: A) Anterior 2/3 of tongue B) Posterior 1/3 of tongue",
        "B) Posterior 1/3 of tongue. They lie near the foramen caecum, at the back.",
        ["The foramen caecum marks the boundary, not the back. The swellings form the anterior two-thirds."],
        "A) Anterior 2/3 of tongue.",
    )
    elsewhere = "On the location of the foramen caecum, avoid this mistake: answering Posterior 1/3 of tongue."
    verdict = check(elsewhere, L, evidence, mistake=True)
    assert (verdict.ok, verdict.reason) == (False, GateReason.OFF_TOPIC), verdict
    assert "'the location of the foramen caecum'" in verdict.detail
    filed = "On what the lateral lingual swellings form, avoid this mistake: answering Posterior 1/3 of tongue."
    assert check(filed, L, evidence, mistake=True).ok
    assert check("For the lateral lingual swellings, the accepted answer is Anterior 2/3 of tongue.", L, evidence).ok
    # a topic named by an option's words is the question's too; a residual memory has no topic to file
    assert check("For the tongue, the accepted answer is Anterior 2/3 of tongue.", L, evidence).ok
    assert check("The foramen caecum marks the boundary, not the back.", R, evidence).ok


def test_an_answer_drawn_from_a_premise_not_about_the_question_is_refused() -> None:
    # session 14, from fresh21's truth-806: the expert said the wire is used first because it is the most
    # elastic; the memory drew the answer from the consequence
    evidence = rejected_then_accepted(
        "Which suture is the most elastic? A) Silk B) Nylon C) Polypropylene",
        "A) Silk. It is soft and handles well.",
        ["Polypropylene is the most elastic suture here. That's why we use it for running skin closure."],
        "C) Polypropylene.",
    )
    answer = "so for the most elastic suture the right option is Polypropylene."
    verdict = check(f"Polypropylene is what we use for running skin closure, {answer}", R, evidence)
    assert (verdict.ok, verdict.reason) == (False, GateReason.UNSAID), verdict
    assert "premise" in verdict.detail
    # a premise in the question's words gives the answer
    assert check(f"Polypropylene is the most elastic suture here, {answer}", R, evidence).ok


def test_a_temperature_in_brackets_is_no_option_letter() -> None:
    # session 14, from fresh22's truth-823: "(243 vs 238 mmHg at 20°C)" read as the letter C, so the rejected
    # option was taken for the accepted one and stored as "the accepted answer"
    options = parse_options(
        "A vaporizer resembles its agent in: A) Molecular weight B) Oil gas coefficient C) Blood gas coefficient "
        "D) Vapor pressure"
    )
    said = ["Nope. It is set for the vapor pressure, so agents of equal pressure (240 mmHg at 20°C) swap."]
    found = answers(said, ["C) Blood gas coefficient. Uptake."], options, ["Thanks."])
    assert (found.accepted, found.rejected) == ({"D"}, {"C"})
    kept = "Agents swap when their pressures match (240 mmHg at 20°C)."
    assert unletter(kept, options) == kept


def test_an_option_that_opens_with_a_capital_a_is_not_spelt_out_twice() -> None:
    # session 14, from fresh22's truth-828: "the answer is A child with airway obstruction" read "A" as a letter
    # and became "the answer is A child with airway obstruction child with airway obstruction"
    options = parse_options("Whom do you attend first? A) A child with airway obstruction B) A child with shock")
    spelt = "For the question 'Whom do you attend first', the answer is A child with airway obstruction."
    assert unletter(spelt, options) == spelt
    assert unletter("The answer is A) A child with airway obstruction.", options) == (
        "The answer is A child with airway obstruction."
    )
    assert unletter("The answer is B.", options) == "The answer is A child with shock."


def test_a_memory_may_not_add_how_rare_or_common_something_is() -> None:
    # session 14, from fresh22's truth-819: "Cauda equina syndrome is a rare condition that ..." (nobody said rare)
    evidence = rejected_then_accepted(
        "Back pain with urinary incontinence after a disc prolapse? A) Bone metastasis B) Cauda equina syndrome",
        "A) Bone metastasis.",
        ["No. A central disc prolapse presses on the cauda equina: back pain, bladder trouble, saddle anaesthesia."],
        "B) Cauda equina syndrome.",
    )
    rare = "Cauda equina syndrome is a rare condition with back pain, bladder trouble and saddle anaesthesia."
    verdict = check(rare, R, evidence)
    assert (verdict.ok, verdict.reason) == (False, GateReason.UNSAID), verdict
    assert "rare" in verdict.unsupported
    assert check("Cauda equina syndrome gives back pain, bladder trouble and saddle anaesthesia.", R, evidence).ok


def test_a_dash_ends_the_scope_of_a_denial_so_what_follows_it_is_said() -> None:
    # session 16, from fresh25's truth-908: "No, not X - <subject> is Y" denies X only; before, the subject
    # after the dash fell in the negation's six words and the right answer was refused as negated
    assert negated_stems("No, not naloxone - paracetamol overdose needs N-acetylcysteine") == {"nalox"}
    assert negated_stems("not naloxone but paracetamol antidote") == {"nalox"}
    said = ["No, not naloxone - paracetamol poisoning is treated with N-acetylcysteine, given early."]
    verdict = check("Paracetamol poisoning is treated with N-acetylcysteine.", R, antidote(*said))
    assert verdict.ok, verdict.describe()
    # the denial itself still holds
    assert not check("Paracetamol poisoning is treated with naloxone.", R, antidote(*said)).ok
