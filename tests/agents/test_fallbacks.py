"""The expert's-own-words fallbacks of the truth gate (agents.fallbacks), without a model."""

from __future__ import annotations

from agents.building import BuildState, Candidate, Turn
from agents.fallbacks import (
    answer_fallback,
    clip,
    expert_words,
    residual_fallbacks,
    spelt_out_answer,
    with_question,
)
from agents.truth import evidence
from memory.models import Category, MemoryType, Source

QUESTION = "Concentration of tropicamide: a) 0.01 b) 0.02 c) 0.03"
WORDS = "0.5%-1% is 0.005-0.01 as a decimal, so the answer is a) 0.01."
TURNS = [
    Turn(role="user", content=QUESTION),
    Turn(role="assistant", content="None of the options fit: the strengths are 0.5% and 1%."),
    Turn(role="sme", content="No."),  # too short to stand as a memory
    Turn(role="sme", content=WORDS),
]


def test_the_accepted_option_is_spelt_out_with_the_question() -> None:
    facts = evidence(BuildState(TURNS, "sme-1", source=Source.SME))
    assert spelt_out_answer(facts) == "For the question 'Concentration of tropicamide', the answer is 0.01."
    # a stem under 8 characters cannot say what the answer is about
    short = [Turn(role="user", content="Dose? a) 1 mg b) 2 mg"), Turn(role="sme", content="It's a) 1 mg.")]
    assert spelt_out_answer(evidence(BuildState(short, "sme-1", source=Source.SME))) is None


def test_only_a_trusted_experts_statement_is_used() -> None:
    # the expert's words do not say what they are about, so the question introduces them
    sme, user = BuildState(TURNS, "sme-1", source=Source.SME), BuildState(TURNS, "u1", source=Source.USER)
    assert expert_words(sme, evidence(sme)) == f"On 'Concentration of tropicamide': {WORDS}"
    assert expert_words(user, evidence(user)) is None
    assert residual_fallbacks(BuildState(TURNS, "u1", source=Source.USER), evidence(BuildState(TURNS, "u1"))) == []


def test_residual_fallbacks_add_the_experts_words_or_the_spelt_out_answer() -> None:
    state = BuildState(TURNS, "sme-1", source=Source.SME)
    found = residual_fallbacks(state, evidence(state))
    # the expert's words, introduced by the question, carry the answer: it is not spelt out again
    assert [(c.type, c.text, c.fallback) for c in found] == [
        (MemoryType.RESIDUAL, f"On 'Concentration of tropicamide': {WORDS}", True),
    ]
    # a letter alone is too short to stand as a memory, and a letter with a few words (on "C is the one I'd
    # mark" the question would make a memory of a letter) is no better: the answer is spelt out with its question
    closing = Turn(role="assistant", content="I see: a) 0.01.")
    marked_turns = [*TURNS[:2], Turn(role="sme", content="A is the one I would mark."), closing]
    marked = BuildState(marked_turns, "sme-1", source=Source.SME)
    assert expert_words(marked, evidence(marked)) is None
    letter = BuildState([*TURNS[:2], Turn(role="sme", content="No, a)."), closing], "sme-1", source=Source.SME)
    assert [c.text for c in residual_fallbacks(letter, evidence(letter))] == [
        "For the question 'Concentration of tropicamide', the answer is 0.01."
    ]
    # a place with a word or two ("Nope, it's the 2nd one", fresh30's truth-1060) is no memory either, nor a
    # letter or place after "no"/"nope" (fresh31's truth-1081, -1095 and -1109 stored nothing at all)
    for said in (
        "Nope, it's the 2nd one",
        "no - it's the second option!",
        "no, the answer is b",
        "nope... option b",
        "nope. second option",
        "ans is b",  # fresh35's truth-1242: "ans is a" was read as no letter, and nothing spelt the answer out
        "b pls",  # fresh36's truth-1270: "C pls" was read as no letter, and nothing spelt the answer out
    ):
        placed = BuildState([*TURNS[:2], Turn(role="sme", content=said), closing], "sme-1", source=Source.SME)
        assert expert_words(placed, evidence(placed)) is None, said
        assert [c.text for c in residual_fallbacks(placed, evidence(placed))] == [
            "For the question 'Concentration of tropicamide', the answer is 0.02."
        ], said
    topical = "The concentration of tropicamide is 0.005-0.01, so the answer is 0.01."
    state.candidates = [Candidate(type=MemoryType.RESIDUAL, text=topical, category=Category.FACT)]
    assert residual_fallbacks(state, evidence(state)) == []  # a surviving memory already carries the answer


