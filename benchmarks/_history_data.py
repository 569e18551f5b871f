"""LongMemEval knowledge-update questions for ``bench_history``: split, evidence, histories, store copies, plot.

Not a benchmark itself; imported as ``_history_data`` by ``bench_history.py`` (see ``_common``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, say, summarize, temp_home, timed

from memory.config import Eviction, HistoryConfig, load_settings
from memory.engine import MemoryEngine
from memory.episodic import EventHit, History
from memory.eviction import Aggregate, Salience, to_evict
from memory.history import HistoryEvent, Speaker, event_id
from memory.ingest import ParsedHistory, parse_date, read_history

DATA_NAME = "longmemeval/longmemeval_s_knowledge_update.json"
SPLITS = ("dev", "test")
Key = tuple[str, int]  # (session id, turn index): how an evidence turn is matched to a stored event


def data_path(given: str | None) -> Path:
    """Where the data file should be: --data, $MARK_SHARED_DATA, or ../shared/data beside the clone."""
    if given:
        return Path(given)
    return Path(os.environ.get("MARK_SHARED_DATA", ROOT.parent / "shared" / "data")) / DATA_NAME


@dataclass
class Question:
    """One knowledge-update question, its split and its evidence turns."""

    qid: str
    split: str
    question: str
    answer: str
    asked: datetime
    evidence: frozenset[Key]
    record: dict[str, Any] = field(repr=False)

    @property
    def abstention(self) -> bool:
        """An ``_abs`` item: the gold answer says the history does not tell."""
        return self.qid.endswith("_abs")


def id_hash(question_id: str) -> str:
    """The split key: sha256 of the question id."""
    return hashlib.sha256(question_id.encode("utf-8")).hexdigest()


def evidence_of(record: Mapping[str, Any]) -> frozenset[Key]:
    """The (session id, turn index) of every turn marked ``has_answer``."""
    sessions = zip(record["haystack_session_ids"], record["haystack_sessions"], strict=True)
    return frozenset((str(sid), j) for sid, turns in sessions for j, t in enumerate(turns) if t.get("has_answer"))


def load_questions(path: Path, limit: int | None) -> list[Question]:
    """The questions in split order (sha256 of the id, ascending; first half dev); ``limit``: first N per split."""
    records = json.loads(path.read_text(encoding="utf-8"))
    records.sort(key=lambda r: id_hash(r["question_id"]))
    half = len(records) // 2
    questions = [
        Question(
            qid=r["question_id"],
            split=SPLITS[0] if i < half else SPLITS[1],
            question=r["question"],
            answer=str(r["answer"]),
            asked=_asked(r),
            evidence=evidence_of(r),
            record=r,
        )
        for i, r in enumerate(records)
    ]
    if limit:
        questions = [q for s in SPLITS for q in [q for q in questions if q.split == s][:limit]]
    return questions


def _asked(record: Mapping[str, Any]) -> datetime:
    asked = parse_date(record["question_date"], f"question {record['question_id']}")
    assert asked is not None
    return asked


def parse_histories(questions: Sequence[Question], folder: Path) -> tuple[dict[str, ParsedHistory], float]:
    """Each question's haystack through ``read_history``, one record file per question; and the seconds it took.

    One file per record, because ``read_history`` on the whole file keeps a session shared by several
    records only in the first of them (one history holds each session once).
    """
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, ParsedHistory] = {}
    seconds = 0.0
    for q in questions:
        path = folder / f"{q.qid}.json"
        path.write_text(json.dumps(q.record), encoding="utf-8")
        start = time.perf_counter()
        out[q.qid] = read_history(path)
        seconds += time.perf_counter() - start
    return out, seconds


# -- engines and the naive baseline ---------------------------------------------------------
NAIVE_BATCH = 512


def open_engine(home: Path, args: Any, embedder: Any = None) -> MemoryEngine:
    """An engine on a fresh ``home`` with the ONNX MiniLM (``--embed-threads``), sharing ``embedder`` if given.

    ``MARK_HISTORY_*`` settings in the environment (``MARK_HISTORY_EMBED_TOKENS``...) are passed on, so a
    setting can be tried without editing the defaults.
    """
    env = {k: v for k, v in os.environ.items() if k.startswith("MARK_HISTORY_")}
    env |= {"MARK_HOME": str(home), "MARK_EMBEDDER": "onnx", "MARK_EMBED_THREADS": str(args.embed_threads)}
    return MemoryEngine.open(load_settings(env=env), embedder=embedder)


def close_engine(engine: MemoryEngine) -> None:
    """Close the engine and drop Chroma's cached system for its folder."""
    api = engine.store.client.api
    engine.close()
    if hasattr(api, "clear_system_cache"):
        api.clear_system_cache()


