"""What each lifecycle stage hands the report, and the report itself (the shape of ``report.json``).

The stage results are built from the unit rows of :mod:`scenarios.rows` and the measures of
:mod:`scenarios.metrics` and :mod:`scenarios.effects`. ``LifecycleReport.as_json()`` is the document
that ``report.json`` holds and that :mod:`scenarios.report` renders; a stage that did not run is absent.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from agents.building import EvidenceStats
from memory.ledger import LedgerRow, Refusal
from scenarios import metrics
from scenarios.rows import AnswerRow, BuildUsage, Conversation, ExpectationCheck, JsonModel, SessionRun

# --- measures -------------------------------------------------------------------------------------


class Describe(JsonModel):
    """Count, mean, std, min, max of some values (``scenarios.metrics.describe``); min and max keep ints."""

    count: int
    mean: float | None
    std: float | None
    min: int | float | None
    max: int | float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Describe:
        """The description of ``values``."""
        return cls.model_validate(metrics.describe(values))


class AlphaPoint(JsonModel):
    """Mean AICS of correct and incorrect answers at one alpha (the paper's Figure 2)."""

    alpha: float
    correct: float | None
    incorrect: float | None
    gap: float | None
    n_correct: int
    n_incorrect: int


class Distribution(JsonModel):
    """Correct and incorrect answers (the paper's Figure 5)."""

    correct: int
    incorrect: int


class Share(JsonModel):
    """The accuracy over ``n`` answers (None for none)."""

    accuracy: float | None
    n: int


class TokenMeans(JsonModel):
    """Mean completion and prompt tokens per answer, as the model client reported them."""

    n: int
    completion: float | None
    prompt: float | None


class Harm(JsonModel):
    """Records right without memory and wrong with it (``helped``: the reverse move)."""

    n: int
    share: float | None  # of the records right without memory
    right_before: int
    ids: list[str]
    helped: int
    compared: int  # records answered in both stages


class Gain(Share):
    """Accuracy on the re-lettered paraphrases of corrected records, asked by ``user``."""

    user: str | None
    plain: Share  # the paraphrases that keep the listed order


class TokenComparison(JsonModel):
    """Tokens per answer: stage 1 (no memory) beside stage 3 (memory)."""

    stage1: TokenMeans
    stage3: TokenMeans
    stage3_paraphrases: TokenMeans
    completion_below_baseline: bool | None


class Injection(JsonModel):
    """What memory injection did to one set of records: harm, gain and tokens."""

    harm: Harm
    gain: Gain
    tokens: TokenComparison


class AnswerMetrics(JsonModel):
    """Accuracy, counts, mean scores and tokens of a set of answers (one split's column)."""

    n: int
    accuracy: float | None
    distribution: Distribution
    ics: float | None
    kpcs: float | None
    aics: float | None
    tokens_per_response: Describe
    answer_tokens: TokenMeans


class CorrectionMetrics(JsonModel):
    """Stage 2 for one set of records: conversations, accepted ones, mean SME rounds, memories per type."""

    conversations: int
    accepted: int
    rounds: float | None
    memories: dict[str, float | None]


class AskMetrics(JsonModel):
    """Stage 4 for one set of asks: how many, their accuracy, the persistence of corrections."""

    asks: int
    accuracy: float | None
    persistence_rate: float | None


# --- stages ---------------------------------------------------------------------------------------


class AnswerSummary(JsonModel):
    """Accuracy, mean ICS / KPCS / AICS, tokens, the alpha sweep and the distribution of answers."""

    records: list[AnswerRow]
    accuracy: float | None
    distribution: Distribution
    ics: float | None
    kpcs: float | None
    aics: float | None
    tokens_per_response: Describe
    answer_tokens: TokenMeans
    alpha_sweep: list[AlphaPoint]
    best_alpha: float | None


class BaselineResult(AnswerSummary):
    """Stage 1: every record answered without memory."""

    splits: dict[str, AnswerMetrics]
    wall_s: float


class Measured(Injection):
    """Stage 3's accuracy on corrected records and on paraphrases, with harm, gain and tokens."""

    corrected: Share
    paraphrases: Share


class InjectionSplit(AnswerMetrics, Measured):
    """Stage 3 on the records of one split."""


class InjectionResult(AnswerSummary, Measured):
    """Stage 3: records re-answered by their correctors and paraphrases asked by others, with memory."""

    paraphrase_records: list[AnswerRow]
    splits: dict[str, InjectionSplit]
    wall_s: float


class ConversationStats(JsonModel):
    """Turns, tokens and words per conversation (the paper's Tables 4 and 6)."""

    turns: Describe
    tokens: Describe
    words: Describe


class MemoriesPerConversation(JsonModel):
    """Conversations and the mean memories extracted per type (the paper's Table 5)."""

    conversations: int
    residual: float | None
    user_question: float | None
    llm_response: float | None


class CorrectionsSummary(JsonModel):
    """Tables 4 and 5 and the LLM usage of finished correction conversations."""

    conversations: list[Conversation]
    table4: ConversationStats
    table5: MemoriesPerConversation
    usage: BuildUsage
    evidence: EvidenceStats | None = None  # over the conversations that recorded it


class CorrectionsResult(CorrectionsSummary):
    """Stage 2: SME correction chats on the wrongly answered records, each built into memory."""

    splits: dict[str, CorrectionMetrics]
    wall_s: float


class EarlierCorrections(CorrectionsSummary):
    """Stage 2 as an earlier (possibly interrupted) run of the same folder left it."""

    partial: bool


class Expectations(JsonModel):
    """The expectation checks of stage 4."""

    passed: int
    failed: int
    details: list[ExpectationCheck]


class SessionsResult(JsonModel):
    """Stage 4: multi-user sessions; persistence of corrections across sessions and users."""

    sessions: list[SessionRun]
    table6: ConversationStats
    asks: int
    accuracy: float | None
    persistence_rate: float | None
    expectations: Expectations
    feedback_events: int
    splits: dict[str, AskMetrics]
    wall_s: float


class KnowledgeRow(JsonModel):
    """A knowledge source a run loaded from its scenario."""

    source: str
    version: str
    passages: int
    action: str  # added, replaced or unchanged (already in the run's store)


class LifecycleReport(JsonModel):
    """A lifecycle run: the stages that ran, the store's memories, wall time and the files written."""

    scenario: str
    model: dict[str, str | None]
    stages_run: list[int]
    embedder: str
    knowledge: list[KnowledgeRow] = Field(default_factory=list)  # the scenario's knowledge files
    stage1: BaselineResult | None = None
    stage2: CorrectionsResult | EarlierCorrections | None = None
    stage3: InjectionResult | None = None
    stage4: SessionsResult | None = None
    memories: dict[str, dict[str, int]]  # memory type -> status -> count
    memory_ledger: list[LedgerRow]
    refused: list[Refusal]
    wall_s: float
    files: dict[str, str] | None = None  # set once the report files are written
