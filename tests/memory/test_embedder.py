"""Embedders: the offline ONNX MiniLM (real model file), the hashing embedder, and the cache."""

from __future__ import annotations

import pytest

from memory.config import EmbedderConfig, EmbedderKind
from memory.embedder import DIMENSION, CachedEmbedder, HashingEmbedder, OnnxMiniLM, build_embedder, cosine


@pytest.fixture(scope="module")
def minilm() -> OnnxMiniLM:
    return OnnxMiniLM()


def test_minilm_dimension_and_norm(minilm: OnnxMiniLM) -> None:
    (vector,) = minilm.embed(["Tropicamide is a mydriatic eye drop."])
    assert len(vector) == DIMENSION == 384
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-5)


def test_minilm_paraphrase_beats_unrelated(minilm: OnnxMiniLM) -> None:
    a, b, c = minilm.embed(
        ["The patient has a penicillin allergy.", "This patient is allergic to penicillin.", "Revenue grew in Q3."]
    )
    assert cosine(a, b) > 0.7 > 0.2 > cosine(a, c)


def test_minilm_batched_equals_single(minilm: OnnxMiniLM) -> None:
    texts = ["short", "a considerably longer sentence that forces padding of the short one in the batch"]
    batched = minilm.embed(texts)
    for text, vector in zip(texts, batched, strict=True):
        assert cosine(minilm.embed([text])[0], vector) > 0.9999


def test_minilm_length_sorted_batches_keep_input_order() -> None:
    small_batches = OnnxMiniLM(batch_size=2)
    texts = [
        "a long sentence about the maximum daily dose of paracetamol for adults with liver disease",
        "short",
        "a medium sentence about eye drops",
        "tiny one",
        "another long sentence, this one about the pupil dilating drops used before a retinal exam",
    ]
    vectors = small_batches.embed(texts)
    for text, vector in zip(texts, vectors, strict=True):
        assert cosine(small_batches.embed([text])[0], vector) > 0.9999


def test_embedder_threads_from_settings() -> None:
    from memory.config import load_settings

    settings = load_settings(env={"MARK_EMBED_THREADS": "2"})
    assert settings.embedder.threads == 2
    with pytest.raises(ValueError):
        load_settings(env={"MARK_EMBED_THREADS": "0"})


def test_cache_hits_by_text_hash() -> None:
    cached = CachedEmbedder(HashingEmbedder(), capacity=2)
    first = cached.embed(["alpha", "beta"])
    assert cached.embed(["beta", "alpha"]) == [first[1], first[0]]
    assert (cached.hits, cached.misses) == (2, 2)
    cached.embed(["gamma"])  # evicts the least recently used ("beta" was used after "alpha")
    assert len(cached._cache) == 2


def test_build_embedder_by_kind() -> None:
    assert build_embedder(EmbedderConfig(kind=EmbedderKind.HASHING)).name == "hashing-bow"
    assert build_embedder(EmbedderConfig(kind=EmbedderKind.ONNX)).dimension == 384