def naive_baseline(
    engine: MemoryEngine, questions: Sequence[Question], histories: dict[str, Any], args: Any
) -> dict[str, Any]:
    """256-piece MiniLM embed + plain upserts (batches of 512), one collection per haystack, in a fresh store."""
    inner, rows = engine.embedder.inner, {}  # type: ignore[attr-defined]  # the uncached 256-piece model
    with temp_home("history-naive") as home:
        base = open_engine(home, args, embedder=engine.embedder)
        client = base.episodes.store.client
        try:
            for i, q in enumerate(questions[:: args.baseline_every]):
                texts = [t.text for t in histories[q.qid].turns]
                ids = [f"{q.qid}-{j}" for j in range(len(texts))]
                embed_s, vectors = timed(inner.embed, texts)
                start = time.perf_counter()
                collection = client.collection(f"{client.prefix}-naive-{i:03d}", True, metadata={"bench": "naive"})
                assert collection is not None
                for b in range(0, len(texts), NAIVE_BATCH):
                    part = slice(b, b + NAIVE_BATCH)
                    matrix = np.asarray(vectors[part], dtype=np.float32)
                    collection.upsert(ids=ids[part], embeddings=matrix, documents=texts[part])
                seconds = embed_s + time.perf_counter() - start
                rows[q.qid] = {"split": q.split, "turns": len(texts), "seconds": seconds, "embed_s": embed_s}
        finally:
            close_engine(base)
    return rows


# -- scoring -----------------------------------------------------------------------------------
def ranked_keys(hits: Sequence[EventHit]) -> list[Key]:
    """The (session, turn) of each hit, best first."""
    return [(h.event.session_id, h.event.turn) for h in hits]


def recall_by_split(questions: Sequence[Question], rankings: Mapping[str, Sequence[Key]]) -> dict[str, dict[str, Any]]:
    """Micro recall@5 / @10 of the evidence turns, and the share of questions with all of it in the top 10."""
    out: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        chosen = [q for q in questions if q.split == split and q.qid in rankings]
        scored = [q for q in chosen if q.evidence]
        total = sum(len(q.evidence) for q in scored)
        found5 = sum(len(q.evidence & set(rankings[q.qid][:5])) for q in scored)
        found10 = sum(len(q.evidence & set(rankings[q.qid][:10])) for q in scored)
        complete = sum(q.evidence <= set(rankings[q.qid][:10]) for q in scored)
        out[split] = {
            "questions": len(chosen),
            "with_evidence": len(scored),
            "evidence_turns": total,
            "recall@5": round(found5 / total, 4) if total else 0.0,
            "recall@10": round(found10 / total, 4) if total else 0.0,
            "all_found@10": round(complete / len(scored), 4) if scored else 0.0,
        }
    return out


def totals(rows: Mapping[str, dict[str, Any]], split: str | None) -> dict[str, Any]:
    """Turns/s over the chosen haystacks (sum of turns / sum of seconds), the median haystack's, the embed share."""
    chosen = [r for r in rows.values() if split is None or r["split"] == split]
    turns, spent = sum(r["turns"] for r in chosen), sum(r["seconds"] for r in chosen)
    rates = [r["turns"] / r["seconds"] for r in chosen if r["seconds"] > 0]
    return {
        "haystacks": len(chosen),
        "turns": turns,
        "seconds": round(spent, 1),
        "turns_per_s": round(turns / spent, 1) if spent else 0.0,
        "median_haystack_per_s": round(float(np.median(rates)), 1) if rates else 0.0,
        "embed_share": round(sum(r["embed_s"] for r in chosen) / spent, 3) if spent else 0.0,
    }


