"""Synthetic memories for the engine benchmarks: sentences, MiniLM-shaped vectors, bulk loading.

Not a benchmark itself; imported as ``_dataset`` by the bench scripts (see ``_common``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
from _common import NOW, say

from memory.models import SEARCHABLE, SHARED_USER, MemoryRecord, MemoryType, Source, Status

# -- synthetic text -----------------------------------------------------------------------------
_DRUGS = [
    "tropicamide",
    "atropine",
    "metformin",
    "lisinopril",
    "amoxicillin",
    "warfarin",
    "heparin",
    "insulin glargine",
    "salbutamol",
    "prednisolone",
    "omeprazole",
    "ibuprofen",
    "paracetamol",
    "ciprofloxacin",
    "doxycycline",
    "furosemide",
    "digoxin",
    "amlodipine",
    "atorvastatin",
    "levothyroxine",
    "sertraline",
    "diazepam",
    "morphine",
    "ondansetron",
    "ceftriaxone",
    "vancomycin",
    "clopidogrel",
    "enoxaparin",
    "labetalol",
    "magnesium",
]
_GROUPS = [
    "adults",
    "children under five",
    "pregnant women",
    "elderly patients",
    "patients with renal failure",
    "patients with liver disease",
    "neonates",
    "athletes",
    "diabetic patients",
    "post-operative patients",
    "patients on dialysis",
    "smokers",
    "adolescents",
    "nursing mothers",
    "patients with asthma",
]
_TOPICS = [
    "dosage",
    "side effects",
    "contraindications",
    "interactions",
    "storage",
    "monitoring",
    "first aid",
    "diet",
    "exercise",
    "sleep",
    "vaccination",
    "screening",
    "follow-up visits",
    "lab results",
    "allergies",
]
_PREFS = [
    "short answers",
    "metric units",
    "plain language",
    "bullet points",
    "references to guidelines",
    "answers in Spanish",
    "examples",
    "step-by-step instructions",
    "dose tables",
    "no jargon",
]
_PEOPLE = ["my mother", "my son", "my grandfather", "my wife", "my daughter", "my neighbour", "my patient", "I"]
_CONDITIONS = [
    "hypertension",
    "type 2 diabetes",
    "asthma",
    "migraine",
    "chronic kidney disease",
    "atrial fibrillation",
    "hypothyroidism",
    "depression",
    "osteoarthritis",
    "glaucoma",
    "anaemia",
    "gout",
    "psoriasis",
    "COPD",
]


class SentenceMaker:
    """Varied, unique-on-request sentences in a medical-chatbot domain, per memory type."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self._seen: set[str] = set()

    def _pick(self, items: Sequence[str]) -> str:
        return items[int(self.rng.integers(len(items)))]

    def sentence(self, memory_type: MemoryType) -> str:
        n = int(self.rng.integers(1, 500))
        if memory_type is MemoryType.RESIDUAL:
            forms = [
                f"The usual dose of {self._pick(_DRUGS)} for {self._pick(_GROUPS)} is {n} mg per day.",
                f"{self._pick(_DRUGS).capitalize()} should be avoided in {self._pick(_GROUPS)} with "
                f"{self._pick(_CONDITIONS)}.",
                f"For {self._pick(_CONDITIONS)}, check {self._pick(_TOPICS)} every {n % 12 + 1} months.",
                f"{self._pick(_DRUGS).capitalize()} interacts with {self._pick(_DRUGS)}; "
                f"monitor {self._pick(_TOPICS)}.",
            ]
        elif memory_type is MemoryType.USER_QUESTION:
            forms = [
                f"{self._pick(_PEOPLE).capitalize()} takes {self._pick(_DRUGS)} for {self._pick(_CONDITIONS)}.",
                f"The user prefers {self._pick(_PREFS)} when asking about {self._pick(_TOPICS)}.",
                f"The user asked how {self._pick(_DRUGS)} affects {self._pick(_CONDITIONS)} in {self._pick(_GROUPS)}.",
                f"{self._pick(_PEOPLE).capitalize()} is allergic to {self._pick(_DRUGS)} since {1950 + n % 70}.",
            ]
        else:
            forms = [
                f"The assistant explained that {self._pick(_DRUGS)} {self._pick(_TOPICS)} matter for "
                f"{self._pick(_GROUPS)}.",
                f"The answer recommended asking a pharmacist about {self._pick(_DRUGS)} and {self._pick(_DRUGS)}.",
                f"The assistant said {self._pick(_CONDITIONS)} needs {self._pick(_TOPICS)} review after {n} days.",
                f"The reply listed {n % 9 + 2} options for {self._pick(_CONDITIONS)} including {self._pick(_DRUGS)}.",
            ]
        return forms[int(self.rng.integers(len(forms)))]

    def unique(self, memory_type: MemoryType) -> str:
        """A sentence never returned by ``unique`` before (a suffix breaks rare repeats)."""
        text = self.sentence(memory_type)
        while text in self._seen:
            text = f"{self.sentence(memory_type)[:-1]} (note {int(self.rng.integers(10**6))})."
        self._seen.add(text)
        return text


