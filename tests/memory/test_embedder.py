"""Embedders: the offline ONNX MiniLM (real model file), the hashing embedder, and the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.config import EmbedderConfig, EmbedderKind
from memory.embedder import (
    BATCH_TOKENS,
    DIMENSION,
    CachedEmbedder,
    HashingEmbedder,
    OnnxMiniLM,
    build_embedder,
    cosine,
    int8,
)


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


class _Recording:
    """The model's runtime, recording the shape of every batch it runs."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.shapes = inner, []

    def run(self, feeds: dict[str, Any]) -> Any:
        self.shapes.append(feeds["input_ids"].shape)
        return self.inner.run(feeds)


def test_minilm_batches_texts_of_like_length_under_a_token_budget() -> None:
    model = OnnxMiniLM(batch_size=8)
    recording = _Recording(model._runtime)
    model._runtime = recording  # type: ignore[assignment]
    texts = [("word " * n).strip() for n in (3, 120, 7, 60, 3, 90, 15, 200, 1, 30, 5, 45)]
    vectors = model.embed(texts)
    assert len(vectors) == len(texts)
    widths = [width for _, width in recording.shapes]
    assert widths == sorted(widths)  # shortest first: each batch is padded to little
    assert sum(rows for rows, _ in recording.shapes) == len(texts)
    for rows, width in recording.shapes:
        assert rows <= 8 and (rows == 1 or rows * width <= BATCH_TOKENS)
    assert max(widths) == 202  # 200 words and [CLS] [SEP]: no padding to the tokenizer's maximum


def test_the_int8_model_is_built_once_and_agrees_with_the_float_one(minilm: OnnxMiniLM, tmp_path: Path) -> None:
    fast = minilm.quantized(tmp_path)
    texts = [
        "I've added 25 new postcards to my collection since I started again.",
        "How many postcards have I added since I started collecting again?",
        "The recipe needs two cups of flour and a pinch of salt.",
    ]
    exact, approx = minilm.embed(texts), fast.embed(texts)
    assert fast.name == f"{minilm.name}-dq8"
    assert all(cosine(a, b) > 0.95 for a, b in zip(exact, approx, strict=True))
    assert cosine(approx[0], approx[1]) > cosine(approx[0], approx[2])
    built = list(tmp_path.glob("minilm-dq8-*.onnx"))
    assert len(built) == 1
    stamp = built[0].stat().st_mtime_ns
    again = minilm.quantized(tmp_path)
    assert all(cosine(a, b) > 0.9999 for a, b in zip(again.embed(texts), approx, strict=True))
    # activations are quantized per batch, so a text's vector moves a little with its batch
    assert cosine(again.embed(texts[:1])[0], approx[0]) > 0.98
    assert [p.stat().st_mtime_ns for p in tmp_path.glob("minilm-dq8-*.onnx")] == [stamp]
    assert not list(tmp_path.glob("tmp*"))  # the work folder is gone


def test_an_unwritable_cache_falls_back_to_the_float_model(minilm: OnnxMiniLM, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    fallback = minilm.quantized(blocked / "cache")  # mkdir under a file fails
    text = ["The pupil dilates in the dark."]
    assert cosine(fallback.embed(text)[0], minilm.embed(text)[0]) > 0.9999


def test_int8_leaves_other_embedders_alone() -> None:
    hashing = CachedEmbedder(HashingEmbedder())
    assert int8(hashing) is hashing


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
