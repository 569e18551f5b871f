"""Which options a turn names and which one the expert accepted (``memory.options``), in the forms experts use."""

from __future__ import annotations

import pytest

from memory.grounding import Evidence, GateReason, accepted_option, check
from memory.models import MemoryType
from memory.option_names import alike
from memory.options import named_options, parse_options

R = MemoryType.RESIDUAL

GLYCOGEN = (
    "Which enzyme works in both glycogen synthesis and breakdown? A) Glycogen synthase B) Glycogen phosphorylase "
    "C) Branching enzyme D) Phosphoglucomutase"
)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("phosphorylat", "phosphorylase", True),  # "phosphorylated" with its ending cut
        ("periodontium", "periodontal", True),
        ("papilloedema", "papilledema", True),  # British and American spellings
        ("haemorrhage", "hemorrhage", True),
        ("arteriolosclerosi", "arteriosclerosi", True),
        ("phosphoglucomutase", "phosphorylase", False),  # both were "phosp" when cut to five letters
        ("arthrography", "arthroscopy", False),
        ("osteoma", "osteosarcoma", False),
        ("auricular", "auriculotemporal", False),
        ("hydroxylase", "hydroxylation", True),
        ("hyperthyroidism", "hypothyroidism", False),
        ("hyperparathyroidism", "hypoparathyroidism", False),
        ("estradiol", "estriol", False),
        ("0.5", "0.05", False),
        ("rectal", "rectum", True),  # session 14, fresh20's truth-757: "rectum" names option "Rectal"
        ("sacral", "sacrum", True),
        ("renal", "renum", False),  # a stem of three letters is too short to tell
        ("rectal", "rectus", False),  # the muscle, not the rectum
        ("metal", "meta", False),
    ],
)
def test_option_words_are_one_word_despite_endings_and_spelling_not_despite_a_prefix(
    a: str, b: str, same: bool
) -> None:
    assert alike(a, b) is same and alike(b, a) is same


def test_an_option_is_not_named_by_another_option_s_first_five_letters() -> None:
    options = parse_options(GLYCOGEN)
    said = "Phosphorylase only breaks glycogen down. The shared step is phosphoglucomutase."
    assert named_options(said.split(". ")[1], options, positive_only=True) == {"D"}
    assert named_options(said, options) == {"B", "D"}
    # the chatbot's argument named B; the expert explains A, B and D; it closes on D, which the expert said
    facts = Evidence(
        question=GLYCOGEN,
        source_said=[
            "No. Phosphorylase is for breakdown alone, and synthesis runs through glycogen synthase. "
            "Phosphoglucomutase interconverts glucose-6-phosphate and glucose-1-phosphate in both directions."
        ],
        model_said=["B) Glycogen phosphorylase runs both ways.", "I see, the answer is D) Phosphoglucomutase."],
        model_rejected=["B) Glycogen phosphorylase runs both ways."],
    )
    assert accepted_option(facts) == ("D", "Phosphoglucomutase")
    assert check(
        "Phosphoglucomutase acts in both glycogen synthesis and glycogen breakdown.", MemoryType.RESIDUAL, facts
    ).ok


def test_a_bracketed_aside_is_another_name_for_the_option() -> None:
    options = {"A": "Paired t test", "B": "One way analysis of variance (one way ANOVA)", "C": "Foramen ovale (V3)"}
    assert named_options("For three groups use one-way ANOVA.", options) == {"B"}
    assert named_options("Compare three means by one-way analysis of variance.", options) == {"B"}
    assert named_options("The foramen ovale transmits V3.", options) == {"C"}
    assert named_options("Cranial nerve V3 branches.", options) == set()  # an aside of a number alone names nothing


def test_an_option_written_as_one_word_is_named_and_a_number_is_not_dropped() -> None:
    options = {"A": "Mac conkey medium", "B": "Phosphatidyl glycerol", "C": "Factor 8", "D": "Osteoma"}
    assert named_options("MacConkey medium holds back cocci.", options) == {"A"}
    assert named_options("Phosphatidylglycerol is absent from blood.", options) == {"B"}
    assert named_options("Von Willebrand factor carries it.", options) == set()
    assert named_options("It is not an osteosarcoma.", options) == set()


def _closing(said: str, closing: str, question: str = GLYCOGEN, chose: str = "B) Glycogen phosphorylase.") -> Evidence:
    return Evidence(question=question, source_said=[said], model_said=[chose, closing], model_rejected=[chose])


