"""The embedded store's record cache never serves anything but what Chroma holds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from memory.config import Settings, load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import SHARED_USER, MemoryRecord, MemoryType, Source
from memory.record_cache import RecordCache
from tests.conftest import HASHING_CONFIG, NOW


def _stored(engine: MemoryEngine) -> dict[str, MemoryRecord]:
    """Every record as Chroma returns it (``scan`` never reads the cache)."""
    return {r.id: r for p in engine.store.partitions() for r in engine.store.scan(p)}


def _fill(engine: MemoryEngine) -> list[str]:
    ids = [
        engine.add(
            "Tropicamide drops come as 0.5 and 1 percent.", MemoryType.RESIDUAL, "sme", source=Source.SME, now=NOW
        ).record.id,
        engine.add("Alice wants doses in milligrams.", MemoryType.USER_QUESTION, "alice", now=NOW).record.id,
        engine.add("Atropine dilates the pupil for days.", MemoryType.LLM_RESPONSE, "alice", now=NOW).record.id,
        engine.add("Bob prefers short answers.", MemoryType.USER_QUESTION, "bob", now=NOW).record.id,
    ]
    return ids


def test_cached_reads_match_chroma_after_every_kind_of_write(engine: MemoryEngine) -> None:
    ids = _fill(engine)
    later = NOW + timedelta(hours=1)
    engine.search("tropicamide percent", "alice", now=later)  # fills the cache through queries
    engine.mark_injected([ids[0], ids[1]], now=later)
    engine.feedback(ids[1], correct=True, now=later)
    engine.feedback(ids[2], correct=False, now=later)
    engine.add("Tropicamide drops come as 0.5 and 1 percent strength.", MemoryType.RESIDUAL, "sme", now=later)
    engine.forget(ids[3], "bob", now=later)
    stored = _stored(engine)
    assert ids[3] not in stored and ids[3] not in engine.store.cache
    assert stored[ids[1]].recall_count == 1 and stored[ids[1]].validated_correct == 1
    held = [i for i in stored if i in engine.store.cache]
    assert held, "the searches and writes above should have cached records"
    for memory_id in held:
        assert engine.store.cache.get(memory_id) == stored[memory_id]
    for hit in engine.search("tropicamide percent", "alice", now=later).all_hits():
        assert hit.record == stored[hit.record.id]


def test_changing_a_returned_record_changes_nothing_stored(engine: MemoryEngine) -> None:
    ids = _fill(engine)
    first = engine.store.get(ids[1])
    assert first is not None
    first.recall_count = 99
    first.metadata["tampered"] = "yes"
    again = engine.store.get(ids[1])
    assert again is not None and again.recall_count == 0 and "tampered" not in again.metadata
    with pytest.raises(ValidationError):  # provenance is shared between copies, so it is frozen
        again.provenance.origin = "elsewhere"  # type: ignore[misc]


def test_a_record_listed_twice_comes_back_as_two_objects(engine: MemoryEngine) -> None:
    _fill(engine)
    vector = engine.embedder.embed(["tropicamide percent"])[0]
    first, second = engine.store.query_many(SHARED_USER, [vector, vector], 1)
    assert first[0][0] == second[0][0] and first[0][0] is not second[0][0]


def test_search_is_the_same_with_and_without_the_cache(tmp_path: object, settings: Settings) -> None:
    results = []
    for size in (0, 20_000):
        env = {"MARK_HOME": str(settings.home / f"c{size}"), "MARK_EMBEDDER": "hashing", "MARK_RECORD_CACHE": str(size)}
        eng = MemoryEngine.open(load_settings(env=env), embedder=HashingEmbedder(), config=HASHING_CONFIG)
        try:
            assert eng.store.cache.capacity == size
            for text in ["Alice takes 5 mg of drug X.", "Alice takes drug X at night.", "Alice is allergic to Y."]:
                eng.add(text, MemoryType.USER_QUESTION, "alice", now=NOW)
            hits = eng.search("when does Alice take drug X", "alice", k=3, now=NOW).all_hits()
            results.append([(h.record.text, round(h.score, 9)) for h in hits])
            assert len(eng.store.cache) == (0 if size == 0 else 3)
        finally:
            eng.close()
    assert results[0] == results[1] and results[0]


def test_lru_keeps_the_most_recently_used() -> None:
    cache = RecordCache(2)
    records = [
        MemoryRecord(text=f"memory {n}", type=MemoryType.USER_QUESTION, user_id="u", created_at=NOW, updated_at=NOW)
        for n in range(3)
    ]
    cache.put(records[:2])
    assert cache.get(records[0].id) == records[0]  # now the most recent
    cache.put(records[2:])
    assert records[1].id not in cache and records[0].id in cache and records[2].id in cache
    assert (cache.hits, cache.misses) == (1, 0)
    assert RecordCache(0).get(records[0].id) is None and len(RecordCache(0)) == 0
