"""The truth gate on the cases issue 11 reproduced, and on the shapes of correction it must tell apart."""

from __future__ import annotations

import pytest

from memory.grounding import Evidence, GateReason, accepted_option, check
from memory.letters import unletter
from memory.models import MemoryType
from memory.options import named_options, parse_options
from memory.wording import clauses, negated_stems, positive_text, stems
from tests.memory.corrections import rejected_then_accepted

R, Q, L = MemoryType.RESIDUAL, MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE
DILATOR = (
    "Which drug acts on the dilator pupillae in a way analogous to pilocarpine on the sphincter pupillae? "
    "A) Timolol B) Epinephrine C) Neostigmine D) Tropicamide"
)
SME = [
    "No: the drug that directly stimulates the dilator pupillae, as pilocarpine does the sphincter, is epinephrine.",
    "The correct answer is B) Epinephrine: a direct alpha-1 agonist; tropicamide only blocks the sphincter.",
]
WRONG = "Answer: C) Neostigmine. Neostigmine raises acetylcholine and acts on the dilator like pilocarpine."
EXAMPLE = (
    "Which is the drug of choice for absence seizures? "
    "Ethosuximide is the first-line drug for typical absence seizures."
)


def dilator() -> Evidence:
    return Evidence(
        question=DILATOR,
        source_said=SME,
        user_said=[DILATOR, *SME],
        model_said=[WRONG, "You are right: B) Epinephrine."],
        model_rejected=[WRONG],
        example=EXAMPLE,
    )


def test_stems_cut_words_and_keep_numbers_whole() -> None:
    assert stems("The pupillae dilates 0.5% drops") == ["pupil", "dilat", "0.5", "drop"]
    assert stems("acts act acting") == ["act", "act", "act"]


def test_clauses_keep_decimals_and_negation_scope_stops_at_punctuation() -> None:
    assert clauses("It is 0.01. Not 0.02: no.") == ["It is 0.01", "Not 0.02", "no"]
    assert negated_stems("No, not neostigmine, it is epinephrine") == {"neost"}
    assert negated_stems("Neostigmine does not act on the dilator pupillae.") == {"act", "dilat", "pupil"}


def test_options_are_parsed_and_the_accepted_one_found() -> None:
    assert parse_options(DILATOR) == {"A": "Timolol", "B": "Epinephrine", "C": "Neostigmine", "D": "Tropicamide"}
    assert parse_options("What is the dose?") == {}
    assert accepted_option(dilator()) == ("B", "Epinephrine")
    letter_only = Evidence(question="q? A) xylose B) yam C) zeta D) ox", source_said=["No, it's C."])
    assert accepted_option(letter_only) == ("C", "zeta")
    named_rejected = Evidence(
        question="Drug of choice for absence seizure? A) Phenytoin B) Ethosuximide C) Carbamazepine D) Valproate",
        source_said=["No, not C) Carbamazepine, it is B) Ethosuximide."],
        model_rejected=["Answer: C) Carbamazepine"],
    )
    assert accepted_option(named_rejected) == ("B", "Ethosuximide")
    # without any letter: the option the source names that the chatbot had not chosen
    words_only = named_rejected.model_copy(
        update={"source_said": ["Carbamazepine can worsen absence seizures; ethosuximide is first-line."]}
    )
    assert accepted_option(words_only) == ("B", "Ethosuximide")