def test_long_words_are_cut_after_a_sentence_or_a_word_never_inside_one() -> None:
    text = "Tropicamide is a short-acting antimuscarinic. It dilates the pupil for a few hours. " * 3
    assert clip(text, 100) == "Tropicamide is a short-acting antimuscarinic. It dilates the pupil for a few hours."
    assert clip("Tropicamide dilates the pupil for a few hours only", 30) == "Tropicamide dilates the pupil..."
    assert clip("Short.", 30) == "Short."
    long_stem = "Concentration of tropicamide " + "in the eye drops used for a refraction " * 6
    spelt = _spelt(f"{long_stem}: a) 0.01 b) 0.02", "b) 0.02", "No, a).", "I see: a) 0.01.")
    assert spelt is not None and spelt.endswith("a refraction in the eye...', the answer is 0.01.")


def _spelt(question: str, wrong: str, correction: str, closing: str) -> str | None:
    """The spelt-out answer of a four-turn correction by a trusted expert."""
    said = [("user", question), ("assistant", wrong), ("sme", correction), ("assistant", closing)]
    state = BuildState([Turn(role=role, content=text) for role, text in said], "sme-1", source=Source.SME)
    return spelt_out_answer(evidence(state))


def test_answer_fallback_only_when_no_accepted_answer_survived() -> None:
    state = BuildState(TURNS, "u1", source=Source.USER)
    facts = evidence(state)
    assert [c.text for c in answer_fallback(state, facts)] == [
        "For the question 'Concentration of tropicamide', the accepted answer is 0.01."
    ]
    mistake = Candidate(
        type=MemoryType.LLM_RESPONSE, text="Avoid answering 0.02.", category=Category.CONSTRAINT, mistake=True
    )
    state.candidates = [mistake]
    assert len(answer_fallback(state, facts)) == 1  # a mistake to avoid is not the accepted answer
    answer = Candidate(type=MemoryType.LLM_RESPONSE, text="The accepted answer is 0.01.", category=Category.FACT)
    state.candidates = [mistake, answer]
    assert answer_fallback(state, facts) == []


def test_a_long_question_is_cut_from_its_case_never_from_what_it_asks() -> None:
    # session 11, from fresh16's truth-614: cut from the end, "Not present" went and the answer read reversed
    case = "A man with a bile duct stricture gets 3 mg of epidural morphine daily; one day 12 mg is given by mistake. "
    question = f"{case * 2}Not present: A) Itching B) Urinary retention C) Overstimulation of respiratory centre"
    spelt = _spelt(question, "A) Itching.", "No, C).", "C) Overstimulation of respiratory centre.")
    assert spelt is not None and "... Not present', the answer is Overstimulation of respiratory centre." in spelt
    assert spelt.startswith("For the question 'A man with a bile duct stricture")


ARTERY = "Auriculotemporal nerve encircles which artery? A) Superficial temporal B) Middle meningeal C) Maxillary"


def _artery(said: str, question: str = ARTERY) -> BuildState:
    turns = [
        Turn(role="sme", content=question),
        Turn(role="assistant", content="A) Superficial temporal: the nerve runs with it."),
        Turn(role="sme", content=said),
        Turn(role="assistant", content="B) Middle meningeal, then."),
    ]
    return BuildState(turns, "sme-1", source=Source.SME)


def test_a_short_answer_that_does_not_say_what_it_answers_is_introduced_by_the_question() -> None:
    # session 14, from fresh20's truth-746: "The loop is around the middle meningeal artery." is what the
    # expert said, but a reader of the shared store cannot tell which loop
    said = "No. The loop is around the middle meningeal artery."
    facts = evidence(_artery(said))
    assert with_question("The loop is around the middle meningeal artery.", facts) == (
        "On 'Auriculotemporal nerve encircles which artery': The loop is around the middle meningeal artery."
    )
    # a sentence with the question's own words already says what it answers
    topical = "The auriculotemporal nerve encircles the middle meningeal artery."
    assert with_question(topical, facts) == topical


def test_only_a_plain_short_sentence_naming_the_accepted_option_alone_is_introduced() -> None:
    both = "The loop is around the middle meningeal artery; the superficial temporal runs behind."
    facts = evidence(_artery(f"No. {both}"))
    unchanged = [
        both,  # two options
        "The superficial temporal runs behind.",  # the rejected option alone would read as the question's answer
        "The loop is around the middle meningeal artery, below the foramen spinosum.",  # more than one plain clause
        "The loop sits low.",  # no option at all
    ]
    assert [with_question(text, facts) for text in unchanged] == unchanged
    # a negative question's quoted "not" would set the question against the sentence
    negative = "Which artery does the auriculotemporal nerve not touch? A) Superficial temporal B) Middle meningeal"
    loop = "The loop is around the middle meningeal artery."
    assert with_question(loop, evidence(_artery(f"No. {loop}", negative))) == loop
