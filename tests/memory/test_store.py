"""The Chroma store with the real ONNX embedder on a temporary folder."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.config import Settings
from memory.embedder import OnnxMiniLM
from memory.models import SHARED_USER, MemoryRecord, MemoryType
from memory.record_layout import from_metadata, metadata_where, to_metadata
from memory.store import SPACE, ChromaStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _record(text: str, user: str, kind: MemoryType = MemoryType.USER_QUESTION, **meta: str) -> MemoryRecord:
    return MemoryRecord(text=text, type=kind, user_id=user, created_at=T0, updated_at=T0, metadata=meta)


def test_round_trip_with_onnx_embedder(settings: Settings) -> None:
    store = ChromaStore(settings, OnnxMiniLM())
    try:
        records = [
            _record("Tropicamide drops are 0.5 to 1 percent.", "sme", MemoryType.RESIDUAL),
            _record("Atropine is a long acting cycloplegic.", "sme", MemoryType.RESIDUAL),
            _record("I like answers in decimals.", "alice", department="eye"),
        ]
        store.put(records)
        assert store.space(SHARED_USER) == SPACE == "cosine"
        assert store.space("alice") == "cosine"
        hits = store.query(SHARED_USER, store.embedder.embed(["strength of tropicamide eye drops"])[0], 2)
        assert hits[0][0].text == records[0].text
        assert 1.0 >= hits[0][1] > hits[1][1]
        assert store.get(records[2].id) == records[2]
        assert store.scan("alice", metadata_where({"department": "eye"}))[0].id == records[2].id
        assert store.scan("alice", metadata_where({"department": "ward"})) == []
    finally:
        store.close()


def test_metadata_flattening_is_lossless() -> None:
    record = _record("x is y", "u", department="cardio", location="Pune")
    meta = to_metadata(record)
    assert meta["meta_department"] == "cardio" and "superseded_by" not in meta
    assert from_metadata(record.id, record.text, meta) == record


def test_user_collections_do_not_spell_out_user_ids(settings: Settings) -> None:
    from memory.embedder import HashingEmbedder

    store = ChromaStore(settings, HashingEmbedder())
    try:
        name = store.collection_name("alice@example.com")
        assert "alice" not in name and name.startswith("mark-u-") and len(name) <= 63
        assert store.collection_name(SHARED_USER) == "mark-domain"
    finally:
        store.close()


def test_relevance_floor_keeps_unrelated_memories_out(settings: Settings) -> None:
    from memory.engine import MemoryEngine
    from memory.models import Source

    engine = MemoryEngine.open(settings, embedder=OnnxMiniLM())
    try:
        engine.add(
            "The standard error of a proportion is sqrt(p(1-p)/n).",
            MemoryType.RESIDUAL,
            "sme",
            source=Source.SME,
            now=T0,
        )
        engine.add(
            "Tropicamide eye drops are used at 0.5% to 1%.", MemoryType.RESIDUAL, "sme", source=Source.SME, now=T0
        )
        for _ in range(30):  # a memory recalled very often must still not be lifted into unrelated prompts
            engine.mark_injected([engine.list(types=[MemoryType.RESIDUAL])[0].id], now=T0)
        hits = engine.search("Which nerve supplies the lateral rectus muscle?", "bob", now=T0, k=3).all_hits()
        assert hits == []
        top = engine.search("strength of tropicamide drops", "bob", now=T0).top()
        assert [h.record.text for h in top] == ["Tropicamide eye drops are used at 0.5% to 1%."]
    finally:
        engine.close()


def test_knowledge_needs_a_higher_floor_than_a_preference(settings: Settings) -> None:
    """With the MiniLM, residual memories need cosine 0.5; a user's preference keeps the 0.3 floor."""
    from memory.embedder import cosine
    from memory.engine import MemoryEngine
    from memory.models import Source
    from memory.scoring import ScoringConfig, type_floors_for

    embedder = OnnxMiniLM()
    engine = MemoryEngine.open(settings, embedder=embedder)
    try:
        assert engine.config.scoring.floor_for("residual") == 0.5
        assert engine.config.scoring.floor_for("user_question") == engine.config.scoring.min_similarity == 0.3
        assert type_floors_for("hashing-bow") == {}
        question = "What is the adult dose of adrenaline in anaphylaxis?"
        fact = "Adrenaline ampoules are kept in the crash cart."
        preference = "I prefer drug doses in micrograms."
        q, f, p = embedder.embed([question, fact, preference])
        # the premise of this test: both memories sit between the two floors for this question
        assert 0.3 <= cosine(q, f) < 0.5 and 0.3 <= cosine(q, p) < 0.5, (cosine(q, f), cosine(q, p))
        engine.add(fact, MemoryType.RESIDUAL, "sme", source=Source.SME, now=T0)
        engine.add(preference, MemoryType.USER_QUESTION, "dana", now=T0)
        found = [h.record.text for h in engine.search(question, "dana", now=T0).all_hits()]
        assert found == [preference]
    finally:
        engine.close()
    with pytest.raises(ValueError, match="unknown memory type"):
        ScoringConfig(type_floors={"episodic": 0.5})


def test_a_memory_applies_to_the_question_it_was_learnt_from(settings: Settings) -> None:
    """An expert's answer to one question is not injected into a neighbouring question (MiniLM)."""
    from memory.embedder import cosine
    from memory.engine import MemoryEngine
    from memory.models import Provenance, Source

    embedder = OnnxMiniLM()
    engine = MemoryEngine.open(settings, embedder=embedder)
    try:
        assert engine.config.scoring.situation_floor == 0.7
        learnt = "Which drug is the first choice for absence seizures?\nA) Phenytoin\nB) Ethosuximide\nC) Carbamazepine"
        reworded = "For absence seizures, the drug of first choice is?\nA) Carbamazepine\nB) Phenytoin\nC) Ethosuximide"
        other = "Which drug is used for absence seizures in pregnancy?\nA) Valproate\nB) Lamotrigine\nC) Topiramate"
        memory = "For absence seizures the drug of first choice is ethosuximide."
        m, a, b, c = embedder.embed([memory, learnt, reworded, other])
        # the premise: the memory passes the relevance floor for the other question, and only the
        # situation check tells them apart
        assert cosine(m, c) >= 0.5 and cosine(a, c) < 0.7 <= cosine(a, b), (cosine(m, c), cosine(a, c), cosine(a, b))
        assert cosine(m, c) < engine.config.scoring.situation_bypass
        provenance = Provenance(conversation_id="c1", origin="mbs", situation=learnt)
        engine.add(memory, MemoryType.RESIDUAL, "sme", source=Source.SME, provenance=provenance, now=T0)
        general = "Lamotrigine is used for absence seizures in pregnancy."
        engine.add(general, MemoryType.RESIDUAL, "sme", source=Source.SME, now=T0)
        asked = (learnt, reworded, other)
        texts = {q: [h.record.text for h in engine.search(q, "dana", k=2, now=T0).all_hits()] for q in asked}
        assert texts[learnt][0] == texts[reworded][0] == memory
        assert texts[other] == [general]  # a memory without a situation passes on its relevance alone
    finally:
        engine.close()
