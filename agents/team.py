"""The memory-building team (MARK's MBS) wired as an AutoGen GraphFlow.

extract_residual -> extract_user_question -> extract_llm_response -> truth_gate -> conflict_resolver
-> veracity_checker -> (reviewer, when the policy asks) -> committer.

Each role is an AutoGen agent with its model client injected and its step (:mod:`agents.steps`,
:mod:`agents.truth`); they share one :class:`BuildState`. The extractors run one after another (one
llama.cpp model serves them all, so parallel fan-out would only queue). The graph routes on the
state's typed fields, never on a message's text. The committer is the only agent that writes to the
engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_agentchat.teams import DiGraphBuilder, GraphFlow
from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient

from agents.building import BuildState, Step
from agents.reviewers import Reviewer
from agents.steps import committer_step, extractor_step, resolver_step, reviewer_step, veracity_step
from agents.truth import truth_gate_step
from mark.errors import InputError
from memory.engine import MemoryEngine, utcnow
from memory.history import Speaker
from memory.ingest import ParsedTurn
from memory.models import MemoryType


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
    checker = RoleAgent("veracity_checker", "Fact-checks memories.", state, veracity_step(engine, client))
    reviewer_agent = RoleAgent("reviewer", "Human review of gated memories.", state, reviewer_step(reviewer))
    committer = RoleAgent("committer", "Writes memories through the engine.", state, committer_step(engine))
    builder = DiGraphBuilder()
    for agent in [*agents, gate, resolver, checker, reviewer_agent, committer]:
        builder.add_node(agent)
    builder.add_edge(agents[0], agents[1]).add_edge(agents[1], agents[2]).add_edge(agents[2], gate)
    builder.add_edge(gate, resolver)
    builder.add_edge(resolver, checker)
    builder.add_edge(checker, reviewer_agent, condition=lambda _: state.needs_review)
    builder.add_edge(
        checker,
        committer,
        condition=lambda _: not state.needs_review,
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
        raise InputError("the conversation is empty: nothing to build memories from")
    team = build_team(engine, client, state, reviewer)
    await team.run(task=f"Build memories from conversation {state.conversation_id} for user {state.user_id}.")
    if state.keep_transcript and state.outcomes:
        keep_transcript(engine, state)
    return state


def keep_transcript(engine: MemoryEngine, state: BuildState) -> None:
    """Keep the conversation a build learnt from in the user's history (its session is the conversation id).

    A reviewer then sees who said what (the review page reads it), and forgetting the user erases it
    with the rest of their history. Turns already kept (a rebuild) are not added twice.
    """
    now = utcnow()
    turns = [
        ParsedTurn(session_id=state.conversation_id, turn=i, speaker=Speaker.parse(t.role), text=t.content, at=now)
        for i, t in enumerate(state.turns)
        if t.content.strip()
    ]
    history = engine.episodes
    history.add(history.events_of(state.user_id, turns, f"build:{state.conversation_id}", now))
