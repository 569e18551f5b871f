"""Scenario files: YAML validated by pydantic; every error names the file, line and field.

A scenario holds multiple-choice records (question, options, key, explanation, an SME correction
script, paraphrases, an optional dev/test split), the users, multi-user sessions for stage 4, and the
stage plan. A paraphrase is a string, or ``{text, order}`` where ``order`` (e.g. ``"CABD"``) presents
the options in that order, lettered afresh: the key's letter moves, so a memory that carries only a
letter stops helping, and one that carries the answer's content still does.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum
from itertools import permutations
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from mark.errors import InputError
from memory.scoring import preset_weights
from scenarios.yaml_lines import LineLoader, line_of, strip_lines

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
BUNDLED = Path(__file__).parent / "data"


class ScenarioError(InputError):
    """A scenario file cannot be used; the message names file, line and field."""


class Role(StrEnum):
    """Whether a user is a trusted subject-matter expert."""

    SME = "sme"
    USER = "user"


class User(BaseModel):
    """A person in the scenario."""

    model_config = ConfigDict(extra="forbid")

    id: str
    role: Role = Role.USER
    department: str | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("ids use letters, digits, '.', '_' or '-' (max 64)")
        return value


class Correction(BaseModel):
    """The scripted SME side of a correction chat (ends with ACCEPT, added if missing)."""

    model_config = ConfigDict(extra="forbid")

    user: str
    script: list[str] = Field(default_factory=list)  # the SME's lines (required when the scenario's sme is script)


class Split(StrEnum):
    """Which part of a held-out set a record belongs to: tune on dev, report on test."""

    DEV = "dev"
    TEST = "test"


class Paraphrase(BaseModel):
    """Another wording of a record's question; ``order`` re-letters the options (None: as listed).

    In YAML a paraphrase is a plain string or ``{text: ..., order: CABD}``; the order names the
    record's option letters in the order they are shown, and the shown options are lettered with the
    record's letters in their listed order (``CABD``: A shows C's text, B shows A's, ...).
    """

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=3)
    order: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        return {"text": data} if isinstance(data, str) else data

    @model_serializer(mode="wrap")
    def _as_text(self, handler: Any) -> Any:
        return self.text if self.order is None else handler(self)


def moved_order(letters: str, key: str, seed: str) -> str:
    """A deterministic option order (for ``Paraphrase.order``) under which ``key`` gets another letter.

    One of the permutations of ``letters`` (in lexicographic order) that shows another option where
    ``key`` was listed, chosen by the SHA-256 of ``seed`` modulo their count (18 of the 24 for ABCD).
    """
    orders = ["".join(p) for p in permutations(letters) if p[letters.index(key)] != key]
    return orders[int(hashlib.sha256(seed.encode()).hexdigest(), 16) % len(orders)]


class Record(BaseModel):
    """One multiple-choice question with its key and how an SME corrects a wrong answer."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str = Field(min_length=3)
    options: dict[str, str] = Field(min_length=2)
    key: str
    explanation: str = ""
    key_points: list[str] = Field(default_factory=list)
    paraphrases: list[Paraphrase] = Field(default_factory=list)
    correction: Correction | None = None
    split: Split | None = None

    @model_validator(mode="after")
    def _key_is_an_option(self) -> Record:
        if self.key not in self.options:
            raise ValueError(f"key {self.key!r} is not one of the options {sorted(self.options)}")
        letters = "".join(self.options)
        for i, paraphrase in enumerate(self.paraphrases):
            if paraphrase.order is not None and sorted(paraphrase.order) != sorted(letters):
                raise ValueError(
                    f"@paraphrases.{i}.order@ order {paraphrase.order!r} is not a permutation of the option"
                    f" letters {letters!r}"
                )
        return self

    def shown_options(self, paraphrase: int | None = None) -> dict[str, str]:
        """The options as presented for the question or a paraphrase: shown letter -> option text."""
        order = None if paraphrase is None else self.paraphrases[paraphrase].order
        if order is None:
            return dict(self.options)
        return {shown: self.options[listed] for shown, listed in zip(self.options, order, strict=True)}

    def key_for(self, paraphrase: int | None = None) -> str:
        """The letter of the right option as presented (moves when a paraphrase re-letters)."""
        order = None if paraphrase is None else self.paraphrases[paraphrase].order
        return self.key if order is None else list(self.options)[order.index(self.key)]

    def listed_letter(self, shown: str | None, paraphrase: int | None = None) -> str | None:
        """The listed letter of the option shown as ``shown`` (None stays None)."""
        order = None if paraphrase is None else self.paraphrases[paraphrase].order
        if shown is None or order is None or shown not in self.options:
            return shown
        return order[list(self.options).index(shown)]

    def prompt(self, paraphrase: int | None = None) -> str:
        """The question as the chatbot sees it, options lettered as presented."""
        stem = self.question if paraphrase is None else self.paraphrases[paraphrase].text
        options = self.shown_options(paraphrase)
        return stem.strip() + "\n" + "\n".join(f"{k}) {v}" for k, v in options.items())

    def reference(self, paraphrase: int | None = None) -> str:
        """The expected answer text (for ICS/KPCS), with the key's letter as presented."""
        answer = f"The answer is {self.key_for(paraphrase)}) {self.options[self.key]}."
        return f"{answer} {self.explanation}".strip()