@pytest.mark.parametrize(
    ("text", "kind", "reason"),
    [
        # the demo's shared memory: the chatbot's own answer, which the SME had just rejected
        (
            "Neostigmine acts on the dilator pupillae in a way analogous to pilocarpine on the sphincter.",
            R,
            GateReason.REJECTED_ANSWER,
        ),
        # the demo's sentence nobody said
        (
            "Epinephrine eye drops can cause the production of aqueous humor which can lead to glaucoma.",
            R,
            GateReason.UNSAID,
        ),
        # the extractor prompt's worked example, copied
        ("Ethosuximide is the first-line drug for typical absence seizures.", L, GateReason.COPIED_EXAMPLE),
        # an option nobody stated
        ("Timolol is the drug that acts on the dilator.", R, GateReason.OTHER_OPTION),
        ("Tropicamide stimulates the dilator pupillae.", R, GateReason.OTHER_OPTION),
        # the chatbot's words credited to the user, and to the expert
        ("The user stated that neostigmine raises acetylcholine.", Q, GateReason.MODEL_WORDS),
        ("Neostigmine raises acetylcholine and acts on the dilator.", R, GateReason.MODEL_WORDS),
    ],
)
def test_false_unsaid_and_copied_memories_are_refused(text: str, kind: MemoryType, reason: GateReason) -> None:
    verdict = check(text, kind, dilator())
    assert not verdict.ok
    assert verdict.reason is reason


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Epinephrine directly stimulates the dilator pupillae, as pilocarpine does the sphincter.", R),
        ("Epinephrine is a direct alpha-1 agonist on the dilator pupillae.", R),
        ("Tropicamide only blocks the sphincter.", R),  # the expert said so: naming a wrong option is fine here
        ("For the drug acting on the dilator pupillae like pilocarpine, the accepted answer is Epinephrine.", L),
        ("The user asked which drug acts on the dilator pupillae like pilocarpine on the sphincter.", Q),
        ("The user stated that epinephrine is a direct alpha-1 agonist.", Q),
    ],
)
def test_what_the_source_said_passes(text: str, kind: MemoryType) -> None:
    verdict = check(text, kind, dilator())
    assert verdict.ok, verdict
    assert verdict.reason is GateReason.SUPPORTED


def test_a_mistake_to_avoid_may_name_the_rejected_answer_only_when_worded_as_one() -> None:
    avoid = "On the drug that acts on the dilator pupillae, avoid this mistake: answering Neostigmine."
    assert check(avoid, L, dilator(), mistake=True).ok
    # the chatbot's reason for its pick is not the expert's reason it was wrong (session 23)
    because = "On the dilator question, avoid this mistake: answering Neostigmine, which raises acetylcholine."
    assert check(because, L, dilator(), mistake=True).reason is GateReason.UNSAID
    # the same flag on a plain statement of the rejected answer does not exempt it
    plain = "Neostigmine acts on the dilator pupillae like pilocarpine on the sphincter."
    assert check(plain, L, dilator(), mistake=True).reason is GateReason.REJECTED_ANSWER


def test_a_claim_the_source_negated_is_never_stored_as_true() -> None:
    facts = Evidence(
        question="Which drug acts on the dilator? A) Timolol B) Epinephrine",
        source_said=["No. Neostigmine does not act on the dilator pupillae. The right answer is B) Epinephrine."],
    )
    verdict = check("Neostigmine acts on the dilator pupillae.", R, facts)
    assert verdict.reason is GateReason.NEGATED
    assert "does not act" in verdict.detail
    assert check("Neostigmine does not act on the dilator pupillae.", R, facts).ok


def test_numbers_must_be_said_exactly() -> None:
    facts = Evidence(
        question="Concentration of tropicamide: A) 0.01 B) 0.02 C) 0.03 D) 0.04",
        source_said=["Not quite: tropicamide eye drops are 0.5% to 1%, that is 0.005 to 0.01.", "So A) 0.01."],
        model_rejected=["Answer: B"],
    )
    assert check("Tropicamide eye drops are 0.5% to 1%, that is 0.005 to 0.01.", R, facts).ok
    assert check("Tropicamide eye drops are 50%.", R, facts).reason is GateReason.UNSAID
    assert check("The concentration of tropicamide is 0.02.", R, facts).reason is GateReason.REJECTED_ANSWER


def test_no_statement_after_the_question_means_nothing_shared() -> None:
    facts = Evidence(question="Concentration of tropicamide?", user_said=["Concentration of tropicamide?"])
    assert check("Tropicamide drops are 1%.", R, facts).reason is GateReason.NO_SOURCE
    assert check("The user asked about the concentration of tropicamide.", Q, facts).ok


