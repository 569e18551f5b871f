"""The truth-gate step of the memory-building team: nothing false and nothing unsaid reaches the store.

Runs after the three extractors and before the conflict resolver (so no judge call is spent on a
candidate that will not be stored). Each candidate is checked by :func:`memory.grounding.check` against
the conversation split by the turns' roles; a refused candidate is audited with its reason and listed in
the build result. Option letters are replaced by the option's text, since a later paraphrase of the
question may letter its options differently. When every residual candidate is refused, the expert's
own words (or, for a letter-only correction, the accepted option spelt out) are the fallback
(:mod:`agents.fallbacks`), and they pass the same gate.

The gate then asks the knowledge base about every candidate it kept (:func:`agents.steps.knowledge_evidence`):
the passages found are the veracity checker's evidence, and a candidate a passage contradicts is not
refused (the expert may be right and the document outdated) but goes to a reviewer with both texts.
"""

from __future__ import annotations

import logging

from agents.building import BuildState, Candidate, Rejection, Step
from agents.fallbacks import answer_fallback, residual_fallbacks, with_question
from agents.steps import knowledge_evidence
from memory import grounding, user_reports
from memory.engine import MemoryEngine
from memory.grounding import Evidence
from memory.knowledge_check import Stance
from memory.models import Category, MemoryType, Source
from memory.wording import mend_cut
from prompts import render

log = logging.getLogger(__name__)
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


def judge(source: Source, facts: Evidence, candidate: Candidate) -> grounding.GateVerdict:
    """The gate's verdict on ``candidate`` (pure): its letters spelt out, a cut-off end marked, then checked.

    ``candidate.text`` is rewritten in place (spelt-out letters, a marked cut), as it would be stored.
    """
    options = grounding.parse_options(facts.question)
    candidate.text = grounding.unletter(candidate.text, options)  # a letter means nothing in another question
    candidate.text = mend_cut(candidate.text)  # "... to the baby and." was cut off: say so
    verdict = grounding.check(candidate.text, candidate.type, facts, mistake=candidate.mistake)
    expert_fact = (
        source is Source.SME
        and candidate.type is MemoryType.USER_QUESTION
        # the model often files the expert's domain statement as a preference (fresh22's truth-814)
        and (candidate.category is Category.FACT or not user_reports.about_the_user(candidate.text))
        and not user_reports.reports_asking(candidate.text)
        and not user_reports.names_a_term(candidate.text)
    )
    if verdict.ok and expert_fact:
        return user_reports.expert_fact_as_user_memory()
    return verdict


def _gate(engine: MemoryEngine, state: BuildState, facts: Evidence, candidate: Candidate) -> bool:
    verdict = judge(state.source, facts, candidate)
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


def _introduce(candidate: Candidate, facts: Evidence) -> None:
    """Give a short residual answer the question it answers (:func:`agents.fallbacks.with_question`).

    The introduced text is checked again and kept only if the gate passes it too.
    """
    if candidate.type is not MemoryType.RESIDUAL:
        return
    introduced = with_question(candidate.text, facts)
    if introduced != candidate.text and grounding.check(introduced, candidate.type, facts).ok:
        log.info("residual memory %r introduced by its question", candidate.text)
        candidate.text = introduced


def truth_gate_step(engine: MemoryEngine) -> Step:
    """The gate as a team step: refuse, audit and report what the source did not say."""

    async def step(state: BuildState) -> str:
        facts = evidence(state)
        if not facts.has_source_statement:
            state.notes.append("no expert statement after the question: nothing shared can be stored")
        state.candidates = [c for c in state.candidates if _gate(engine, state, facts, c)]
        for candidate in state.candidates:
            _introduce(candidate, facts)
        for fallback in [*residual_fallbacks(state, facts), *answer_fallback(state, facts)]:
            if _gate(engine, state, facts, fallback):
                state.candidates.append(fallback)
                state.notes.append(f"{fallback.type.value} memory from what the expert said: {fallback.text!r}")
        state.knowledge_evidence = knowledge_evidence(engine, state)
        for candidate in state.candidates:
            if candidate.knowledge is not None and candidate.knowledge.stance is not Stance.SILENT:
                candidate.gate = f"{candidate.gate}; {candidate.knowledge.describe()}"
        kept = len(state.candidates)
        disputed = sum(c.knowledge is not None and c.knowledge.stance is Stance.CONTRADICTS for c in state.candidates)
        against = f", {disputed} contradicted by the knowledge base" if disputed else ""
        return f"kept {kept} candidate(s){against}, refused {len(state.rejected)}"

    return step