class Step(BaseModel):
    """One step of a stage-4 session: ask a record (optionally a paraphrase) or do a memory action."""

    model_config = ConfigDict(extra="forbid")

    ask: str | None = None
    paraphrase: int | None = Field(default=None, ge=0)
    say: str | None = None
    remember: str | None = None
    feedback: Literal["correct", "incorrect", "auto"] | None = None
    expect_memory: str | None = None
    forbid_memory: str | None = None

    @model_validator(mode="after")
    def _one_action(self) -> Step:
        actions = [self.ask, self.say, self.remember, self.feedback]
        if sum(a is not None for a in actions) != 1:
            raise ValueError("each step does exactly one of: ask, say, remember, feedback")
        return self


class Session(BaseModel):
    """A session of one user in stage 4."""

    model_config = ConfigDict(extra="forbid")

    id: str
    user: str
    steps: list[Step] = Field(min_length=1)


class Scenario(BaseModel):
    """A whole scenario file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    domain: str = "medicine"
    source: str = ""
    users: list[User] = Field(min_length=1)
    records: list[Record] = Field(default_factory=list)
    sessions: list[Session] = Field(default_factory=list)
    stages: list[int] = Field(default_factory=lambda: [1, 2, 3, 4])
    max_correction_turns: int = Field(default=4, ge=1, le=10)
    preset: str = "similarity_only"  # MRS weights while answering; the paper's experiments rank by similarity only
    k: int = Field(default=1, ge=1, le=10)  # memories injected per type (MARK injects the top one)
    llm_key_points: bool = False  # extract missing key points with the evaluator agent (one call per record)
    paraphrase_user: str | None = None  # who asks paraphrases in stage 3 (default: the first non-SME user)
    # knowledge files (Markdown, text, HTML, PDF) for the run's knowledge base: a path relative to the
    # scenario file, or the name of a bundled file in scenarios/data/knowledge/. Stage 1 then answers
    # with knowledge only, stage 3 with knowledge and memory.
    knowledge: list[str] = Field(default_factory=list)
    # who plays the SME in stage 2: "script" (each record's lines), "console" (a person at this terminal)
    # or an http(s) URL answering {"prompt"} with {"reply"}; and who reviews gated memories during the
    # builds: "none" / "web" (they wait in the queue for mark review or the review page), "console", a URL
    sme: str = Field(default="script", pattern=r"^(script|console|https?://\S+)$")
    reviewer: str = Field(default="none", pattern=r"^(none|web|console|https?://\S+)$")
    _folder: Path = PrivateAttr(default=Path("."))

    def knowledge_files(self) -> list[Path]:
        """The knowledge files as paths (checked to exist when the scenario was loaded)."""
        return [knowledge_path(self._folder, entry) for entry in self.knowledge]

    @field_validator("preset")
    @classmethod
    def _preset(cls, value: str) -> str:
        preset_weights(value)
        return value

    @field_validator("stages")
    @classmethod
    def _stages(cls, value: list[int]) -> list[int]:
        unknown = sorted(set(value) - {1, 2, 3, 4})
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}; stages are 1, 2, 3, 4")
        return sorted(set(value))

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        problems = reference_errors(self)
        if problems:
            loc, message = problems[0]
            raise ValueError(f"@{'.'.join(str(p) for p in loc)}@ {message}")
        return self

    def user(self, user_id: str) -> User:
        """A user by id."""
        return next(u for u in self.users if u.id == user_id)

    def record(self, record_id: str) -> Record:
        """A record by id."""
        return next(r for r in self.records if r.id == record_id)


def _script_errors(scenario: Scenario) -> list[tuple[tuple[str | int, ...], str]]:
    """Corrections without lines, when the scenario's SME speaks from the script."""
    if scenario.sme != "script":
        return []
    return [
        (("records", i, "correction", "script"), "a scripted SME needs at least one line")
        for i, record in enumerate(scenario.records)
        if record.correction is not None and not record.correction.script
    ]