def test_unletter_keeps_the_content_not_the_letter() -> None:
    options = parse_options(DILATOR)
    lettered = "For X, the accepted answer is B) Epinephrine."
    assert unletter(lettered, options) == "For X, the accepted answer is Epinephrine."
    assert unletter("The correct answer is B.", options) == "The correct answer is Epinephrine."
    assert unletter("It was (C).", options) == "It was Neostigmine."
    assert unletter("Vitamin B) deficiency", {}) == "Vitamin B) deficiency"


def test_similar_options_and_negations_elsewhere_in_the_sentence() -> None:
    question = (
        "Due to which enzyme deficiency can vitamin C not be synthesised in humans? A) L-Glucuronic acid oxidase "
        "B) L-Gulonic acid reductase C) L-Gulonolactone oxidase D) L-Gulonolactone reductase"
    )
    wrong = "Humans cannot make vitamin C because they lack D) L-Gulonolactone reductase."
    said = "Not a reduction: L-gulonolactone is oxidised to ascorbic acid by L-gulonolactone oxidase; humans lack it."
    facts = Evidence(
        question=question, source_said=[said], user_said=[question, said], model_said=[wrong], model_rejected=[wrong]
    )
    assert accepted_option(facts) == ("C", "L-Gulonolactone oxidase")
    # "cannot" negates the making of vitamin C (six words at most), not the enzyme named after "lack"
    assert positive_text("they cannot make vitamin C because they lack D) L-Gulonolactone reductase") == (
        "D) L-Gulonolactone reductase"
    )
    assert positive_text("Carbamazepine is not the drug of choice") == ""
    for text, kind in [
        ("Humans cannot make vitamin C because they lack L-Gulonolactone reductase.", R),
        ("The user states vitamin C cannot be made in humans because they lack D) L-Gulonolactone reductase.", Q),
    ]:
        assert check(text, kind, facts).reason in {GateReason.REJECTED_ANSWER, GateReason.MODEL_WORDS}, text
    assert check("Humans lack L-gulonolactone oxidase, which oxidises L-gulonolactone to ascorbic acid.", R, facts).ok


def test_a_shared_memory_must_say_what_the_answer_answers() -> None:
    facts = dilator()
    assert check("The correct answer is Epinephrine.", R, facts).reason is GateReason.NO_TOPIC
    assert check("Epinephrine directly stimulates the dilator pupillae.", R, facts).ok


def test_a_negation_is_read_against_what_precedes_it_and_empty_memories_are_refused() -> None:
    question = "Birth weight can be increased by: A) Cessation of smoking B) Aspirin C) Calcium D) Bed rest"
    said = "Bed rest has never been shown to increase birth weight, and it carries risks such as thrombosis."
    facts = Evidence(question=question, source_said=[said], user_said=[question, said])
    # the clause is long, but what it negates is said of "bed rest", which the memory asserts
    verdict = check("The user states that birth weight can be increased by D) Bed rest.", Q, facts)
    assert verdict.reason is GateReason.NEGATED
    assert check("The user states that the answer is B.", Q, facts).reason is GateReason.NO_TOPIC


def test_a_mistake_to_avoid_never_names_the_accepted_answer() -> None:
    question = "Boiled lobster syndrome is seen in poisoning of: A) Boric acid B) Nitric acid C) Lye D) Phenol"
    facts = Evidence(
        question=question,
        source_said=["No, it's A."],
        user_said=[question, "No, it's A."],
        model_said=["Boiled lobster syndrome is seen in D) Phenol poisoning."],
        model_rejected=["Boiled lobster syndrome is seen in D) Phenol poisoning."],
    )
    wrong = "On boiled lobster syndrome, avoid this mistake: answering Boric acid, which is not the correct answer."
    assert check(wrong, L, facts, mistake=True).reason is GateReason.ANSWER_AS_MISTAKE
    assert check("On boiled lobster syndrome, avoid this mistake: answering Phenol.", L, facts, mistake=True).ok


def test_in_a_negative_question_a_negated_option_is_still_an_answer() -> None:
    question = "Internal occlusal rest in a partial denture does not provide: A) Retention B) Vertical stop C) Bracing"
    facts = Evidence(
        question=question,
        source_said=["That is not right.", "The correct answer is A) Retention."],
        model_rejected=["Answer: B) Vertical stop"],
    )
    wrong = "Internal occlusal rest in a partial denture does not provide vertical stop."
    assert check(wrong, R, facts).reason is GateReason.REJECTED_ANSWER
    assert check("Internal occlusal rest in a partial denture does not provide retention.", R, facts).ok


