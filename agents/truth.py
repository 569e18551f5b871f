"""The truth-gate step of the memory-building team: nothing false and nothing unsaid reaches the store.

Runs after the three extractors and before the conflict resolver (so no judge call is spent on a
candidate that will not be stored). Each candidate is checked by :func:`memory.grounding.check` against
the conversation split by the turns' roles; a refused candidate is audited with its reason and listed in
the build result. Option letters are replaced by the option's text, since a later paraphrase of the
question may letter its options differently. When every residual candidate is refused, the expert's
own words (or, for a letter-only correction, the accepted option spelt out) are the fallback, and they
pass the same gate.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from agents.building import BuildState, Candidate, Rejection
from memory import grounding
from memory.engine import MemoryEngine
from memory.grounding import Evidence
from memory.models import Category, MemoryType, Source
from prompts import render

log = logging.getLogger(__name__)
Step = Callable[[BuildState], Awaitable[str]]
EXAMPLE_PROMPTS = ("extract_residual", "extract_user_question", "extract_llm_response")


def prompt_examples(domain: str) -> str:
    """The instructions and worked examples of the extractor prompts (what a copy would repeat)."""
    parts = [render(name, domain=domain, conversation="").split("<conversation>")[0] for name in EXAMPLE_PROMPTS]
    return "\n".join(parts)


def evidence(state: BuildState) -> Evidence:
    """The conversation split by speaker, from the turns' roles only."""
    said = [(t.role, " ".join(t.content.split())) for t in state.turns if t.content.strip()]
    people = [i for i, (role, _) in enumerate(said) if role in {"user", "sme"}]
    if not people:
        return Evidence(reference=state.evidence, example=prompt_examples(state.domain))
    first, last = people[0], people[-1]
    later = [i for i in people if i != first]
    return Evidence(
        question=said[first][1],
        source_said=[said[i][1] for i in later],
        user_said=[said[i][1] for i in people],
        model_said=[text for role, text in said if role == "assistant"],
        model_rejected=[text for i, (role, text) in enumerate(said) if role == "assistant" and i < last],
        reference=state.evidence,
        example=prompt_examples(state.domain),
    )


def spelt_out_answer(facts: Evidence) -> str | None:
    """The accepted option as a statement ("For the question '...', the answer is <option text>.")."""
    accepted = grounding.accepted_option(facts)
    if accepted is None:
        return None
    topic = grounding.question_stem(facts.question).rstrip(" :?.")
    if len(topic) < 8:
        return None
    return f"For the question '{topic[:160]}', the answer is {accepted[1]}."


def expert_words(state: BuildState) -> str | None:
    """The trusted expert's longest statement that names the answer, else the longest one (>= 20 chars)."""
    if state.source is not Source.SME:
        return None
    turns = [" ".join(t.content.split()) for t in state.turns if t.role in {"user", "sme"}][1:]
    turns = [t for t in turns if len(t) >= 20]
    if not turns:
        return None
    options = grounding.parse_options(state.turns[0].content) if state.turns else {}
    naming = [t for t in turns if grounding.named_options(t, options, positive_only=True)]
    return max(naming or turns, key=len)[:400]


def _gate(engine: MemoryEngine, state: BuildState, facts: Evidence, candidate: Candidate) -> bool:
    options = grounding.parse_options(facts.question)
    candidate.text = grounding.unletter(candidate.text, options)  # a letter means nothing in another question
    verdict = grounding.check(candidate.text, candidate.type, facts, mistake=candidate.mistake)
    candidate.gate = verdict.describe()
    if verdict.ok:
        return True
    memory_id = engine.reject_candidate(
        candidate.text,
        candidate.type,
        state.user_id,
        verdict.describe(),
        detail={"conversation_id": state.conversation_id, "unsupported": verdict.unsupported},
        actor="truth-gate",
    )
    state.rejected.append(
        Rejection(
            type=candidate.type, text=candidate.text, reason=verdict.reason, detail=verdict.detail, audit_id=memory_id
        )
    )
    log.info("truth gate refused %s memory %r: %s", candidate.type.value, candidate.text, verdict.describe())
    return False


def _fallbacks(state: BuildState, facts: Evidence) -> list[Candidate]:
    """Residual memory from the expert's own words, so that another user asking again finds the answer.

    When every extracted residual memory was refused, the expert's own statement is the fallback.
    And when no residual memory names both the question's topic and the accepted option (a letter-only
    correction, or "the correct answer is X"), the accepted option is spelt out with the question.
    """
    if state.source is not Source.SME or not facts.has_source_statement:
        return []
    residual = [c.text for c in state.candidates if c.type is MemoryType.RESIDUAL]
    words = expert_words(state) if not residual else None
    texts = [words] if words else []
    if not any(_carries_answer(text, facts) for text in [*residual, *texts]):
        spelt = spelt_out_answer(facts)
        texts += [spelt] if spelt else []
    return [Candidate(type=MemoryType.RESIDUAL, text=t, category=Category.FACT, fallback=True) for t in texts]


def _carries_answer(text: str, facts: Evidence) -> bool:
    """Whether a memory names the accepted option and at least two words of the question's topic."""
    topic = set(grounding.stems(grounding.question_stem(facts.question)))
    return _names_answer(text, facts) and len(topic & set(grounding.stems(text))) >= min(2, len(topic))


def _answer_fallback(state: BuildState, facts: Evidence) -> list[Candidate]:
    """The accepted option spelt out as the LLM-response memory when no extracted one survived the gate."""
    if any(c.type is MemoryType.LLM_RESPONSE and not c.mistake for c in state.candidates):
        return []
    spelt = spelt_out_answer(facts)
    if spelt is None:
        return []
    text = spelt.replace(", the answer is ", ", the accepted answer is ")
    return [Candidate(type=MemoryType.LLM_RESPONSE, text=text, category=Category.FACT, fallback=True)]


def _names_answer(text: str, facts: Evidence) -> bool:
    accepted = grounding.accepted_option(facts)
    options = grounding.parse_options(facts.question)
    return accepted is not None and accepted[0] in grounding.named_options(text, options, positive_only=True)


def truth_gate_step(engine: MemoryEngine) -> Step:
    """The gate as a team step: refuse, audit and report what the source did not say."""

    async def step(state: BuildState) -> str:
        facts = evidence(state)
        if not facts.has_source_statement:
            state.notes.append("no expert statement after the question: nothing shared can be stored")
        state.candidates = [c for c in state.candidates if _gate(engine, state, facts, c)]
        for fallback in [*_fallbacks(state, facts), *_answer_fallback(state, facts)]:
            if _gate(engine, state, facts, fallback):
                state.candidates.append(fallback)
                state.notes.append(f"{fallback.type.value} memory from what the expert said: {fallback.text!r}")
        kept = len(state.candidates)
        return f"kept {kept} candidate(s), refused {len(state.rejected)}"

    return step