ETHANOL = (
    "Enzyme regulating the conversion of ethanol to acetaldehyde: A) Alcohol dehydrogenase "
    "B) Acetaldehyde dehydrogenase C) Catalase D) Enolase"
)


def test_an_option_written_out_whole_keeps_its_words_from_the_options_around_it() -> None:
    options = parse_options(ETHANOL)
    # "dehydrogenase" is Alcohol dehydrogenase's here, and "acetaldehyde" is the question's (truth-612)
    assert named_options("Alcohol dehydrogenase turns ethanol into acetaldehyde.", options) == {"A"}
    assert named_options("Ethanol goes to acetaldehyde by alcohol dehydrogenase.", options) == {"A"}
    # a second "dehydrogenase" beside the first is another option's
    assert named_options("Not alcohol dehydrogenase but the dehydrogenase of acetaldehyde.", options) == {"A", "B"}
    assert named_options("Acetaldehyde dehydrogenase follows alcohol dehydrogenase.", options) == {"A", "B"}
    # an option inside a longer one keeps nothing: "potassium oxalate and sodium fluoride" is the longer one
    tubes = {"A": "Potassium oxalate", "B": "Potassium oxalate + sodium fluoride", "C": "EDTA"}
    assert named_options("Use potassium oxalate and sodium fluoride.", tubes) == {"B"}
    facts = _closing(
        "The answer is A.", "A) Alcohol dehydrogenase.", ETHANOL, "C) Catalase does it in the peroxisomes."
    )
    assert check("Alcohol dehydrogenase is the enzyme that converts ethanol to acetaldehyde.", R, facts).ok
    refused = check(
        "Ethanol to acetaldehyde is not alcohol dehydrogenase but the dehydrogenase of acetaldehyde.", R, facts
    )
    assert refused.reason == GateReason.OTHER_OPTION


def test_the_chatbot_s_closing_pick_counts_only_where_the_expert_spoke_for_it() -> None:
    explained = "Synthase builds glycogen and phosphoglucomutase serves both pathways; phosphorylase only degrades."
    assert accepted_option(_closing(explained, "Understood: D) Phosphoglucomutase.")) == ("D", "Phosphoglucomutase")
    # closing on an option the expert only negated, or never spoke of, tells nothing
    assert accepted_option(_closing("It is not a branching enzyme, and phosphorylase only degrades.", "So C).")) is None
    assert accepted_option(_closing("Phosphorylase only degrades glycogen.", "Then C) Branching enzyme.")) is None
    # the chatbot's own earlier pick is not made the answer by its closing on it again
    assert accepted_option(_closing(explained, "So B) Glycogen phosphorylase after all.")) is None
    # the expert's letter wins over the chatbot's closing
    assert accepted_option(_closing("It's D. " + explained, "Understood: A) Glycogen synthase.")) == (
        "D",
        "Phosphoglucomutase",
    )


def test_a_closing_pick_that_disagrees_with_the_expert_s_words_leaves_no_answer() -> None:
    question = (
        "Renal osteodystrophy differs from rickets by: "
        "A) Hypocalcemia B) Hypercalcemia C) Hypophosphatemia D) Hyperphosphatemia"
    )
    said = "Both can be hypocalcaemic. In the hypophosphataemic forms phosphate is low; a failing kidney retains it."
    # the expert's words name only C (as the contrast); the chatbot closes on D: neither is taken
    facts = _closing(said, "Thank you, the answer is D) Hyperphosphatemia.", question, "A) Hypocalcemia")
    assert accepted_option(facts) is None


def test_a_bare_stance_is_no_user_memory_but_a_preference_is() -> None:
    facts = Evidence(question="Tumour marker for seminoma? A) PLAP B) HCG", source_said=["Disagree. A is correct."])
    facts = facts.model_copy(update={"user_said": [facts.question, "Disagree. A is correct."]})
    stance = check("The user disagrees with the expert's answer.", MemoryType.USER_QUESTION, facts)
    assert (stance.ok, stance.reason) == (False, GateReason.NO_TOPIC)
    assert check("The user says PLAP is the seminoma marker.", MemoryType.USER_QUESTION, facts).ok


