"""What one lifecycle run shares across its stages, and who asks what in a scenario.

:class:`Run` holds the scenario, the run's own store, the model client, the checkpoint, the progress
callback, the records corrected so far and the key points worked out so far. ``fingerprint`` ties a run
folder to one scenario's content; ``corrector`` and ``paraphrase_asker`` say which user corrects a record
and which one asks its paraphrases.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from autogen_core.models import ChatCompletionClient

from agents.chatbot import MarkMemory
from agents.evaluator import KeyPointExtractor
from memory.engine import MemoryEngine
from memory.knowledge import KnowledgeBase
from scenarios import metrics
from scenarios.checkpoint import Checkpoint
from scenarios.schema import Record, Role, Scenario

Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``: called before each unit of a stage and once when it is finished."""


def _no_progress(label: str, done: int, total: int) -> None:
    """The default progress callback: report nothing."""


@dataclass
class Run:
    """Everything one lifecycle run needs."""

    scenario: Scenario
    engine: MemoryEngine
    client: ChatCompletionClient
    checkpoint: Checkpoint
    progress: Progress = _no_progress
    corrected: set[str] = field(default_factory=set)
    points: dict[str, list[str]] = field(default_factory=dict)
    knowledge: KnowledgeBase | None = None  # the scenario's knowledge files, when it names any

    def memory_for(self, user_id: str) -> MarkMemory:
        """A user's MarkMemory with the scenario's retrieval settings (and knowledge, if any)."""
        return MarkMemory(
            self.engine, user_id, k=self.scenario.k, preset=self.scenario.preset, knowledge=self.knowledge
        )

    def knowledge_only(self, user_id: str) -> MarkMemory | None:
        """What an answer without memory gets: the scenario's knowledge (None when it names none)."""
        if self.knowledge is None:
            return None
        return MarkMemory(self.engine, user_id, knowledge=self.knowledge, memories=False)

    async def key_points_for(self, record: Record, paraphrase: int | None = None) -> list[str]:
        """Key points of a record without hand-written ones (evaluator agent's, else derived), key as shown."""
        shown = record.key_for(paraphrase)
        slot = f"{record.id}#{shown}"
        if slot not in self.points:
            extracted = None
            if self.scenario.llm_key_points:
                reference = record.reference(paraphrase)
                extracted = await KeyPointExtractor(self.client, self.scenario.domain).key_points(reference)
            self.points[slot] = extracted or metrics.derive_key_points(
                shown, record.options[record.key], record.explanation
            )
        return self.points[slot]

    def split_of(self) -> dict[str, str | None]:
        """Each record's split (dev / test), None for records without one."""
        return {r.id: r.split.value if r.split else None for r in self.scenario.records}

    def embed(self, texts: list[str]) -> list[list[float]]:
        """The engine's embedder (used for ICS/KPCS)."""
        return self.engine.embedder.embed(texts)


def fingerprint(scenario: Scenario) -> str:
    """A hash of the scenario's content: a run folder only resumes the same scenario."""
    return hashlib.sha256(scenario.model_dump_json().encode()).hexdigest()[:16]


def corrector(scenario: Scenario, record: Record) -> str:
    """The user who corrects a record (its correction user, else the first SME, else the first user)."""
    if record.correction:
        return record.correction.user
    smes = [u.id for u in scenario.users if u.role is Role.SME]
    return smes[0] if smes else scenario.users[0].id


def paraphrase_asker(scenario: Scenario, record: Record) -> str:
    """Who asks a record's paraphrases in stage 3: the scenario's ``paraphrase_user``, else another user.

    The default is the first non-SME user other than the corrector, then any other user; a scenario
    with a single user falls back to the corrector.
    """
    if scenario.paraphrase_user is not None:
        return scenario.paraphrase_user
    fixer = corrector(scenario, record)
    others = [u for u in scenario.users if u.id != fixer]
    users = [u.id for u in others if u.role is not Role.SME] or [u.id for u in others]
    return users[0] if users else fixer
