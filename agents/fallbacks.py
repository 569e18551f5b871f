"""Fallback memories from what the expert said: multiple-choice heuristics of the truth gate.

When every extracted residual memory was refused, the expert's own statement is stored instead; when
no memory names both the question's topic and the accepted option (a letter-only correction such as
"it's B", or "the correct answer is X"), the accepted option is spelt out with the question. Both
kinds go through the same gate as the extracted memories (see :mod:`agents.truth`).
"""

from __future__ import annotations

from agents.building import BuildState, Candidate
from memory import grounding
from memory.grounding import Evidence, GateReason
from memory.letters import without_verdicts
from memory.models import Category, MemoryType, Source
from memory.option_gate import known_answers
from memory.options import about_topic, negative_question
from memory.wording import sentences


def spelt_out_answer(facts: Evidence) -> str | None:
    """The accepted option as a statement ("For the question '...', the answer is <option text>.")."""
    accepted = grounding.accepted_option(facts)
    if accepted is None:
        return None
    topic = grounding.question_stem(facts.question).rstrip(" :?.")
    if len(topic) < 8:
        return None
    return f"For the question '{_keep_the_ask(topic, TOPIC_CHARS)}', the answer is {accepted[1]}."


TOPIC_CHARS, WORDS_CHARS = 160, 400


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters after a sentence, else after a word (marked "..."), never inside one."""
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in sentences(text):
        if len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    if kept:
        return kept
    return text[: limit + 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "..."


def _keep_the_ask(topic: str, limit: int) -> str:
    """A long question cut to ``limit`` characters from its case, never from its last sentence (what it asks).

    "The case of ... 12 mg of epidural morphine given. Not present:" cut from the end would lose "Not
    present" and turn the answer into its opposite.
    """
    if len(topic) <= limit:
        return topic
    *case, ask = sentences(topic)
    room = limit - len(ask) - len(" ... ")
    if not case or room < 20:
        return clip(ask, limit)
    head = clip(" ".join(case), room)
    return f"{head} {ask}" if head.endswith("...") else f"{head} ... {ask}"


def expert_words(state: BuildState, facts: Evidence) -> str | None:
    """The trusted expert's longest statement that names the answer, else the longest one (>= 20 chars).

    Whole sentences only, up to WORDS_CHARS; one that does not say what it is about (two words of the
    question's topic) is introduced by the question: "On 'The common site for ...': The lesion is ...",
    unless it says nothing but an option ("C is the one I'd mark", "Nope, it's the 2nd one"): the question
    would make a memory of a letter or a place.
    """
    if state.source is not Source.SME:
        return None
    turns = [" ".join(t.content.split()) for t in state.turns if t.role in {"user", "sme"}][1:]
    turns = [t for t in turns if len(t) >= 20]
    if not turns:
        return None
    options = grounding.parse_options(state.turns[0].content) if state.turns else {}
    naming = [t for t in turns if grounding.named_options(t, options, positive_only=True)]
    words = clip(max(naming or turns, key=len), WORDS_CHARS)
    topic = grounding.question_stem(state.turns[0].content).rstrip(" :?.") if state.turns else ""
    if len(topic) < 8 or about_topic(words, topic):
        return words
    bare = without_verdicts(grounding.unletter(words, options))  # "Nope, it's the 2nd one" (fresh30's truth-1060)
    if grounding.check(bare, MemoryType.RESIDUAL, facts).reason is GateReason.NO_TOPIC:
        return None  # "C is the one I'd mark" says nothing the question could introduce
    return f"On '{_keep_the_ask(topic, TOPIC_CHARS)}': {words}"


def with_question(text: str, facts: Evidence) -> str:
    """A short expert sentence that gives the answer but not what it answers, introduced by the question.

    "The raised lipoprotein is VLDL." is true and the expert said it, but a reader of the shared store
    cannot tell which question it settles: it becomes "On 'A person on a fat free ... diet ... Which
    lipoprotein is likely to be elevated': The raised lipoprotein is VLDL.". Only a single plain sentence of
    at most ``SHORT_WORDS`` words that names the accepted option and no other, with under two words of the
    question's topic; never for a negative question (the quoted "not" would set the question against the
    sentence). Longer sentences that weigh several options stay as said: beside the question, their word
    for a rejected option would read as an answer to it.
    """
    topic = grounding.question_stem(facts.question).rstrip(" :?.")
    options = grounding.parse_options(facts.question)
    accepted = known_answers(facts).accepted
    plain = len(text.split()) <= SHORT_WORDS and not any(mark in text.rstrip(".!") for mark in ".;:,!?")
    if len(topic) < 8 or not plain or negative_question(facts.question) or about_topic(text, topic):
        return text
    named = grounding.named_options(text, options)
    if not named or named != grounding.named_options(text, options, positive_only=True) or not named <= accepted:
        return text
    return f"On '{_keep_the_ask(topic, TOPIC_CHARS)}': {text}"


SHORT_WORDS = 14


def residual_fallbacks(state: BuildState, facts: Evidence) -> list[Candidate]:
    """Residual memory from the expert's own words, so that another user asking again finds the answer.

    When every extracted residual memory was refused, the expert's own statement is the fallback.
    And when no residual memory names both the question's topic and the accepted option (a letter-only
    correction, or "the correct answer is X"), the accepted option is spelt out with the question.
    """
    if state.source is not Source.SME or not facts.has_source_statement:
        return []
    residual = [c.text for c in state.candidates if c.type is MemoryType.RESIDUAL]
    words = expert_words(state, facts) if not residual else None
    texts = [words] if words else []
    if not any(_carries_answer(text, facts) for text in [*residual, *texts]):
        spelt = spelt_out_answer(facts)
        texts += [spelt] if spelt else []
    return [Candidate(type=MemoryType.RESIDUAL, text=t, category=Category.FACT, fallback=True) for t in texts]


def answer_fallback(state: BuildState, facts: Evidence) -> list[Candidate]:
    """The accepted option spelt out as the LLM-response memory when no extracted one survived the gate."""
    if any(c.type is MemoryType.LLM_RESPONSE and not c.mistake for c in state.candidates):
        return []
    spelt = spelt_out_answer(facts)
    if spelt is None:
        return []
    text = spelt.replace(", the answer is ", ", the accepted answer is ")
    return [Candidate(type=MemoryType.LLM_RESPONSE, text=text, category=Category.FACT, fallback=True)]


def _carries_answer(text: str, facts: Evidence) -> bool:
    """Whether a memory names the accepted option and at least two words of the question's topic."""
    return _names_answer(text, facts) and about_topic(text, grounding.question_stem(facts.question))


def _names_answer(text: str, facts: Evidence) -> bool:
    accepted = grounding.accepted_option(facts)
    options = grounding.parse_options(facts.question)
    return accepted is not None and accepted[0] in grounding.named_options(text, options, positive_only=True)