RENAL = (
    "Which drugs are given together for renal colic? A) Diclofenac + tamsulosin B) Diclofenac C) Morphine D) Codeine"
)
RENAL_SME = ["Pain relief alone is half of it: diclofenac for the pain, and tamsulosin, which relaxes the ureter."]


def renal() -> Evidence:
    chose = "Answer: C) Morphine, the strongest painkiller."
    return Evidence(
        question=RENAL,
        source_said=RENAL_SME,
        user_said=[RENAL, *RENAL_SME],
        model_said=[chose],
        model_rejected=[chose],
    )


def test_an_option_of_several_parts_is_named_across_chunks_and_wins_over_its_part() -> None:
    options = parse_options(RENAL)
    # "diclofenac" and "tamsulosin" stand in different chunks of the expert's sentence: A, not B
    assert named_options(RENAL_SME[0], options, positive_only=True) == {"A"}
    assert accepted_option(renal()) == ("A", "Diclofenac + tamsulosin")
    # a memory naming only the part (B) names another option; both parts together are the answer
    part = check("For renal colic the answer is diclofenac.", R, renal())
    assert (part.ok, part.reason) == (False, GateReason.OTHER_OPTION)
    assert part.detail == "names B) Diclofenac, only part of the accepted A) Diclofenac + tamsulosin"
    assert check("For renal colic, give diclofenac for the pain and tamsulosin.", R, renal()).ok


def test_a_memory_that_asserts_the_rejected_argument_then_negates_it_is_refused() -> None:
    question = "Rickets with normal calcium is usually: A) Hypophosphataemic B) Nutritional C) Renal D) Hepatic"
    sme = ["No. Hypophosphataemic rickets is X-linked, so it is inherited, and it is not caused by a poor diet."]
    argued = "But a poor diet causes hypophosphataemic rickets, as in nutritional rickets?"
    facts = Evidence(
        question=question,
        source_said=sme,
        user_said=[question, *sme],
        model_said=["B) Nutritional.", argued],
        model_rejected=["B) Nutritional.", argued],
    )
    # the first chunk repeats the chatbot's argument, the last one the expert's negation of it
    mixed = check(
        "A poor diet causes hypophosphataemic rickets, like nutritional rickets, so it is not caused by a poor diet.",
        R,
        facts,
    )
    assert (mixed.ok, mixed.reason) == (False, GateReason.NEGATED)
    # the expert's own sentence, copied, asserts and negates different things: it passes
    assert check(sme[0], R, facts).ok


def test_the_accepted_answer_glued_to_the_rejected_reasoning_is_refused() -> None:
    question = (
        "A boy has passed no urine for 36 hours after severe diarrhoea; urine sodium 15, urea 110, creatinine"
        " 1.1. The kidney is: A) Acute tubular necrosis B) Pre-renal azotemia C) Cortical necrosis"
    )
    chatbot = "A) Acute tubular necrosis: shock from diarrhoea means the tubules are damaged."
    sme = [
        "You are right that the diarrhoea starves the kidney, and untreated that ends in tubular necrosis. But"
        " the sodium says otherwise: in tubular necrosis the damaged tubules lose sodium, and here the urine"
        " sodium is under 20, so this is pre-renal azotemia."
    ]
    facts = rejected_then_accepted(question, chatbot, sme, "Thanks: B) Pre-renal azotemia.")
    # every word occurs in what the expert said, but the claim is the chatbot's rejected reasoning
    glued = check("Pre-renal azotemia: shock from diarrhoea means the tubules are damaged.", R, facts)
    assert (glued.ok, glued.reason) == (False, GateReason.MODEL_WORDS)
    # (since session 15 it is caught first as the chatbot's sentence with the accepted option put in)
    assert "the chatbot's sentence" in glued.detail
    reworded = check("Pre-renal azotemia, since diarrhoea shock damages tubules.", R, facts)
    assert (reworded.ok, reworded.reason) == (False, GateReason.MODEL_WORDS) and "rejected reasoning" in reworded.detail
    # the part the expert agreed with, and the expert's own reason, pass
    assert check("The diarrhoea starves the kidney, and untreated that ends in tubular necrosis.", R, facts).ok
    assert check("The urine sodium is under 20, so this is pre-renal azotemia.", R, facts).ok


