"""The conflict resolver and the veracity checker: one structured LLM call per flagged pair / memory."""

from __future__ import annotations

from autogen_core.models import ChatCompletionClient

from agents.schemas import FactScore, JudgeReply, fact_check_batch
from agents.structured import UsageLog, call_structured, system, user
from memory.conflicts import ConflictConfig, Verdict
from memory.engine import AddResult, MemoryEngine
from memory.models import MemoryType
from memory.verdict_rules import Assessment, combine
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
        prompt = render("judge_conflict", old=quote_line(old_text), new=quote_line(new_text))
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
        count = len(memory_texts)
        numbered = "\n".join(f"{n}. {quote_line(text)}" for n, text in enumerate(memory_texts, start=1))
        prompt = render("check_veracity", domain=self.domain, evidence=_quote(evidence), memories=numbered)
        outcome = await call_structured(
            self.client,
            self.name,
            [system(prompt), user("Give the checks as JSON.")],
            fact_check_batch(count),
            self.usage,
            check=lambda reply: id_problem([c.n for c in reply.checks], count),
        )
        if outcome.value is None:
            self.failures.append(outcome.error or "no scores")
            return [None] * count
        by_number: dict[int, FactScore] = {c.n: c for c in outcome.value.checks}
        return [by_number[n] for n in range(1, count + 1)]


def id_problem(numbers: list[int], count: int) -> str | None:
    """What is wrong with the item numbers of a reply about items 1..``count`` (None: each exactly once).

    Verdicts are matched to memories by number, never by position, so a reply that skips, repeats or
    invents a number cannot be used: it would give one memory's verdict to another.
    """
    expected = set(range(1, count + 1))
    missing = sorted(expected - set(numbers))
    repeated = sorted({n for n in numbers if numbers.count(n) > 1})
    unknown = sorted(set(numbers) - expected)
    problems = [
        f"{label} n {', '.join(map(str, values))}"
        for label, values in (("missing", missing), ("repeated", repeated), ("unknown", unknown))
        if values
    ]
    if not problems:
        return None
    return f"{'; '.join(problems)} (give exactly one check for each n from 1 to {count})"


def _quote(text: str) -> str:
    """Neutralise tag-like sequences so quoted data cannot close the prompt's data sections."""
    return text.replace("<", "‹").replace(">", "›")


def quote_line(text: str) -> str:
    """``text`` quoted and on exactly one line: newlines and runs of whitespace become one space.

    For data that sits in a line-based structure (a numbered list, a ``Role: text`` turn): text that
    cannot start a new line cannot forge a new item, turn or role label.
    """
    return " ".join(_quote(text).split())


quote = _quote


def unquote(text: str) -> str:
    """Undo :func:`quote` in a model's reply: the brackets it copies from quoted data are the speaker's own.

    Without it a memory says "the answer is >5 ›5": the option letter spelt out beside the quoted text.
    """
    return text.replace("‹", "<").replace("›", ">")