@pytest.mark.parametrize(
    ("said", "accepted"),
    [
        (["That's not right. B is the one."], ("B", "yam")),
        (["A is the right one."], ("A", "xylose")),
        (["That's not it. C is correct."], ("C", "zeta")),
        (["Nope, A."], ("A", "xylose")),
        (["D. Not C."], ("D", "ox")),
        (["Wrong option; the right one is A."], ("A", "xylose")),
        (["It should be B."], ("B", "yam")),
        # a letter inside a sentence is not a verdict: "Vitamin A is the one ..." names no option by letter
        (["Vitamin A is the one that matters here."], None),
        (["It should be A patient with anaemia."], None),
        (["Should've been B."], ("B", "yam")),
        (["It should have been C."], ("C", "zeta")),
        (["Answer's B."], ("B", "yam")),
        (["I'd go with C here."], ("C", "zeta")),
        # a stage's letter is no option letter: "(T4d)"
        (["Skin oedema counts as T4b; inflammatory carcinoma is (T4d)."], None),
        # session 11, from fresh14-15 (truth-542, -563, -570): unmeasured forms
        (["D, mate."], ("D", "ox")),
        (["it's the B one"], ("B", "yam")),
        (["The third one."], ("C", "zeta")),
        (["The first one to rise is troponin."], None),
        (["Azithromycin is the first choice in children."], None),
        # session 12, from fresh15's truth-577: the last letter of the question's options
        (["Last option."], ("D", "ox")),
        (["No, the last one."], ("D", "ox")),
        (["The last one you gave was C, and C is wrong."], None),
        # "not X but Y" says Y (fresh16's truth-600 "Not PT but aPTT"); Y must be one of the options' words
        (["Not zeta but ox."], ("D", "ox")),
        # session 12, from fresh17's truth-633, -654 and -661
        (["c"], ("C", "zeta")),
        (["Option two."], ("B", "yam")),
        (["A, no question."], ("A", "xylose")),
        (["The drug of choice one would pick is zeta."], ("C", "zeta")),
        # a letter that opens a list is no verdict: "A, B and C are out" does not accept A
        (["A, B and C are out."], None),
        (["A, B and C are out. D."], ("D", "ox")),
        (["Wrong. C."], ("C", "zeta")),
        (["A, not D."], ("A", "xylose")),
    ],
)
def test_letter_only_verdicts_in_their_usual_forms(said: list[str], accepted: tuple[str, str] | None) -> None:
    facts = Evidence(question="q? A) xylose B) yam C) zeta D) ox", source_said=said)
    assert accepted_option(facts) == accepted


def test_an_opening_y_not_x_names_the_answer_even_when_the_rest_explains_both() -> None:
    question = (
        "A hard swelling of the jaw with sinuses discharging yellow granules is: "
        "A) Actinomycosis B) Ludwig's angina C) Tuberculosis D) Mucormycosis"
    )
    picked = "That is B) Ludwig's angina, a board-like swelling after a molar infection, unlike actinomycosis."
    said = (
        "Actinomycosis, not Ludwig's angina. Ludwig's angina is a fast cellulitis of the floor of the mouth; "
        "actinomycosis grows slowly, and tuberculosis or mucormycosis would look different again."
    )
    facts = Evidence(question=question, source_said=[said], model_rejected=[picked])
    assert accepted_option(facts) == ("A", "Actinomycosis")
    # without the opening verdict the same explanation names too many options to pick one
    explained = said.split(". ", 1)[1]
    assert accepted_option(facts.model_copy(update={"source_said": [explained]})) is None
    # an opening that does not negate the chatbot's pick is not read as a verdict
    opening = "Actinomycosis grows slowly. " + explained
    assert accepted_option(facts.model_copy(update={"source_said": [opening]})) is None


def test_the_rejected_answer_in_other_words_is_refused_unless_the_expert_said_as_much() -> None:
    question = (
        "Green Vermillion index measures: A) Periodontal disease B) Oral hygiene C) Bone level D) Gingival health"
    )
    chose = "A) Periodontal disease; the index grades the state of the periodontium."
    said = (
        "Oral hygiene, so B. Periodontal disease isn't what it measures: that is Russell's periodontal index. "
        "You're right that the Greene and Vermillion index is scored on six tooth surfaces."
    )
    facts = _closing(said, "B) Oral hygiene.", question, chose)
    reworded = check("The Greene and Vermillion index grades the periodontium.", MemoryType.RESIDUAL, facts)
    assert (reworded.ok, reworded.reason) == (False, GateReason.REJECTED_ANSWER)
    assert reworded.detail == "says the rejected A) Periodontal disease in other words"
    # a memory leaning to the accepted option, and what the expert agreed with, pass
    assert check("The Greene and Vermillion index measures oral hygiene.", MemoryType.RESIDUAL, facts).ok
    assert check("The Greene and Vermillion index is scored on six tooth surfaces.", MemoryType.RESIDUAL, facts).ok