def normalise(text: str) -> str:
    """Lower case, punctuation to spaces, one space between words (for answer matching)."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


# -- copies of users ---------------------------------------------------------------------------
def copy_events(events: Sequence[HistoryEvent], user_id: str) -> list[HistoryEvent]:
    """The events as ``user_id``'s (ids recomputed; session, turn, dates, episode and accesses kept)."""
    return [
        e.model_copy(update={"id": event_id(user_id, e.session_id, e.turn, e.text), "user_id": user_id}) for e in events
    ]


def user_vectors(history: History, user_id: str, events: Sequence[HistoryEvent]) -> np.ndarray:
    """The stored vectors of ``events`` (float32, in the events' order)."""
    found = history.store.vectors(user_id, [e.id for e in events])
    return np.asarray([found[e.id] for e in events], dtype=np.float32)


def clone_user(
    src: History, dst: History, user_id: str, new_user: str, events: Sequence[HistoryEvent], vectors: np.ndarray
) -> None:
    """Write ``events`` (with their stored ``vectors``) as ``new_user``'s into ``dst``, with the episodes' state."""
    dst.store.add(copy_events(events, new_user), vectors)  # type: ignore[arg-type]  # rows of an array
    state = src.store.episode_state(user_id)
    if state:
        dst.store.save_episode_state(new_user, state)


def fill_synthetic(
    history: History, sources: Sequence[tuple[list[HistoryEvent], np.ndarray]], target: int, seed: int = 5
) -> dict[str, Any]:
    """Add synthetic users (copies of real haystacks, vectors jittered) until the store holds ``target`` events.

    Each copy's vectors are ``normalise(v + noise)`` with noise of norm ~0.1 (cosine to the source
    ~0.995), written straight through ``HistoryStore.add``: no embedding, no episodes.
    """
    rng = np.random.default_rng(seed)
    store = history.store
    held, users, written = store.count(), 0, 0
    start = time.perf_counter()
    while held < target and sources:
        events, vectors = sources[users % len(sources)]
        noise = rng.standard_normal(vectors.shape).astype(np.float32) * np.float32(0.1 / np.sqrt(vectors.shape[1]))
        jittered = vectors + noise
        jittered /= np.linalg.norm(jittered, axis=1, keepdims=True)
        written += len(store.add(copy_events(events, f"synthetic-{users:04d}"), jittered))
        held += len(events)
        users += 1
    seconds = time.perf_counter() - start
    return {
        "users": users,
        "events_written": written,
        "seconds": round(seconds, 1),
        "per_s": round(written / seconds) if seconds else 0,
        "events_now": store.count(),
    }


# -- pruning and answers ----------------------------------------------------------------------
BUDGETS = (100, 50, 25, 10)  # % of a user's events kept
SEED = Salience()  # no prior: seed 004's relevance
# name -> (policy, aggregate, salience); None: the product's settings (``HistoryConfig.relevance_*``)
POLICIES: dict[str, tuple[Eviction, Aggregate | None, Salience | None]] = {
    "lru": (Eviction.LRU, "max", SEED),
    "relevance-max": (Eviction.RELEVANCE, "max", SEED),
    "relevance-mean": (Eviction.RELEVANCE, "mean", SEED),
    "relevance": (Eviction.RELEVANCE, None, None),
}
TARGET = "relevance"  # the policy the pruning targets are judged on: mark's default relevance
QA_SYSTEM = (
    "You answer a user's question from excerpts of their past conversations, quoted as data. When the "
    "excerpts state a value more than once, the newest statement is the current one. Answer in one short "
    "sentence; if the excerpts do not tell, say so."
)


def variants(
    events: Sequence[HistoryEvent], vectors: Mapping[str, Sequence[float]], window: int, config: HistoryConfig
) -> list[tuple[str, int, set[str]]]:
    """(policy, budget %, evicted ids): none at 100 %, then each policy at each smaller budget.

    Relevance is measured against the stored vectors of the user's last ``window`` user turns; the
    ``relevance`` policy takes its aggregate and salience weights from ``config``.
    """
    asked = [vectors[e.id] for e in events if e.speaker is Speaker.USER][-window:]
    product = Salience(config.relevance_user_bonus, config.relevance_disclosure)
    out: list[tuple[str, int, set[str]]] = [("none", 100, set())]
    for name, (policy, aggregate, weights) in POLICIES.items():
        for pct in BUDGETS[1:]:
            budget = max(1, round(len(events) * pct / 100))
            how = aggregate or config.relevance_aggregate
            evicted = to_evict(events, budget, policy, vectors, asked, how, weights or product)
            out.append((name, pct, set(evicted)))
    return out


