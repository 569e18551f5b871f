"""The conflict resolver and the veracity checker: one structured LLM call per flagged pair / memory."""

from __future__ import annotations

from autogen_core.models import ChatCompletionClient

from agents.schemas import FactScore, JudgeReply, fact_check_batch
from agents.structured import UsageLog, call_structured, system, user
from memory.conflicts import Assessment, ConflictConfig, Verdict, combine
from prompts import render


class LLMJudge:
    """Asks the model whether a new memory is the same as, contradicts, or is independent of an old one."""

    def __init__(
        self,
        client: ChatCompletionClient,
        usage: UsageLog | None = None,
        name: str = "conflict_resolver",
        config: ConflictConfig | None = None,
    ):
        """Use ``client`` for the verdicts; calls are counted in ``usage``."""
        self.client, self.usage, self.name = client, usage, name
        self.config = config or ConflictConfig()
        self.failures: list[str] = []

    async def assess(self, new_text: str, old_text: str) -> JudgeReply | None:
        """The model's decomposed answer about the pair, or None when its reply cannot be used."""
        prompt = render("judge_conflict", old=_quote(old_text), new=_quote(new_text))
        outcome = await call_structured(
            self.client, self.name, [system(prompt), user("Give the answer as JSON.")], JudgeReply, self.usage
        )
        if outcome.value is None:
            self.failures.append(outcome.error or "no verdict")
        return outcome.value

    async def judge(self, new_text: str, old_text: str, similarity: float) -> Verdict:
        """The verdict from the model's answer combined with the embedding similarity."""
        reply = await self.assess(new_text, old_text)
        assessment = (
            None if reply is None else Assessment(same_attribute=reply.same_attribute, same_value=reply.same_value)
        )
        return combine(assessment, similarity, self.config, new_text, old_text)


class FactChecker:
    """Scores a memory against trusted evidence: F in {0, 0.5, 1} (VeriMem re-check input)."""

    def __init__(
        self, client: ChatCompletionClient, domain: str, usage: UsageLog | None = None, name: str = "veracity_checker"
    ):
        """Use ``client``; ``domain`` is named in the prompt."""
        self.client, self.domain, self.usage, self.name = client, domain, usage, name
        self.failures: list[str] = []

    async def check_all(self, memory_texts: list[str], evidence: str) -> list[FactScore | None]:
        """One call for all memories of a build; None for each when there is no evidence or no usable reply."""
        if not evidence.strip() or not memory_texts:
            return [None] * len(memory_texts)
        numbered = "\n".join(f"{n}. {_quote(text)}" for n, text in enumerate(memory_texts, start=1))
        prompt = render("check_veracity", domain=self.domain, evidence=_quote(evidence), memories=numbered)
        model = fact_check_batch(len(memory_texts))
        outcome = await call_structured(
            self.client, self.name, [system(prompt), user("Give the checks as JSON.")], model, self.usage
        )
        if outcome.value is None:
            self.failures.append(outcome.error or "no scores")
            return [None] * len(memory_texts)
        checks: list[FactScore] = outcome.value.checks  # type: ignore[attr-defined]
        return list(checks)


def _quote(text: str) -> str:
    """Neutralise tag-like sequences so quoted data cannot close the prompt's data sections."""
    return text.replace("<", "‹").replace(">", "›")


quote = _quote