def test_what_is_said_of_the_rejected_answer_must_be_said_near_it() -> None:
    # fresh15's truth-566: the apposition "AS+SP, the ACT used in the rest of India" is not about option B
    question = (
        "Falciparum malaria in a patient from the north-eastern states: the best drug? A) Artemether plus "
        "lumefantrine B) Sulfadoxine plus pyrimethamine C) Chloroquine D) Mefloquine"
    )
    said = (
        "In the north-east falciparum resists sulfadoxine-pyrimethamine, so AS+SP, the ACT used in the rest of "
        "India, was replaced there by artemether-lumefantrine."
    )
    facts = _closing(said, "A) Artemether plus lumefantrine.", question, "B) Sulfadoxine plus pyrimethamine.")
    moved = check("The ACT used in the rest of India is sulfadoxine-pyrimethamine.", R, facts)
    assert (moved.ok, moved.reason) == (False, GateReason.REJECTED_ANSWER)
    assert check("In the north-east falciparum resists sulfadoxine-pyrimethamine.", R, facts).ok


def test_the_chatbot_s_rejected_sentence_copied_whole_is_refused() -> None:
    question = "Which muscle divides the gland into an outer and an inner lobe? A) Masseter B) Buccinator C) Platysma"
    chose = "A) Masseter. The gland sits between its two heads, which cut it into an outer and an inner lobe."
    said = (
        "No. The two heads of the masseter mark the space the gland lies in; they don't cut through it. "
        "The buccinator does: the outer lobe lies on it and the inner lobe under it."
    )
    facts = _closing(said, "B) Buccinator.", question, chose)
    copy = check("The gland lies between its two heads, which cut it into an outer and an inner lobe.", R, facts)
    assert (copy.ok, copy.reason) == (False, GateReason.MODEL_WORDS)
    assert check(
        "The buccinator divides the gland: the outer lobe lies on it and the inner lobe under it.", R, facts
    ).ok


def test_in_a_negative_question_the_expert_may_speak_for_the_answer_by_denying_it() -> None:
    question = (
        "Not a feature of infective endocarditis: A) Roth spots B) Osler's nodes C) Aschoff nodules D) Janeway lesions"
    )
    chose = "D) Janeway lesions. They are painless, so they hardly count."
    said = (
        "Janeway lesions are very much a feature. "
        "What doesn't belong is the Aschoff nodule. That is a lesion of rheumatic carditis."
    )
    facts = _closing(said, "Got it: C) Aschoff nodules.", question, chose)
    assert accepted_option(facts) == ("C", "Aschoff nodules")
    assert check("The Aschoff nodule is a lesion of rheumatic carditis.", R, facts).ok
    # in a question that is not negative, denying an option never makes it the answer
    plain = facts.model_copy(update={"question": question.replace("Not a feature", "A feature")})
    assert accepted_option(plain) is None
    # "least likely" asks for the option that does not fit (session 12, from fresh17's truth-646)
    least = facts.model_copy(update={"question": question.replace("Not a feature", "Least likely feature")})
    assert accepted_option(least) == ("C", "Aschoff nodules")


def test_options_whose_words_are_the_same_are_told_apart_by_their_text_and_letters() -> None:
    knock = {"A": "Knock in", "B": "Knock out", "C": "Knock down", "D": "Knock up"}
    assert named_options("RNA interference gives a knock down of the gene.", knock) == {"C"}
    assert named_options("The gene is knocked about.", knock) == set()
    question = "Neonatal encephalitis without skin lesions: A) HSV I B) HSV II C) Meningococci D) Streptococci"
    said = "In newborns herpes is mostly type 2, from the birth canal; group B streptococcus gives meningitis instead."
    chose = "A) HSV I, the commonest cause of viral encephalitis."
    facts = _closing(said, "Clear. B) HSV II.", question, chose)
    # the closing letter names B although its words are A's too; the expert's words do not speak for B
    # (type 2 is no option word), so no option is taken, and never the streptococci the expert mentioned
    assert accepted_option(facts) is None


