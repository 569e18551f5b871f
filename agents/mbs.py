"""The memory-building team (MARK's MBS) as an AutoGen GraphFlow.

extract_residual -> extract_user_question -> extract_llm_response -> truth_gate -> conflict_resolver
-> veracity_checker -> (reviewer, when the policy asks) -> committer.

Each role is an AutoGen agent with its model client injected; they share one :class:`BuildState`.
The extractors run one after another (one llama.cpp model serves them all, so parallel fan-out
would only queue). The committer is the only agent that writes to the engine.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_agentchat.teams import DiGraphBuilder, GraphFlow
from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient

from agents.building import BuildState, Candidate, Outcome
from agents.checks import FactChecker, LLMJudge, quote
from agents.reviewers import Reviewer, ReviewItem, safe_review
from agents.schemas import Extraction, ResidualExtraction, ResponseExtraction
from agents.structured import UsageLog, call_structured, system, user
from agents.truth import truth_gate_step
from memory import review as review_queue
from memory.conflicts import Verdict
from memory.engine import AddResult, MemoryEngine
from memory.models import Category, MemoryType, Provenance, Status
from prompts import render

_REPLIES: dict[MemoryType, type[Extraction | ResidualExtraction | ResponseExtraction]] = {
    MemoryType.RESIDUAL: ResidualExtraction,
    MemoryType.USER_QUESTION: Extraction,
    MemoryType.LLM_RESPONSE: ResponseExtraction,
}
_PROMPTS = {
    MemoryType.RESIDUAL: "extract_residual",
    MemoryType.USER_QUESTION: "extract_user_question",
    MemoryType.LLM_RESPONSE: "extract_llm_response",
}
Step = Callable[[BuildState], Awaitable[str]]


class RoleAgent(BaseChatAgent):
    """An AutoGen agent whose turn runs one step of the build and reports it in one line."""

    def __init__(self, name: str, description: str, state: BuildState, step: Step) -> None:
        """Bind the agent to the shared state and its step."""
        super().__init__(name, description)
        self._state, self._step = state, step

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        """Plain text reports."""
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        """Run the step; a failure is reported in the message and the state, never raised."""
        try:
            report = await self._step(self._state)
        except Exception as exc:  # one failing role must not lose the other roles' work
            report = f"failed: {exc.__class__.__name__}: {exc}"
            self._state.errors.append(f"{self.name}: {report}")
        self._state.trail.append(f"{self.name}: {report}")
        return Response(chat_message=TextMessage(content=report, source=self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        """Nothing to reset: the state belongs to the build."""


def extractor_step(client: ChatCompletionClient, memory_type: MemoryType) -> Step:
    """The step of one refined-memory extractor."""

    async def step(state: BuildState) -> str:
        name = f"extract_{memory_type.value}"
        prompt = render(_PROMPTS[memory_type], domain=state.domain, conversation=quote(state.transcript))
        outcome = await call_structured(
            client, name, [system(prompt), user("Extract the memories as JSON.")], _REPLIES[memory_type], state.usage
        )
        if outcome.value is None:
            # what the expert said is still used: the truth gate adds the expert's own words and the
            # accepted answer when no extracted memory of that type survives
            state.errors.append(f"{name}: rejected after {outcome.attempts} attempt(s): {outcome.error}")
            return f"0 {memory_type.value} memories (rejected: {outcome.error})"
        seen = {c.text.lower() for c in state.candidates}
        fresh = [m for m in outcome.value.to_memories() if m.text.lower() not in seen]
        for memory in fresh:
            category = Category(memory.category.value)
            state.candidates.append(
                Candidate(type=memory_type, text=memory.text, category=category, mistake=not memory.grounded)
            )
        return f"{len(fresh)} {memory_type.value} memories"

    return step


def resolver_step(engine: MemoryEngine, client: ChatCompletionClient) -> Step:
    """The conflict resolver: judge only the pairs the similarity check flags."""

    async def step(state: BuildState) -> str:
        judge = LLMJudge(client, state.usage, config=engine.config.conflicts)
        judged = 0
        for candidate in state.candidates:
            for record, similarity in engine.conflict_candidates(candidate.text, candidate.type, state.user_id):
                verdict = await judge.judge(candidate.text, record.text, similarity)
                candidate.verdicts[record.id] = verdict
                if verdict is not Verdict.INDEPENDENT:
                    candidate.conflict_texts.append(f"{verdict.value}: {record.text}")
                judged += 1
        state.errors.extend(f"conflict_resolver: {f}" for f in judge.failures)
        return f"judged {judged} flagged pair(s)"

    return step


FACT_REASONS = {
    1.0: "the checker found it supported by the evidence",
    0.5: "the checker found the evidence does not settle it",
    0.0: "the checker found it contradicted by the evidence",
}


def veracity_step(client: ChatCompletionClient) -> Step:
    """The veracity checker: F in {0, 0.5, 1} against trusted evidence, then the review policy."""

    async def step(state: BuildState) -> str:
        checker = FactChecker(client, state.domain, state.usage)
        replies = await checker.check_all([c.text for c in state.candidates], state.expert_evidence)
        for candidate, reply in zip(state.candidates, replies, strict=True):
            if reply is not None:
                candidate.fact_check = reply.score
                candidate.fact_reason = FACT_REASONS[reply.score]
            candidate.review_reason = state.review_reason(candidate)
        state.errors.extend(f"veracity_checker: {f}" for f in checker.failures)
        queued = sum(bool(c.review_reason) for c in state.candidates)
        return f"review: {queued} memory(ies) need a reviewer" if queued else "no review needed"

    return step


def reviewer_step(reviewer: Reviewer | None) -> Step:
    """The human reviewer: decide now when one is plugged in, else leave the memories queued."""

    async def step(state: BuildState) -> str:
        decided = 0
        for candidate in (c for c in state.candidates if c.review_reason):
            if reviewer is None:
                continue
            item = ReviewItem(
                memory_id=None,
                text=candidate.text,
                memory_type=candidate.type.value,
                user_id=state.user_id,
                source=state.source.value,
                veracity=None,
                fact_check=candidate.fact_check,
                fact_reason=candidate.fact_reason,
                conflicts=candidate.conflict_texts,
                reason=candidate.review_reason,
            )
            decision = await safe_review(reviewer, item)
            if decision is None:
                state.errors.append(f"reviewer: no usable decision for {candidate.text[:60]!r}; left queued")
                continue
            candidate.decision = decision.model_dump(mode="json")
            decided += 1
        return f"reviewed {decided} memory(ies)"

    return step


def committer_step(engine: MemoryEngine) -> Step:
    """Commit every candidate that passed its gates through the engine (the only writer)."""

    async def step(state: BuildState) -> str:
        for candidate in state.candidates:
            state.outcomes.append(_commit(engine, state, candidate))
        counts = state.counts()
        return "committed: " + ", ".join(f"{t} {dict(sorted(c.items()))}" for t, c in sorted(counts.items()))

    return step


def _commit(engine: MemoryEngine, state: BuildState, candidate: Candidate) -> Outcome:
    decision = candidate.decision or {}
    action = decision.get("action")
    if action == "reject":
        return Outcome(action="rejected", type=candidate.type, text=candidate.text, reason=decision.get("reason", ""))
    text = decision.get("text") or candidate.text if action == "edit" else candidate.text
    result = engine.add(
        text,
        candidate.type,
        state.user_id,
        agent=state.agent,
        category=candidate.category,
        source=state.source,
        provenance=Provenance(conversation_id=state.conversation_id, origin="mbs", situation=state.situation),
        review=bool(candidate.review_reason) and action is None,
        fact_check=candidate.fact_check,
        verdicts=candidate.verdicts,
        actor="committer",
        note={"gate": candidate.gate, "said_by": state.user_id, "fallback": str(candidate.fallback).lower()},
    )
    record = result.record
    if action in {"approve", "edit"} and record.status is Status.PENDING_REVIEW:
        record = review_queue.approve(engine, record.id, decision.get("reviewer", "reviewer"))
    name = {"created": "committed"}.get(result.action, result.action)
    if record.status is Status.PENDING_REVIEW:
        name = "queued"
    return Outcome(
        action=name,
        type=candidate.type,
        text=record.text,
        memory_id=record.id,
        status=record.status.value,
        superseded=result.superseded,
        reason=candidate.review_reason,
        gate=candidate.gate,
    )


def build_team(
    engine: MemoryEngine, client: ChatCompletionClient, state: BuildState, reviewer: Reviewer | None = None
) -> GraphFlow:
    """The MBS GraphFlow for one build."""
    agents = [
        RoleAgent(f"extract_{t.value}", f"Extracts {t.value} memories.", state, extractor_step(client, t))
        for t in MemoryType
    ]
    gate = RoleAgent("truth_gate", "Refuses memories the source did not say.", state, truth_gate_step(engine))
    resolver = RoleAgent("conflict_resolver", "Judges flagged conflicts.", state, resolver_step(engine, client))
    checker = RoleAgent("veracity_checker", "Fact-checks memories.", state, veracity_step(client))
    reviewer_agent = RoleAgent("reviewer", "Human review of gated memories.", state, reviewer_step(reviewer))
    committer = RoleAgent("committer", "Writes memories through the engine.", state, committer_step(engine))
    builder = DiGraphBuilder()
    for agent in [*agents, gate, resolver, checker, reviewer_agent, committer]:
        builder.add_node(agent)
    builder.add_edge(agents[0], agents[1]).add_edge(agents[1], agents[2]).add_edge(agents[2], gate)
    builder.add_edge(gate, resolver)
    builder.add_edge(resolver, checker)
    builder.add_edge(checker, reviewer_agent, condition=lambda m: m.to_model_text().startswith("review:"))
    builder.add_edge(
        checker,
        committer,
        condition=lambda m: not m.to_model_text().startswith("review:"),
        activation_group="commit",
        activation_condition="any",
    )
    builder.add_edge(reviewer_agent, committer, activation_group="commit", activation_condition="any")
    builder.set_entry_point(agents[0])
    return GraphFlow(builder.get_participants(), graph=builder.build())


async def build_memories(
    engine: MemoryEngine, client: ChatCompletionClient, state: BuildState, reviewer: Reviewer | None = None
) -> BuildState:
    """Run the MBS team on a finished conversation and return the filled state."""
    if not any(t.content.strip() for t in state.turns):
        raise ValueError("the conversation is empty: nothing to build memories from")
    team = build_team(engine, client, state, reviewer)
    await team.run(task=f"Build memories from conversation {state.conversation_id} for user {state.user_id}.")
    return state


async def remember_with_judge(
    engine: MemoryEngine, client: ChatCompletionClient, text: str, user_id: str, usage: UsageLog | None = None
) -> AddResult:
    """An explicit "remember X", with flagged conflicts judged by the LLM resolver.

    A newer preference that contradicts an older one supersedes it.
    """
    judge = LLMJudge(client, usage)
    verdicts = {
        record.id: await judge.judge(text, record.text, similarity)
        for record, similarity in engine.conflict_candidates(text, MemoryType.USER_QUESTION, user_id)
    }
    return engine.remember(text, user_id, verdicts=verdicts, actor=f"user:{user_id}")
