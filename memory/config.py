"""Typed settings for mark, read from ``MARK_*`` environment variables and an optional ``mark.toml``.

Resolution order for every field: environment variable > ``mark.toml`` > default. The TOML file is
looked up at ``$MARK_CONFIG`` if set, else ``./mark.toml``, else ``$MARK_HOME/mark.toml``.
"""

from __future__ import annotations

import os
import tomllib
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from mark.errors import InputError
from memory.art_config import ArtConfig, ChannelConfig


class ConfigError(InputError):
    """Raised when settings cannot be resolved; the message says what to fix."""


class Provider(str, Enum):
    """Where chat completions come from."""

    LOCAL = "local"
    OPENAI = "openai"
    AZURE = "azure"
    REPLAY = "replay"


class SchemaMode(str, Enum):
    """How an OpenAI-compatible endpoint is asked for schema-constrained JSON.

    ``json_schema``: OpenAI structured outputs (OpenAI, Azure, vLLM, Ollama). ``json_object``:
    ``{"type": "json_object", "schema": ...}``, which ``llama_cpp.server`` needs (it rejects
    ``json_schema``).
    """

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"


class EmbedderKind(str, Enum):
    """Which embedder turns text into vectors."""

    ONNX = "onnx"
    OPENAI = "openai"
    HASHING = "hashing"


