"""The expert's-own-words fallbacks of the truth gate (agents.fallbacks), without a model."""

from __future__ import annotations

from agents.building import BuildState, Candidate, Turn
from agents.fallbacks import answer_fallback, expert_words, residual_fallbacks, spelt_out_answer
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
    assert expert_words(BuildState(TURNS, "sme-1", source=Source.SME)) == WORDS
    assert expert_words(BuildState(TURNS, "u1", source=Source.USER)) is None
    assert residual_fallbacks(BuildState(TURNS, "u1", source=Source.USER), evidence(BuildState(TURNS, "u1"))) == []


def test_residual_fallbacks_add_the_experts_words_and_the_spelt_out_answer() -> None:
    state = BuildState(TURNS, "sme-1", source=Source.SME)
    found = residual_fallbacks(state, evidence(state))
    # the expert's words name the option but not the question's topic, so the answer is spelt out too
    assert [(c.type, c.text, c.fallback) for c in found] == [
        (MemoryType.RESIDUAL, WORDS, True),
        (MemoryType.RESIDUAL, "For the question 'Concentration of tropicamide', the answer is 0.01.", True),
    ]
    topical = "The concentration of tropicamide is 0.005-0.01, so the answer is 0.01."
    state.candidates = [Candidate(type=MemoryType.RESIDUAL, text=topical, category=Category.FACT)]
    assert residual_fallbacks(state, evidence(state)) == []  # a surviving memory already carries the answer


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