def test_options_with_no_word_are_named_by_their_letter_only() -> None:
    leads = {"A": "II", "B": "I", "C": "aVF", "D": "aVL"}
    assert named_options("I think the tallest R is in aVF.", leads) == {"C"}
    assert named_options("Lead B) I lies at 0 degrees.", leads) == {"B"}
    # a two-letter option ("II", "Sv") is named by its text as well (session 11, from fresh14's truth-535)
    assert named_options("Lead II looks at the inferior wall.", leads) == {"A"}
    units = {"A": "Rad", "B": "Sv", "C": "Gray", "D": "Kerma"}
    assert named_options("The accepted answer is Sv.", units) == {"B"}
    assert named_options("Sievert and gray differ by a weighting factor.", units) == {"C"}


def test_the_expert_explaining_why_the_chatbot_s_pick_is_wrong_does_not_make_it_the_answer() -> None:
    # session 11, from fresh14's truth-562: the expert's turn opens with the chatbot's second pick, to explain it
    question = "A survey of a chronic disease at one time measures: A) Prevalence rate B) Incidence rate C) Morbidity"
    said = [
        "Incidence is new cases only; counting all of them at one time is prevalence.",
        "Morbidity is the general term for illness; you measure it with incidence and prevalence, so it isn't a rate.",
    ]
    chose = ["B) Incidence rate.", "Then why not C) Morbidity?"]
    facts = Evidence(
        question=question,
        source_said=said,
        model_said=[*chose, "Understood. A) Prevalence rate."],
        model_rejected=chose,
    )
    assert accepted_option(facts) == ("A", "Prevalence rate")
    refused = check(f"For the question '{question[:47]}', the answer is Morbidity.", R, facts)
    assert (refused.ok, refused.reason) == (False, GateReason.REJECTED_ANSWER)


def test_the_question_a_memory_quotes_names_no_option() -> None:
    # session 12, from fresh17's truth-637: "Calcium 10" in the quoted case is not the rejected "C) 10"
    question = "Na 137, chloride 110, bicarbonate 15, calcium 10. Calculate the anion gap? A) 12 B) 16 C) 10 D) 8"
    facts = _closing("Without potassium: 137 minus 125 is 12.", "A) 12.", question, "C) 10. 137 - 110 - 15 is 10.")
    quoted = "Na 137, chloride 110, bicarbonate 15, calcium 10. Calculate the anion gap"
    assert check(f"For the question '{quoted}', the answer is 12.", R, facts).ok
    wrong = check(f"For the question '{quoted}', the answer is 10.", R, facts)
    assert (wrong.ok, wrong.reason) == (False, GateReason.REJECTED_ANSWER)
    # a quote that is not the question's words is read as it is
    said = check("The expert calls it 'the gap of 10', the answer.", R, facts)
    assert (said.ok, said.reason) == (False, GateReason.REJECTED_ANSWER)


def test_an_option_the_expert_set_aside_for_another_use_is_not_the_answer() -> None:
    # session 15, from fresh25's truth-914: "10% dextrose is for hypoglycaemia, not volume" named option A in
    # passing, the key in other words ("a 20 mL/kg bolus of 0.9% saline"), and A became the accepted answer
    question = (
        "A child in septic shock. First fluid? A) 10 mL/kg of 10% dextrose B) 10 mL/kg of starch "
        "C) 20 mL/kg of half-normal saline D) 20 mL/kg of 0.9% normal saline"
    )
    said = [
        "Starches harm the kidney. Give a 20 mL/kg bolus of isotonic crystalloid, 0.9% saline, over 10 minutes, "
        "and 10% dextrose is for hypoglycaemia, not volume."
    ]
    chose = ["B) 10 mL/kg of starch, since a colloid stays in the vessels."]
    facts = Evidence(question=question, source_said=said, model_said=[*chose, "Thanks."], model_rejected=chose)
    assert accepted_option(facts) is None
    # with no accepted option, an option given as the answer is refused, whoever wrote the memory
    answer = "For the question 'A child in septic shock. First fluid', the answer is 10 mL/kg of 10% dextrose."
    refused = check(answer, R, facts)
    assert (refused.ok, refused.reason) == (False, GateReason.OTHER_OPTION) and "as the answer" in refused.detail
    # the option spoken for with a denial of another option is still the answer
    plain = Evidence(
        question=question,
        source_said=["0.9% saline, 20 mL/kg of 0.9% normal saline, not starch."],
        model_said=[*chose, "Thanks."],
        model_rejected=chose,
    )
    assert accepted_option(plain) == ("D", "20 mL/kg of 0.9% normal saline")
