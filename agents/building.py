"""State and policy of one memory build (MARK's Memory Builder Service), shared by the team's agents."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.reviewers import ReviewDecision
from agents.structured import Usage, UsageLog
from mark.errors import InputError
from memory.conflicts import Verdict
from memory.grounding import GateReason
from memory.knowledge_check import KnowledgeVerdict, Stance
from memory.models import Category, MemoryType, Source, Status


class ReviewPolicy(StrEnum):
    """Which new memories a human reviewer must see before they are used."""

    AUTO = "auto"
    RESIDUAL = "residual"
    ALL = "all"


class Turn(BaseModel):
    """One message of a conversation transcript."""

    model_config = ConfigDict(extra="forbid")

    role: str
    content: str

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in {"user", "assistant", "sme", "system"}:
            raise ValueError(f"role must be user, assistant, sme or system, not {value!r}")
        return value


def render_transcript(turns: list[Turn]) -> str:
    """The transcript as "User: ..." / "Expert: ..." / "Assistant: ..." lines, exactly one per turn.

    Who said what comes from the turn's role, never from its text: newlines and whitespace runs in
    the content collapse to one space, so the content stays on its label's line and a "Expert: ..."
    written inside a user's message cannot begin a line of its own.
    """
    names = {"user": "User", "sme": "Expert", "assistant": "Assistant", "system": "System"}
    lines = ((names[t.role], " ".join(t.content.split())) for t in turns)
    return "\n".join(f"{name}: {content}" for name, content in lines if content)


class Candidate(BaseModel):
    """One extracted memory on its way through the team."""

    model_config = ConfigDict(extra="forbid")

    type: MemoryType
    text: str
    category: Category
    verdicts: dict[str, Verdict] = Field(default_factory=dict)
    conflict_texts: list[str] = Field(default_factory=list)
    fact_check: float | None = None
    fact_reason: str = ""
    review_reason: str = ""
    decision: ReviewDecision | None = None  # the reviewer's, when one decided during the build
    knowledge: KnowledgeVerdict | None = None  # the knowledge base's stance, set by the veracity checker
    passages: int = 0  # knowledge passages found for it (evidence for the fact check)
    mistake: bool = False  # worded as a mistake to avoid (may name the rejected answer)
    fallback: bool = False  # the expert's own words, stored because every extracted one was refused
    gate: str = ""  # the truth gate's verdict, for reports and the audit log


class Rejection(BaseModel):
    """A candidate the truth gate refused: never stored, audited with its reason."""

    model_config = ConfigDict(extra="forbid")

    type: MemoryType
    text: str
    reason: GateReason
    detail: str = ""
    audit_id: str = ""


class BuildAction(StrEnum):
    """What the committer did with one candidate."""

    COMMITTED = "committed"  # stored as a new memory
    MERGED = "merged"  # restated an existing memory: merged into it
    SUPERSEDED = "superseded"  # stored, replacing the older memories it contradicts
    QUEUED = "queued"  # stored, waiting for a reviewer before it is used
    REJECTED = "rejected"  # refused by the reviewer: not stored


class Outcome(BaseModel):
    """What happened to one candidate."""

    model_config = ConfigDict(extra="forbid")

    action: BuildAction
    type: MemoryType
    text: str
    memory_id: str | None = None
    status: Status | None = None
    superseded: list[str] = Field(default_factory=list)
    reason: str = ""
    gate: str = ""
    knowledge: str = ""  # the knowledge base's stance ("" when none was asked)


class EvidenceStats(BaseModel):
    """How much evidence the veracity checker had: knowledge passages and the fact check's verdicts."""

    model_config = ConfigDict(extra="forbid")

    candidates: int = 0
    with_passages: int = 0  # candidates for which the knowledge base returned at least one passage
    supported: int = 0  # ... whose passage states them
    contradicted: int = 0  # ... whose passage contradicts them (sent to a reviewer)
    fact_checks: dict[str, int] = Field(default_factory=dict)  # the checker's scores ("1.0", "0.5", "0.0", "none")


SITUATION_CHARS = 2000