def _pruning_row(questions: Sequence[Question], rows: Sequence[dict[str, Any]], split: str) -> dict[str, Any]:
    mine = [r for r in rows if r["split"] == split]
    recall = recall_by_split(questions, {r["qid"]: r["keys"] for r in mine})[split]
    evidence = recall["evidence_turns"]
    return {
        **recall,
        "evidence_kept": round(sum(r["evidence_kept"] for r in mine) / evidence, 4) if evidence else 0.0,
        "kept_events": sum(r["kept"] for r in mine),
        "kept_kib": round(sum(r["bytes"] for r in mine) / 1024, 1),
        "latency": summarize([r["seconds"] for r in mine]),
    }


def summarize_pruning(questions: Sequence[Question], rows: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per ``policy|budget|split``: recall, evidence kept, kept events and text, search latency.

    Every policy's 100 % row is the ``none`` row (a budget of all events evicts nothing).
    """
    out: dict[str, dict[str, Any]] = {}
    for name in ("none", *POLICIES):
        for pct in (100,) if name == "none" else BUDGETS:
            source = "none" if pct == 100 else name
            chosen = [r for r in rows.values() if r["policy"] == source and r["budget"] == pct]
            for split in SPLITS:
                out[f"{name}|{pct}|{split}"] = _pruning_row(questions, chosen, split)
    return out


def verdicts(summary: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The pruning targets on the test split (judged on mark's ``relevance``; the seed's beside), printed."""
    none = summary["none|100|test"]["recall@10"]
    lru = summary["lru|25|test"]["recall@10"]
    out: dict[str, dict[str, Any]] = {"no pruning recall@10 >= 0.90": {"value": none, "met": none >= 0.90}}
    for name in (TARGET, "relevance-max"):
        rel = summary[f"{name}|25|test"]["recall@10"]
        kept = round(rel / none, 3) if none else 0.0
        out[f"{name} at 25% keeps >= 90% of it"] = {"value": kept, "met": bool(none) and rel >= 0.9 * none}
        out[f"{name} beats lru at 25%"] = {"value": [rel, lru], "met": rel > lru}
    for name, v in out.items():
        say(f"  TARGET (test) {name}: {'MET' if v['met'] else 'MISSED'} ({v['value']})")
    return out


def qa_prompt(q: Question, hits: Sequence[EventHit], chars: int) -> str:
    """The found events quoted as data, oldest first, each with its date; then the date and the question."""
    lines = []
    for h in sorted(hits, key=lambda h: h.event.position):
        when = f"{h.event.at:%Y-%m-%d}" if h.event.at else "undated"
        lines.append(f"[{when}] {h.event.speaker.value}: {h.event.text[:chars]}")
    quoted = "\n".join(lines)
    return f"Excerpts, oldest first:\n<<<\n{quoted}\n>>>\nToday is {q.asked:%Y-%m-%d}. Question: {q.question}"


# -- plot --------------------------------------------------------------------------------------
def plot_pruning(curves: Mapping[str, Sequence[tuple[int, float]]], title: str, path: Path) -> Path:
    """Recall@10 against the budget (% of a user's events kept), one line per policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    styles = [("--", "", 9), ("-", "o", 9), ("-", "s", 6), (":", "^", 5)]  # overlapping lines stay visible
    for (policy, points), (line, marker, size) in zip(curves.items(), styles, strict=False):
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, linestyle=line, marker=marker, markersize=size, label=policy)
    ax.set_xlabel("budget: % of the user's events kept")
    ax.set_ylabel("recall@10 of evidence turns")
    ax.set_xticks([10, 25, 50, 100])
    ax.set_ylim(0.0, 1.02)
    ax.invert_xaxis()
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