# -- synthetic memories -------------------------------------------------------------------------
PERSONAL = (MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE)
_STATUSES = [Status.ACTIVE, Status.PROBATIONARY, Status.SUPERSEDED, Status.ARCHIVED]
_STATUS_P = [0.90, 0.04, 0.04, 0.02]


class VectorPool:
    """Real ONNX MiniLM vectors of a few thousand generated sentences, jittered per memory.

    Bulk-loaded memories get ``normalise(pool[j] + noise)`` (cosine to the pool vector about 0.9), so the
    stored vectors live where MiniLM puts real sentences and ONNX query vectors land among them,
    without paying the embedding cost for every one of 100k memories.
    """

    def __init__(self, embed: Callable[[list[str]], list[list[float]]], maker: SentenceMaker, size: int) -> None:
        self.texts: dict[MemoryType, list[str]] = {}
        self.vectors: dict[MemoryType, np.ndarray] = {}
        per_type = max(1, size // len(MemoryType))
        for memory_type in MemoryType:
            texts = [maker.unique(memory_type) for _ in range(per_type)]
            self.texts[memory_type] = texts
            self.vectors[memory_type] = np.asarray(embed(texts), dtype=np.float32)

    def draw(self, memory_type: MemoryType, count: int, rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
        """``count`` (text, jittered vector) pairs of one type."""
        pool = self.vectors[memory_type]
        picks = rng.integers(len(pool), size=count)
        noise = rng.standard_normal((count, pool.shape[1])).astype(np.float32) * (0.48 / np.sqrt(pool.shape[1]))
        vectors = pool[picks] + noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = [self.texts[memory_type][int(i)] for i in picks]
        return texts, vectors


def search_key(partition: str, memory_type: MemoryType, status: Status) -> str:
    """A selective composite key (partition|type|searchable) for the search prototype's ``where``."""
    return f"{partition}|{memory_type.value}|{int(status in SEARCHABLE)}"


def make_record(
    text: str, memory_type: MemoryType, user_id: str, rng: np.random.Generator, status: Status | None = None
) -> MemoryRecord:
    """A plausible stored memory: age up to a year, a few recalls, mostly active.

    It carries one user-metadata key, ``skey`` (stored as ``meta_skey``), used only by the search
    prototype to try a selective composite ``where``; the engine ignores it.
    """
    created = NOW - timedelta(days=float(rng.uniform(0, 365)))
    chosen = status or _STATUSES[int(rng.choice(len(_STATUSES), p=_STATUS_P))]
    partition = SHARED_USER if memory_type is MemoryType.RESIDUAL else user_id
    return MemoryRecord(
        text=text,
        type=memory_type,
        user_id=user_id,
        source=Source.SME if memory_type is MemoryType.RESIDUAL else Source.USER,
        recall_count=int(rng.integers(0, 6)),
        veracity=float(rng.uniform(0.5, 0.95)),
        veracity_at=created,
        status=chosen,
        created_at=created,
        updated_at=created,
        metadata={"skey": search_key(partition, memory_type, chosen)},
    )


def skewed_users(user_ids: Sequence[str], every: int) -> list[str]:
    """Every ``every``-th user (0: none) has a skewed type mix, see :func:`build_dataset`."""
    return list(user_ids[every - 1 :: every]) if every else []


def build_dataset(
    pool: VectorPool, users: int, per_user: int, residual: int, seed: int, skew_every: int = 0
) -> tuple[list[MemoryRecord], np.ndarray, list[str]]:
    """``users`` x ``per_user`` personal memories + ``residual`` domain memories.

    Users hold half user_question, half llm_response memories, except every ``skew_every``-th user
    (see :func:`skewed_users`), who holds 5 user_question and ``per_user - 5`` llm_response memories.
    """
    rng = np.random.default_rng(seed)
    user_ids = [f"user-{i:05d}" for i in range(users)]
    skewed = set(skewed_users(user_ids, skew_every))
    records: list[MemoryRecord] = []
    chunks: list[np.ndarray] = []
    for user_id in user_ids:
        questions = 5 if user_id in skewed else per_user // 2
        halves = ((MemoryType.USER_QUESTION, questions), (MemoryType.LLM_RESPONSE, per_user - questions))
        for memory_type, count in halves:
            texts, vectors = pool.draw(memory_type, count, rng)
            records.extend(make_record(t, memory_type, user_id, rng) for t in texts)
            chunks.append(vectors)
    texts, vectors = pool.draw(MemoryType.RESIDUAL, residual, rng)
    records.extend(make_record(t, MemoryType.RESIDUAL, "sme", rng) for t in texts)  # stored in SHARED_USER
    chunks.append(vectors)
    return records, np.concatenate(chunks), user_ids


def bulk_load(store: Any, records: Sequence[MemoryRecord], vectors: np.ndarray, chunk: int = 4500) -> float:
    """Write records with their vectors straight into the store (no audit events); returns seconds."""
    start = time.perf_counter()
    for i in range(0, len(records), chunk):
        store.put(records[i : i + chunk], vectors[i : i + chunk])
        if (i // chunk) % 5 == 4:
            say(f"    loaded {i + chunk:,} / {len(records):,} ({time.perf_counter() - start:.0f} s)")
    return time.perf_counter() - start