class ModelConfig(BaseModel):
    """Chat model settings shared by every provider."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = Provider.LOCAL
    model_path: Path | None = None
    model: str = "qwen2.5-coder-1.5b-instruct"
    base_url: str | None = None
    api_key: str | None = None
    api_version: str = "2024-06-01"
    azure_deployment: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1, le=32768)
    n_ctx: int = Field(default=4096, ge=512)
    n_threads: int = Field(default=1, ge=1, le=64)
    prompt_cache_mb: int = Field(default=0, ge=0, le=65536)  # llama.cpp states hold all logits: costly
    timeout_s: float = Field(default=120.0, gt=0)
    replay_file: Path | None = None
    schema_mode: SchemaMode = SchemaMode.JSON_SCHEMA


class EmbedderConfig(BaseModel):
    """Embedding settings."""

    model_config = ConfigDict(extra="forbid")

    kind: EmbedderKind = EmbedderKind.ONNX
    model: str = "text-embedding-3-small"
    base_url: str | None = None
    api_key: str | None = None
    batch_size: int = Field(default=32, ge=1, le=1024)
    cache_size: int = Field(default=4096, ge=0)
    threads: int = Field(default=1, ge=1, le=64)  # ONNX intra-op threads; 1 leaves a core to the model


class StoreConfig(BaseModel):
    """Where memories live: an embedded Chroma folder or a Chroma server."""

    model_config = ConfigDict(extra="forbid")

    chroma_url: str | None = None
    collection_prefix: str = "mark"
    # records kept in memory by an embedded store, about 2.4 KB each (0: none; a server store never caches)
    record_cache: int = Field(default=20_000, ge=0, le=10_000_000)
    # a Fernet key: memory text and audit details are encrypted at rest (memory.crypto); None: plain text
    encryption_key: SecretStr | None = None
    # postgresql://user:password@host:port/database: the audit log lives there, shared by mark on several
    # machines (memory.audit_pg); None: audit.sqlite3 in MARK_HOME, shared by the processes of one machine
    database_url: SecretStr | None = None

    @field_validator("database_url")
    @classmethod
    def _postgresql_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        if not value.get_secret_value().startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a PostgreSQL URL: postgresql://user:password@host:port/database")
        return value


class MaintenanceConfig(BaseModel):
    """When the chat and the lifecycle run maintenance (re-checks, retention) by themselves."""

    model_config = ConfigDict(extra="forbid")

    # at the start of `mark chat` and of each lifecycle run, when the last run is older (0: never)
    every_hours: float = Field(default=24.0, ge=0.0)


class KnowledgeConfig(BaseModel):
    """How documents become knowledge passages, and which passages a knowledge search returns.

    Sizes are tiktoken ``cl100k_base`` tokens (``memory.tokens``). A passage holds about
    ``chunk_tokens`` of one section; the next passage of the same section starts with the last
    ``overlap_tokens`` of the one before. The default suits the MiniLM embedder, which reads at most
    256 of its own word pieces (about 1.3 per cl100k token in English prose).
    """

    model_config = ConfigDict(extra="forbid")

    chunk_tokens: int = Field(default=160, ge=16, le=8192)
    overlap_tokens: int = Field(default=32, ge=0, le=4096)
    # passages less similar to the query than this are never returned (MiniLM; the hashing embedder needs ~0.1)
    min_similarity: float = Field(default=0.3, ge=-1.0, le=1.0)
    top_k: int = Field(default=5, ge=1, le=100)
    # what an answer gets (injected beside the memories) and what a fact check gets as evidence: at most
    # ``inject_k`` passages at least ``inject_min_similarity`` similar to the question and at most
    # ``inject_margin`` below the best one. 0.45 with the MiniLM: chosen on the dev split of
    # medmcqa-holdout and the tropicamide records (supporting passages 0.49-0.88, others <= 0.45).
    inject_k: int = Field(default=2, ge=0, le=20)
    inject_min_similarity: float = Field(default=0.45, ge=-1.0, le=1.0)
    inject_margin: float = Field(default=0.1, ge=0.0, le=2.0)
    max_file_mb: float = Field(default=50.0, gt=0.0)  # a larger file is refused before it is read
    max_pages: int = Field(default=2000, ge=1)  # a PDF with more pages is refused before it is parsed

    @model_validator(mode="after")
    def _overlap_below_size(self) -> KnowledgeConfig:
        if self.overlap_tokens >= self.chunk_tokens:
            raise ValueError(f"overlap_tokens ({self.overlap_tokens}) must be below chunk_tokens ({self.chunk_tokens})")
        return self


class Eviction(StrEnum):
    """What a per-user cap on history events removes first (seed 004)."""

    NONE = "none"  # nothing: the cap only consolidates
    LRU = "lru"  # the least recently used (returned by a search, else ingested)
    RELEVANCE = "relevance"  # the least similar to the user's recent queries


def _default_art() -> ArtConfig:
    # time measured in days since 2000-01-01 over a century, so dates of any era stay apart; a time
    # vigilance of 0.9999 bounds an episode to 3.65 days (1e-4 of the span), as memory.art explains
    return ArtConfig(
        time_origin_days=10957.0,
        time_span_days=36500.0,
        time=ChannelConfig(gamma=0.5, rho=0.9999),
    )


class Consent(StrEnum):
    """Whether ``mark chat`` keeps a session in memory (its turns, the memories and profile built from it)."""

    ASK = "ask"  # ask once at the start; no (the default answer) keeps nothing
    ALWAYS = "always"
    NEVER = "never"


class HistoryConfig(BaseModel):
    """Episodic events: ingestion, working memory, hybrid retrieval and retention (MemoryART, seed 004)."""

    model_config = ConfigDict(extra="forbid")

    working_turns: int = Field(default=8, ge=1, le=200)  # a chat's working memory (FIFO of recent turns)
    build_every: int = Field(default=4, ge=1, le=200)  # a chat builds memories after this many new turns
    # MiniLM word pieces embedded per event, and per assistant turn (long; BM25 indexes all of it). On the
    # LongMemEval dev split, R@10: 128/128 0.97, 128/32 0.96 at twice the ingest rate, 64/32 0.90
    embed_tokens: int = Field(default=128, ge=16, le=256)
    reply_embed_tokens: int = Field(default=32, ge=8, le=256)
    # events and their queries embedded with int8 arithmetic (memory.embedder.int8): ~1.7x the ingest rate
    embed_int8: bool = True
    batch: int = Field(default=512, ge=1, le=10_000)  # events embedded and written per batch
    depth: int = Field(default=50, ge=1, le=1000)  # candidates per retriever before fusion
    rrf_k: float = Field(default=60.0, gt=0.0)  # reciprocal rank fusion: 1 / (rrf_k + rank)
    lexical: bool = True  # BM25 beside the vectors
    time_aware: bool = True  # questions naming a time favour events of that time; "now" favours the newest
    episodes: bool = True  # a hit's episode is returned with it, and time questions resonate over episodes
    max_events: int | None = Field(default=None, ge=1)  # per user; over it, the eviction policy archives
    eviction: Eviction = Eviction.NONE
    relevance_window: int = Field(default=20, ge=1, le=10_000)  # recent user queries relevance is measured on
    # relevance = mean (or max) cosine with those queries + salience: a bonus for the user's own turns and
    # a weight on log(1 + first-person words and quantities); 0 and 0 with "max" is seed 004's policy.
    # Chosen on the LongMemEval dev split (evidence kept at a 25 % budget); reported on test.
    relevance_aggregate: Literal["max", "mean"] = "mean"
    relevance_user_bonus: float = Field(default=1.0, ge=0.0, le=10.0)
    relevance_disclosure: float = Field(default=0.2, ge=0.0, le=10.0)
    art: ArtConfig = Field(default_factory=_default_art)
    chat_consent: Consent = Consent.ASK  # may `mark chat` keep the session in memory


class ServerConfig(BaseModel):
    """``mark serve`` and ``mark mcp``: where they listen and where the API keys are."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8420, ge=1, le=65535)
    keys_file: Path | None = None  # default: keys.json in MARK_HOME
    max_body_kb: int = Field(default=512, ge=1)  # larger request bodies are refused