class BuildState:
    """Everything the team's agents share during one build."""

    def __init__(
        self,
        turns: list[Turn],
        user_id: str,
        *,
        source: Source = Source.USER,
        policy: ReviewPolicy = ReviewPolicy.AUTO,
        evidence: str = "",
        domain: str = "general",
        agent: str = "chatbot",
        conversation_id: str | None = None,
        situation: str | None = None,
        keep_transcript: bool = True,
    ) -> None:
        """Start a build of ``turns`` for ``user_id``; ``evidence`` is trusted reference text.

        ``situation`` is what the memories are about, for the applicability check at injection: by
        default the opening question of the conversation; "" for none (a chat on many subjects).
        """
        self.turns, self.user_id, self.source, self.policy = turns, user_id, source, policy
        self.keep_transcript = keep_transcript  # the conversation goes into the user's history (chat keeps its own)
        self.evidence, self.domain, self.agent = evidence, domain, agent
        self.conversation_id = conversation_id or uuid.uuid4().hex[:12]
        if situation is None:
            situation = next((t.content for t in turns if t.role in {"user", "sme"}), "")
        self.situation = situation.strip()[:SITUATION_CHARS] or None
        self.candidates: list[Candidate] = []
        self.outcomes: list[Outcome] = []
        self.rejected: list[Rejection] = []
        self.notes: list[str] = []
        self.errors: list[str] = []
        self.usage = UsageLog()
        self.trail: list[str] = []
        self.needs_review = False  # set by the veracity checker; the team's graph routes on it
        self.evidence_stats = EvidenceStats()
        self.knowledge_evidence: str | None = None  # the passages found for the candidates (set by the truth gate)

    @property
    def transcript(self) -> str:
        """The conversation as text for the extractor prompts."""
        return render_transcript(self.turns)

    @property
    def correction_text(self) -> str:
        """What the expert or user said after the opening question ("" when nothing was)."""
        said = [t.content for t in self.turns if t.role in {"user", "sme"}]
        return "\n".join(said[1:])

    @property
    def expert_evidence(self) -> str:
        """Trusted evidence for fact checks: the reference text plus what the expert said."""
        said = [t.content for t in self.turns if t.role in {"user", "sme"}] if self.source is Source.SME else []
        if said:  # the question with its options lets a bare "it's B" be read as the option's text
            said[0] = "The question asked: " + " ".join(said[0].split())
        return "\n".join(part for part in [self.evidence, *said] if part.strip())

    def review_reason(self, candidate: Candidate) -> str:
        """Why the policy sends a candidate to a reviewer ("" when it does not)."""
        if self.policy is ReviewPolicy.ALL:
            return "policy: review all"
        if candidate.type is MemoryType.RESIDUAL:
            if self.policy is ReviewPolicy.RESIDUAL:
                return "policy: review residual"
            if self.source is not Source.SME:
                return f"residual memory from an untrusted source ({self.source.value})"
        if candidate.knowledge is not None and candidate.knowledge.stance is Stance.CONTRADICTS:
            return f"contradicts the knowledge base ({candidate.knowledge.citation}): {candidate.knowledge.passage}"
        if candidate.fact_check == 0.0:
            return "the fact check contradicts it"
        return ""

    def counts(self) -> dict[str, dict[str, int]]:
        """Outcome counts per memory type."""
        table: dict[str, dict[str, int]] = {}
        for outcome in self.outcomes:
            row = table.setdefault(outcome.type.value, {})
            row[outcome.action.value] = row.get(outcome.action.value, 0) + 1
        return table

    def report(self) -> BuildReport:
        """The typed summary of the build (``.as_json()`` for its JSON)."""
        return BuildReport(
            conversation_id=self.conversation_id,
            user_id=self.user_id,
            extracted={t.value: sum(c.type is t for c in self.candidates) for t in MemoryType},
            counts=self.counts(),
            outcomes=list(self.outcomes),
            rejected=list(self.rejected),
            notes=list(self.notes),
            errors=list(self.errors),
            evidence=self.evidence_stats.model_copy(),
            usage=BuildUsage(
                agents={name: u.model_copy() for name, u in sorted(self.usage.by_agent.items())},
                total=self.usage.totals(),
            ),
            trail=list(self.trail),
        )


class BuildUsage(BaseModel):
    """LLM calls and tokens per agent plus the total."""

    model_config = ConfigDict(extra="forbid")

    agents: dict[str, Usage]
    total: Usage


class BuildReport(BaseModel):
    """What one build extracted, stored, refused and spent: the result ``mark memory build`` prints."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    user_id: str
    extracted: dict[str, int]
    counts: dict[str, dict[str, int]]
    outcomes: list[Outcome]
    rejected: list[Rejection]
    notes: list[str]
    errors: list[str]
    evidence: EvidenceStats = EvidenceStats()
    usage: BuildUsage
    trail: list[str]

    def as_json(self) -> dict[str, Any]:
        """The JSON document (enum members as their values)."""
        return self.model_dump(mode="json")


Step = Callable[[BuildState], Awaitable[str]]
"""One role's turn: it updates the shared state and returns a one-line report for the trail."""


class TranscriptError(InputError):
    """A transcript file is unreadable or malformed."""


def load_transcript(path: Path) -> list[Turn]:
    """Read a JSON list of ``{role, content}`` messages; errors name the file and the message index."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TranscriptError(f"cannot read {path}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, list) or not data:
        raise TranscriptError(f"{path}: expected a non-empty JSON list of {{role, content}} messages")
    turns: list[Turn] = []
    for index, item in enumerate(data):
        try:
            turns.append(Turn.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "message"
            raise TranscriptError(f"{path}: message {index}: {where}: {first['msg']}") from exc
    return turns
