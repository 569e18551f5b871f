"""The SME correction chat: the chatbot answers, the SME proxy corrects, until the SME accepts.

The SME ends the chat with the explicit signal ``ACCEPT`` (a line of its own or a message that
starts with it); otherwise the chat stops at ``max_turns`` SME turns. The transcript feeds the MBS.
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent, UserProxyAgent
from autogen_agentchat.conditions import FunctionalTermination, MaxMessageTermination
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, TextMessage
from autogen_agentchat.teams import RoundRobinGroupChat
from pydantic import BaseModel, ConfigDict

from agents.building import Turn
from agents.human import ACCEPT
from memory.tokens import count_tokens, count_words


class CorrectionResult(BaseModel):
    """A finished correction chat and its statistics (the paper's Table 4 inputs)."""

    model_config = ConfigDict(extra="forbid")

    turns: list[Turn]
    accepted: bool
    rounds: int
    tokens: int
    words: int


def is_accept(text: str) -> bool:
    """True when an SME message carries the explicit acceptance signal."""
    stripped = text.strip()
    return stripped.upper().startswith(ACCEPT) or any(line.strip().upper() == ACCEPT for line in stripped.splitlines())


def _sme_accepted(sme_name: str):  # type: ignore[no-untyped-def]
    def check(messages: list[BaseAgentEvent | BaseChatMessage]) -> bool:
        return any(isinstance(m, TextMessage) and m.source == sme_name and is_accept(m.content) for m in messages)

    return check


async def run_correction(
    chatbot: AssistantAgent, sme: UserProxyAgent, question: str, max_turns: int = 4
) -> CorrectionResult:
    """Run the chat on ``question`` and return its transcript (the SME's ACCEPT is not part of it)."""
    termination = FunctionalTermination(_sme_accepted(sme.name)) | MaxMessageTermination(2 * max_turns + 2)
    team = RoundRobinGroupChat([chatbot, sme], termination_condition=termination)
    result = await team.run(task=question)
    turns: list[Turn] = [Turn(role="user", content=question)]
    accepted = False
    for message in result.messages:
        if not isinstance(message, TextMessage) or message.source == "user":
            continue
        if message.source == sme.name:
            if is_accept(message.content):
                accepted = True
                rest = message.content.strip()[len(ACCEPT) :].strip(" .:!-\n")
                if rest:
                    turns.append(Turn(role="sme", content=rest))
                break
            turns.append(Turn(role="sme", content=message.content))
        else:
            turns.append(Turn(role="assistant", content=message.content))
    text = "\n".join(t.content for t in turns)
    return CorrectionResult(
        turns=turns,
        accepted=accepted,
        rounds=sum(t.role == "assistant" for t in turns),
        tokens=count_tokens(text),
        words=count_words(text),
    )
