"""The truth gate on what fresh35 and the holdout2 store showed (session 23): a mistake to avoid gives no
reason nobody gave; an answer sentence names the question it answers, not the prompt example's."""

from __future__ import annotations

from memory.gate_terms import Evidence, GateVerdict
from memory.grounding import check
from memory.models import MemoryType
from memory.option_gate import known_answers
from tests.memory.corrections import rejected_then_accepted

DOSE = "The usual adult dose of oral amoxicillin for otitis media is: A) 25 mg B) 250 mg C) 500 mg D) 5000 mg"
CHATBOT = "B) 250 mg. That is the dose for a mild infection."
THANKS = "Thanks, C) 500 mg."
AVOID = "On the usual adult dose of oral amoxicillin for otitis media, avoid this mistake: "


def _dose_facts(expert: list[str]) -> Evidence:
    facts = rejected_then_accepted(DOSE, CHATBOT, expert, THANKS)
    answers = known_answers(facts)
    assert answers.accepted == {"C"} and answers.rejected == {"B"}
    return facts


def _mistake(avoid: str, facts: Evidence) -> GateVerdict:
    return check(AVOID + avoid, MemoryType.LLM_RESPONSE, facts, mistake=True)


def _answers(topic: str, facts: Evidence) -> GateVerdict:
    premise = "The usual adult dose of oral amoxicillin for otitis media is 500 mg, so for "
    return check(f"{premise}{topic} the right option is 500 mg.", MemoryType.RESIDUAL, facts)


def test_a_mistake_gives_no_reason_the_expert_did_not_give() -> None:
    # fresh35's truth-1235: "answering 5mm, which is too deep for MTA" after an expert who said "first option";
    # holdout2's mmcqa-15cebe53: "answering 20 mg, which is a moderate level, ...", the chatbot's words
    facts = _dose_facts(["No, C) 500 mg."])
    unsaid = _mistake("answering 250 mg, which is too low for adults.", facts)
    assert not unsaid.ok and unsaid.reason == "unsaid"
    # the chatbot's own reason for its pick is no reason it was wrong
    chatbots = _mistake("answering 250 mg, which is for a mild infection.", facts)
    assert not chatbots.ok and chatbots.reason == "unsaid"


def test_a_mistake_may_give_the_reason_the_expert_gave() -> None:
    facts = _dose_facts(["No. 250 mg is too low for adults; give C) 500 mg three times a day."])
    said = _mistake("answering 250 mg, which is too low for adults.", facts)
    assert said.ok


def test_an_answer_sentence_names_the_question_it_answers() -> None:
    # fresh35's truth-1246: "..., so for the drug of choice in gingiva the right option is ..." kept the prompt
    # example's question for a question about what local irritants give rise to
    facts = _dose_facts(["No. For otitis media in adults the usual oral amoxicillin dose is 500 mg, C."])
    facts = facts.model_copy(update={"example": "Nitrofurantoin is a drug of choice for cystitis in pregnancy."})
    asked = _answers("the adult amoxicillin dose", facts)
    assert asked.ok, asked
    other = _answers("the drug of choice in otitis", facts)
    assert not other.ok and other.reason == "off_topic"
    # as many words of another question that are not the example's: said in other words, kept
    reworded = _answers("the standard otitis media regimen", facts)
    assert reworded.ok, reworded
    elsewhere = _answers("the pneumonia regimen in otitis", facts)
    assert not elsewhere.ok and elsewhere.reason == "off_topic"