class Settings(BaseModel):
    """All of mark's settings in one typed object."""

    model_config = ConfigDict(extra="forbid")

    home: Path
    model: ModelConfig = ModelConfig()
    embedder: EmbedderConfig = EmbedderConfig()
    store: StoreConfig = StoreConfig()
    maintenance: MaintenanceConfig = MaintenanceConfig()
    knowledge: KnowledgeConfig = KnowledgeConfig()
    history: HistoryConfig = HistoryConfig()
    server: ServerConfig = ServerConfig()

    @property
    def store_path(self) -> Path:
        """Folder of the embedded Chroma store."""
        return self.home / "chroma"

    @property
    def audit_path(self) -> Path:
        """SQLite file of the audit log."""
        return self.home / "audit.sqlite3"

    @property
    def keys_path(self) -> Path:
        """The API keys file (hashes only)."""
        return self.server.keys_file or self.home / "keys.json"

    @property
    def models_dir(self) -> Path:
        """Folder where the packaged GGUF is assembled."""
        return self.home / "models"


# environment variable -> (section, field); section "" is the top level
_ENV_MAP: dict[str, tuple[str, str]] = {
    "MARK_HOME": ("", "home"),
    "MARK_PROVIDER": ("model", "provider"),
    "MARK_MODEL_PATH": ("model", "model_path"),
    "MARK_MODEL": ("model", "model"),
    "MARK_BASE_URL": ("model", "base_url"),
    "MARK_API_KEY": ("model", "api_key"),
    "MARK_API_VERSION": ("model", "api_version"),
    "MARK_AZURE_DEPLOYMENT": ("model", "azure_deployment"),
    "MARK_TEMPERATURE": ("model", "temperature"),
    "MARK_MAX_TOKENS": ("model", "max_tokens"),
    "MARK_N_CTX": ("model", "n_ctx"),
    "MARK_THREADS": ("model", "n_threads"),
    "MARK_PROMPT_CACHE_MB": ("model", "prompt_cache_mb"),
    "MARK_TIMEOUT": ("model", "timeout_s"),
    "MARK_REPLAY_FILE": ("model", "replay_file"),
    "MARK_SCHEMA_MODE": ("model", "schema_mode"),
    "MARK_EMBEDDER": ("embedder", "kind"),
    "MARK_EMBED_MODEL": ("embedder", "model"),
    "MARK_EMBED_BASE_URL": ("embedder", "base_url"),
    "MARK_EMBED_API_KEY": ("embedder", "api_key"),
    "MARK_EMBED_THREADS": ("embedder", "threads"),
    "MARK_CHROMA_URL": ("store", "chroma_url"),
    "MARK_RECORD_CACHE": ("store", "record_cache"),
    "MARK_ENCRYPTION_KEY": ("store", "encryption_key"),
    "MARK_DATABASE_URL": ("store", "database_url"),
    "MARK_CHAT_CONSENT": ("history", "chat_consent"),
    "MARK_MAINTAIN_EVERY_HOURS": ("maintenance", "every_hours"),
    "MARK_KNOWLEDGE_CHUNK_TOKENS": ("knowledge", "chunk_tokens"),
    "MARK_KNOWLEDGE_OVERLAP_TOKENS": ("knowledge", "overlap_tokens"),
    "MARK_KNOWLEDGE_MIN_SIMILARITY": ("knowledge", "min_similarity"),
    "MARK_KNOWLEDGE_TOP_K": ("knowledge", "top_k"),
    "MARK_SERVER_HOST": ("server", "host"),
    "MARK_SERVER_PORT": ("server", "port"),
    "MARK_KEYS_FILE": ("server", "keys_file"),
    "MARK_HISTORY_WORKING_TURNS": ("history", "working_turns"),
    "MARK_HISTORY_BUILD_EVERY": ("history", "build_every"),
    "MARK_HISTORY_EMBED_TOKENS": ("history", "embed_tokens"),
    "MARK_HISTORY_REPLY_TOKENS": ("history", "reply_embed_tokens"),
    "MARK_HISTORY_EMBED_INT8": ("history", "embed_int8"),
    "MARK_HISTORY_MAX_EVENTS": ("history", "max_events"),
    "MARK_HISTORY_EVICTION": ("history", "eviction"),
    "MARK_HISTORY_RELEVANCE_AGGREGATE": ("history", "relevance_aggregate"),
    "MARK_HISTORY_RELEVANCE_USER_BONUS": ("history", "relevance_user_bonus"),
    "MARK_HISTORY_RELEVANCE_DISCLOSURE": ("history", "relevance_disclosure"),
    "MARK_KNOWLEDGE_INJECT_K": ("knowledge", "inject_k"),
    "MARK_KNOWLEDGE_INJECT_MIN_SIMILARITY": ("knowledge", "inject_min_similarity"),
    "MARK_KNOWLEDGE_MAX_FILE_MB": ("knowledge", "max_file_mb"),
    "MARK_KNOWLEDGE_MAX_PAGES": ("knowledge", "max_pages"),
}