def test_the_chatbot_s_rejected_answer_copied_is_refused_and_a_ratio_is_one_number() -> None:
    question = "Adrenaline for anaphylaxis in an adult: A) 0.5 ml in 1:1000 B) 0.5 ml in 1:10000 C) 1 ml in 1:1000"
    chatbot = "The dose is C) 1 ml in 1:1000, that is 1 mg of adrenaline intramuscularly."
    sme = [
        "No. The adult dose is 0.5 ml of the 1:1000 solution, 0.5 mg, into the thigh. A.",
        "A bigger dose is not better: 1 mg intramuscularly, or any 1:1000 solution pushed into a vein, can bring on"
        " arrhythmias.",
    ]
    facts = rejected_then_accepted(question, chatbot, sme, "Understood: A) 0.5 ml in 1:1000.")
    assert clauses("1 ml in 1:1000, that is 1 mg. Then: more") == ["1 ml in 1:1000, that is 1 mg", "Then", "more"]
    # every chunk of it is somewhere in what the expert said, but the sentence is the chatbot's rejected answer
    copied = check("The dose is 1 ml in 1:1000, that is 1 mg of adrenaline intramuscularly.", R, facts)
    assert (copied.ok, copied.reason) == (False, GateReason.REJECTED_ANSWER)
    assert "copies the chatbot's rejected answer" in copied.detail
    # the expert's own sentence about the wrong dose, and the right dose, pass ("1 ml" is not part of "0.5 ml")
    assert check(sme[1], R, facts).ok
    assert check("The adult dose of adrenaline is 0.5 ml of the 1:1000 solution, into the thigh.", R, facts).ok


def test_a_rejected_option_the_expert_agreed_with_in_part_is_the_expert_s() -> None:
    question = "Which lipoprotein is richest in cholesterol? A) HDL B) LDL C) VLDL"
    chatbot = "A) HDL, because HDL carries cholesterol from the tissues back to the liver."
    sme = ["You're right that HDL carries cholesterol from the tissues back to the liver. But LDL is the richest."]
    facts = rejected_then_accepted(question, chatbot, sme, "Thanks: B) LDL.")
    # the chatbot's clause, which the expert repeated word for word: the expert's, so it is kept
    assert check("HDL carries cholesterol from the tissues back to the liver.", R, facts).ok


def test_a_memory_that_adds_nothing_to_the_question_is_refused() -> None:
    question = "In sleep apnea syndrome, the AHI for mild sleep apnea is: A) >5 B) >15 C) >10 D) >30"
    facts = Evidence(
        question=question,
        source_said=["Wrong option; the right one is A. Mild apnoea starts at five events an hour."],
        model_said=["Mild sleep apnoea begins at B) >15 events an hour.", "Thank you, the answer is A) >5."],
        model_rejected=["Mild sleep apnoea begins at B) >15 events an hour."],
    )
    empty = "On sleep apnea syndrome: the expert corrected the mistake by providing the correct answer."
    verdict = check(empty, L, facts)
    assert not verdict.ok and verdict.reason is GateReason.NO_TOPIC
    assert not check("Mild sleep apnea is defined by the AHI.", R, facts).ok
    # naming the accepted option is content, even an option too short for word stems
    assert check("For mild sleep apnea syndrome, the accepted answer is >5.", L, facts).ok
    roman = Evidence(
        question="Vitamin K dependent factor is: A) II B) III C) IV D) VI",
        source_said=["No, the answer is A) II: prothrombin needs vitamin K."],
        model_rejected=["C) IV"],
    )
    assert check("For the question 'Vitamin K dependent factor is', the answer is II.", R, roman).ok
