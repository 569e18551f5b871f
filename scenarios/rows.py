"""What one finished unit of a lifecycle stage produced: the ``result`` of a ``progress.jsonl`` line.

A unit is one answer (stages 1 and 3), one SME correction conversation (stage 2) or one multi-user
session (stage 4). The models read every line that earlier runs wrote: fields added since then have
defaults, fields these models no longer name are kept (``extra="allow"``), and :meth:`JsonModel.as_json`
writes back only the fields a row carries, so a resumed run reports an old row exactly as it was stored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.building import EvidenceStats, Turn
from memory.engine import WriteAction


class JsonModel(BaseModel):
    """A result whose JSON form is what ``report.json`` and ``progress.jsonl`` hold."""

    model_config = ConfigDict(extra="forbid")

    def as_json(self) -> dict[str, Any]:
        """The JSON form: the fields that were set (a row read from an older run keeps its own keys)."""
        return self.model_dump(mode="json", exclude_unset=True)


class UnitRow(JsonModel):
    """A unit's result as stored in ``progress.jsonl``; unknown keys of older runs are kept."""

    model_config = ConfigDict(extra="allow")


class AnswerRow(UnitRow):
    """One answer in a fresh session, scored against the key as that question presents it.

    Rows of runs older than re-lettered paraphrases lack ``split``, ``user``, ``key``, ``option``,
    ``relettered`` and the client's token counts; they read as None (or not re-lettered).
    """

    id: str
    paraphrase: int | None
    split: str | None = None
    user: str | None = None  # who asked; None without memory (stage 1)
    answer: str
    letter: str | None  # the letter the reply chose, as shown
    key: str | None = None  # the key's letter as shown
    option: str | None = None  # the chosen option's letter as the record lists it
    relettered: bool = False
    correct: bool
    tokens: int
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    words: int
    ics: float
    kpcs: float
    aics: float
    injected: list[str]  # ids of the memories injected into the prompt
    cited: list[str] = Field(default_factory=list)  # the knowledge passages given, as "[K1] source, section"

    @property
    def record_id(self) -> str:
        """The record answered."""
        return self.id


class BuildUsage(JsonModel):
    """LLM calls and tokens per agent, and their total."""

    agents: dict[str, dict[str, int]]
    total: dict[str, int]


class Conversation(UnitRow):
    """One SME correction conversation of stage 2 and what the memory-building team made of it."""

    record: str
    rounds: int  # SME rounds, the paper's turns
    tokens: int
    words: int
    accepted: bool
    memories: dict[str, int]  # candidates extracted per memory type
    outcomes: dict[str, dict[str, int]]  # per memory type: how many were committed, merged, ...
    errors: list[str]
    usage: BuildUsage
    transcript: list[Turn]
    # what the veracity checker had to go on (absent in rows written before it was recorded)
    evidence: EvidenceStats | None = None

    @property
    def record_id(self) -> str:
        """The record corrected."""
        return self.record


class AskStep(AnswerRow):
    """A session step that asked a record (or one of its paraphrases): the scored answer."""

    kind: Literal["ask"]


class RememberStep(UnitRow):
    """A session step that told the bot to remember something."""

    kind: Literal["remember"]
    text: str
    action: WriteAction
    superseded: list[str]


class SayStep(UnitRow):
    """A free-form message of a session and the bot's reply."""

    kind: Literal["say"]
    text: str
    answer: str


class FeedbackStep(UnitRow):
    """Feedback on the memories injected into the previous answer."""

    kind: Literal["feedback"]
    correct: bool
    memories: list[str]


SessionStep = Annotated[AskStep | RememberStep | SayStep | FeedbackStep, Field(discriminator="kind")]


class ExpectationCheck(UnitRow):
    """A scenario's expectation on the memories injected at one ask; ``expect`` or ``forbid`` is set."""

    session: str
    step: str | None  # the record asked
    expect: str | None = None  # text that must be among the injected memories
    forbid: str | None = None  # text that must not be
    passed: bool
    injected: list[str]  # the injected memories' texts


class SessionRun(UnitRow):
    """One multi-user session of stage 4: its steps, the expectation checks and its size."""

    id: str
    user: str
    steps: list[SessionStep]
    checks: list[ExpectationCheck]
    turns: int
    tokens: int
    words: int
    feedback_events: int

    def asks(self) -> list[AskStep]:
        """The steps that asked a record."""
        return [step for step in self.steps if isinstance(step, AskStep)]
