"""The evaluator's model side: key points of a reference answer for KPCS.

The paper extracts key points with an LLM. Grading against the multiple-choice key needs no model
and lives in ``scenarios.metrics``.
"""

from __future__ import annotations

from autogen_core.models import ChatCompletionClient

from agents.checks import quote
from agents.schemas import KeyPoints
from agents.structured import UsageLog, call_structured, system, user
from prompts import render


class KeyPointExtractor:
    """Lists the key points of a reference answer with the model."""

    def __init__(self, client: ChatCompletionClient, domain: str = "medicine", usage: UsageLog | None = None) -> None:
        """Use ``client``; calls are counted in ``usage``."""
        self.client, self.domain, self.usage = client, domain, usage
        self.failures: list[str] = []

    async def key_points(self, reference: str) -> list[str] | None:
        """2 to 5 key points, or None when the model's reply cannot be used."""
        prompt = render("extract_key_points", domain=self.domain, reference=quote(reference))
        outcome = await call_structured(
            self.client, "evaluator", [system(prompt), user("List the key points as JSON.")], KeyPoints, self.usage
        )
        if outcome.value is None:
            self.failures.append(outcome.error or "no key points")
            return None
        return [p.strip() for p in outcome.value.points if p.strip()]
