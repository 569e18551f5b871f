"""Typed outputs of every structured agent reply (validated before anything is used)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, create_model, field_validator

from memory.conflicts import Verdict


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last sentence end if there is one."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind("; "))
    if end >= limit // 3:
        return head[: end + 1].strip()
    return head.rsplit(" ", 1)[0].rstrip(",;: ") if " " in head else head


def bounded(low: int, high: int) -> AfterValidator:
    """A string length check done after parsing, NOT put in the JSON schema.

    llama.cpp turns ``minLength``/``maxLength`` into bounded repetitions that blow up its grammar
    and make every generated token slow. Too short is a validation error (repair retry); too long is
    clipped at a sentence or word boundary, since small models ramble past a limit they cannot see.
    """

    def check(value: str) -> str:
        value = clip(" ".join(value.split()), high)
        if len(value) < low:
            raise ValueError(f"must be {low} to {high} characters, got {len(value)}")
        return value

    return AfterValidator(check)


class ExtractedCategory(str, Enum):
    """Categories an extractor may assign (a subset of the store's categories)."""

    FACT = "fact"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    PROCEDURAL = "procedural"


class ExtractedMemory(BaseModel):
    """One refined memory proposed by an extractor."""

    model_config = ConfigDict(extra="ignore")

    text: Annotated[str, bounded(8, 400)]
    category: ExtractedCategory = ExtractedCategory.FACT
    _grounded: bool = PrivateAttr(default=True)  # False: may name values the expert never said

    @property
    def grounded(self) -> bool:
        """Whether the grounding screen applies (not to a memory that names the mistake to avoid)."""
        return self._grounded

    @field_validator("text")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = " ".join(value.split())
        if len(value) < 8:
            raise ValueError("memory text too short")
        return value


class Extraction(BaseModel):
    """An extractor's reply: 1 to 6 memories."""

    model_config = ConfigDict(extra="ignore")

    memories: list[ExtractedMemory] = Field(min_length=1, max_length=6)

    def to_memories(self) -> list[ExtractedMemory]:
        """The memories to store."""
        return list(self.memories)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).strip()
    return text if text.endswith((".", "!", "?")) else text + "."


class ResidualExtraction(BaseModel):
    """Residual memory: the corrected domain fact first, then up to three more."""

    model_config = ConfigDict(extra="ignore")

    corrected_fact: Annotated[str, bounded(8, 300)]
    more_facts: list[Annotated[str, bounded(0, 300)]] = Field(default_factory=list, max_length=3)

    def to_memories(self) -> list[ExtractedMemory]:
        """The corrected fact, then the others (too short ones dropped)."""
        texts = [self.corrected_fact, *self.more_facts]
        return [
            ExtractedMemory(text=_sentence(t), category=ExtractedCategory.FACT) for t in texts if len(t.strip()) >= 8
        ]


class ResponseExtraction(BaseModel):
    """LLM-response memory as typed fields; the memory sentences are composed from them."""

    model_config = ConfigDict(extra="ignore")

    topic: Annotated[str, bounded(3, 160)]
    final_answer: Annotated[str, bounded(1, 160)]
    reason: Annotated[str, bounded(0, 300)] = ""
    avoid: Annotated[str, bounded(0, 300)] = ""

    def to_memories(self) -> list[ExtractedMemory]:
        """Accepted answer, why it was accepted, and the mistake to avoid."""
        topic = self.topic.strip().rstrip(".?:")
        out = [ExtractedMemory(text=_sentence(f"For {topic}, the accepted answer is {self.final_answer.strip()}"))]
        if len(self.reason.strip()) >= 8:
            out.append(
                ExtractedMemory(
                    text=_sentence(f"On {topic}: {self.reason.strip()}"), category=ExtractedCategory.PROCEDURAL
                )
            )
        if len(self.avoid.strip()) >= 8:
            mistake = ExtractedMemory(
                text=_sentence(f"On {topic}, avoid this mistake: {self.avoid.strip()}"),
                category=ExtractedCategory.CONSTRAINT,
            )
            mistake._grounded = False  # names the wrong answer on purpose: exempt from the grounding screen
            out.append(mistake)
        return out


class JudgeReply(BaseModel):
    """The conflict resolver's answer on one flagged pair, decomposed for small models.

    The model names what each statement is about and answers two yes/no questions; the verdict
    is derived here: another attribute -> independent, same attribute and value -> same, same
    attribute with another value -> contradicts.
    """

    model_config = ConfigDict(extra="ignore")

    old_about: Annotated[str, bounded(0, 160)]
    new_about: Annotated[str, bounded(0, 160)]
    same_attribute: bool
    same_value: bool

    def to_verdict(self) -> Verdict:
        """As the engine's vocabulary."""
        if not self.same_attribute:
            return Verdict.INDEPENDENT
        return Verdict.SAME if self.same_value else Verdict.CONTRADICTS


class KeyPoints(BaseModel):
    """Key points of a reference answer (for KPCS)."""

    model_config = ConfigDict(extra="ignore")

    points: list[Annotated[str, bounded(1, 160)]] = Field(min_length=1, max_length=8)


class FactScore(BaseModel):
    """One entry of a batched fact check: the memory's number and F in {0, 0.5, 1}.

    No prose reason: on a small CPU model every reason costs seconds.
    """

    model_config = ConfigDict(extra="ignore")

    n: int = Field(ge=1)
    score: float = Field(json_schema_extra={"enum": [0, 0.5, 1]})

    @field_validator("score")
    @classmethod
    def _allowed(cls, value: float) -> float:
        if value not in (0.0, 0.5, 1.0):
            raise ValueError("score must be 0, 0.5 or 1")
        return value


class FactChecks(BaseModel):
    """A batched fact check: one :class:`FactScore` per memory, matched to memories by ``n``."""

    model_config = ConfigDict(extra="ignore")

    checks: list[FactScore]


def fact_check_batch(count: int) -> type[FactChecks]:
    """A reply model holding exactly ``count`` fact checks (one call checks a whole build)."""
    return create_model(
        f"FactChecks{count}",
        __base__=FactChecks,
        checks=(list[FactScore], Field(min_length=count, max_length=count)),
    )