def default_home() -> Path:
    """The per-user data directory used when ``MARK_HOME`` is not set."""
    return Path(user_data_dir("mark", appauthor=False))


def _toml_path(env: dict[str, str]) -> Path | None:
    if env.get("MARK_CONFIG"):
        path = Path(env["MARK_CONFIG"]).expanduser()
        if not path.is_file():
            raise ConfigError(f"MARK_CONFIG points at {path}, which is not a file")
        return path
    for candidate in (Path("mark.toml"), Path(env.get("MARK_HOME", str(default_home()))) / "mark.toml"):
        if candidate.is_file():
            return candidate
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from exc


def load_settings(env: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Build :class:`Settings` from the environment, ``mark.toml`` and keyword overrides.

    ``overrides`` use the same (section, field) layout, e.g. ``model={"provider": "replay"}``.
    """
    env = dict(os.environ if env is None else env)
    path = _toml_path(env)
    data: dict[str, Any] = _read_toml(path) if path else {}
    for name, (section, field) in _ENV_MAP.items():
        value = env.get(name)
        if value is None or value == "":
            continue
        if section:
            data.setdefault(section, {})[field] = value
        else:
            data[field] = value
    for key, value in overrides.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    data.setdefault("home", str(default_home()))
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid setting {where}: {first['msg']} (from environment or {path})") from exc
    settings.home = settings.home.expanduser()
    return settings