def reference_errors(scenario: Scenario) -> list[tuple[tuple[str | int, ...], str]]:
    """Cross-references that do not resolve, each with the location of the offending field."""
    users = {u.id for u in scenario.users}
    records = {r.id: r for r in scenario.records}
    problems: list[tuple[tuple[str | int, ...], str]] = _script_errors(scenario)
    if len(users) != len(scenario.users):
        problems.append((("users",), "user ids must be unique"))
    if len(records) != len(scenario.records):
        problems.append((("records",), "record ids must be unique"))
    for i, record in enumerate(scenario.records):
        if record.correction and record.correction.user not in users:
            problems.append(
                (
                    ("records", i, "correction", "user"),
                    f"record {record.id}: user {record.correction.user!r} is not in users",
                )
            )
    if scenario.paraphrase_user is not None and scenario.paraphrase_user not in users:
        problems.append((("paraphrase_user",), f"user {scenario.paraphrase_user!r} is not in users"))
    for i, session in enumerate(scenario.sessions):
        if session.user not in users:
            problems.append((("sessions", i, "user"), f"session {session.id}: user {session.user!r} is not in users"))
        for j, step in enumerate(session.steps):
            where: tuple[str | int, ...] = ("sessions", i, "steps", j, "ask")
            if step.ask is not None and step.ask not in records:
                problems.append((where, f"session {session.id}: unknown record {step.ask!r}"))
            elif step.ask and step.paraphrase is not None and step.paraphrase >= len(records[step.ask].paraphrases):
                problems.append((where, f"session {session.id}: record {step.ask} has no paraphrase {step.paraphrase}"))
    return problems


_WHERE = re.compile(r"^(?:Value error, )?@([^@]*)@ (.*)$", re.S)


KNOWLEDGE = BUNDLED / "knowledge"


def knowledge_path(folder: Path, entry: str) -> Path:
    """A scenario's knowledge entry as a path: beside the scenario file, else a bundled knowledge file."""
    given = Path(entry)
    local = given if given.is_absolute() else folder / given
    if local.is_file() or given.is_absolute():
        return local
    shipped = KNOWLEDGE / given
    return shipped if shipped.is_file() else local


def _check_knowledge(path: Path, scenario: Scenario, data: dict[str, Any]) -> None:
    for i, (entry, file) in enumerate(zip(scenario.knowledge, scenario.knowledge_files(), strict=True)):
        if not file.is_file():
            line = line_of(data, ("knowledge", i))
            at = f":{line}" if line else ""
            raise ScenarioError(
                f"{path}{at}: knowledge.{i}: no file {entry!r} beside the scenario or among the bundled knowledge files"
            )


def with_knowledge(scenario: Scenario, files: list[str]) -> Scenario:
    """The scenario with more knowledge files (a path as given, from the working folder, or a bundled name)."""
    if not files:
        return scenario
    entries = [str(Path(f).resolve()) if Path(f).is_file() else f for f in files]
    extended = scenario.model_copy(update={"knowledge": [*scenario.knowledge, *entries]})
    for entry, file in zip(entries, extended.knowledge_files()[len(scenario.knowledge) :], strict=True):
        if not file.is_file():
            raise ScenarioError(f"--knowledge {entry}: no such file here or among the bundled knowledge files")
    return extended


def load_scenario(path: Path) -> Scenario:
    """Load and validate a scenario file (its knowledge files must exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read the file ({exc})") from exc
    try:
        data = yaml.load(text, Loader=LineLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ScenarioError(f"{path}{where}: invalid YAML ({getattr(exc, 'problem', exc)})") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a YAML mapping with name, users, records, ...")
    try:
        scenario = Scenario.model_validate(strip_lines(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc: tuple[int | str, ...] = tuple(p for p in first["loc"] if isinstance(p, (int, str)))
        message = first["msg"]
        located = _WHERE.match(message)
        if located:  # a validator named the field: its path is relative to where the error arose
            loc += tuple(int(p) if p.isdigit() else p for p in located.group(1).split(".") if p)
            message = located.group(2)
        line = line_of(data, loc)
        field = ".".join(str(p) for p in loc) or "scenario"
        at = f":{line}" if line else ""
        raise ScenarioError(f"{path}{at}: {field}: {message}") from exc
    scenario._folder = path.resolve().parent
    _check_knowledge(path, scenario, data)
    return scenario


def bundled() -> dict[str, Path]:
    """The scenarios shipped with mark, by name."""
    return {p.stem: p for p in sorted(BUNDLED.glob("*.yaml"))}


def resolve(name_or_path: str) -> Path:
    """A bundled scenario name or a path to a file."""
    shipped = bundled()
    if name_or_path in shipped:
        return shipped[name_or_path]
    path = Path(name_or_path)
    if path.is_file():
        return path
    raise ScenarioError(f"no scenario {name_or_path!r}: give a file or one of {sorted(shipped)}")
