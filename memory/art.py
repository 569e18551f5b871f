"""Episodic memory by multi-channel fusion ART (MemoryART's episodic memory, spec feature A2).

A conversation event is coded on four channels (content, time, speaker, session); one user's events
are grouped into episodes, each held as one template per channel. With the fuzzy AND ``^``
(element-wise min) and the L1 norm ``|.|``, for episode j and channel k::

    choice     T_j    = sum_k gamma_k * |x^k ^ w_j^k| / (alpha + |w_j^k|)
    match      m_j^k  = |x^k ^ w_j^k| / |x^k|
    resonance  m_j^k >= rho_k for every channel that takes part in the test
    learning   w_j^k' = beta_k * (x^k ^ w_j^k) + (1 - beta_k) * w_j^k

Episodes are tried in decreasing choice (ties: the older episode first); one that fails the test is
reset and the next is tried; when none resonates the event founds a new episode with ``w = x``.
MemoryART divides the choice by the norm of a stored *event*; this module uses the classic fuzzy
ART template form above, so choice and match need only the episode templates.

Every channel is complement coded, ``x = [a, 1 - a]``, so ``|x|`` is constant per channel (half
the coded length): the embedding dimension d for content, 1 for time, 5 for speaker and
``session_buckets`` for session. Templates only shrink under ``^``, so they stay in [0, 1] and a
template is a box ``[lo, hi]``; with ``beta = 1`` it is the bounding box of its events and
``m = 1 - (box size after adding x) / |x|`` for any x. Time is an argument; nothing reads a clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from memory.art_config import ArtConfig, Channel, ChannelConfig
from memory.history import Speaker

__all__ = [
    "ArtConfig",
    "ArtNetwork",
    "Channel",
    "ChannelConfig",
    "Event",
    "LearnResult",
    "Recall",
    "complement_code",
    "encode_event",
    "session_bucket",
]

Vector = npt.NDArray[np.float64]
_TOLERANCE = 1e-9  # a match equal to rho up to rounding resonates
_STATE_VERSION = 1


@dataclass(frozen=True, eq=False)
class Event:
    """One complement-coded event: a vector per channel and its time in days."""

    channels: Mapping[Channel, Vector]
    at_days: float


class LearnResult(BaseModel):
    """Where ``learn`` put an event: match is against the episode before learning (1.0 when new)."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    created: bool
    match: dict[Channel, float]
    resets: int = Field(description="episodes tried and reset before the one that took the event")


class Recall(BaseModel):
    """One recalled episode with its choice value and per-channel match."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    choice: float
    match: dict[Channel, float]
    events: int
    first_days: float
    last_days: float


class _EpisodeState(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    episode_id: str
    events: int = Field(ge=1)
    first_days: float
    last_days: float
    templates: dict[Channel, list[float]]


class _NetworkState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    config: ArtConfig
    next_id: int = Field(ge=1)
    episodes: list[_EpisodeState]


def complement_code(a: Vector) -> Vector:
    """Return ``[a, 1 - a]``; for ``a`` in [0, 1] its L1 norm is ``len(a)``."""
    return np.concatenate([a, 1.0 - a])


def session_bucket(session_key: str, buckets: int) -> int:
    """Return the session's bucket: the first 8 bytes of sha256(key), big-endian, modulo ``buckets``."""
    digest = hashlib.sha256(session_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % buckets


def encode_event(
    embedding: Sequence[float] | Vector,
    at_days: float,
    speaker: Speaker | str,
    session_key: str,
    cfg: ArtConfig | None = None,
) -> Event:
    """Code an event on the four channels; norms ``|x|``: d, 1, 5 and ``session_buckets``.

    content = cc((v / |v|_2 + 1) / 2); time = cc(clip((at_days - origin) / span, 0, 1)); speaker =
    cc(one-hot over ``Speaker``); session = cc(one-hot of ``session_bucket``). Raises ``ValueError``
    for an empty, zero or non-finite embedding, a non-finite time or an unknown speaker.
    """
    c = ArtConfig() if cfg is None else cfg
    v = np.asarray(embedding, dtype=np.float64)
    length = float(np.linalg.norm(v)) if v.ndim == 1 else 0.0
    if not (0.0 < length < np.inf and np.isfinite(at_days)):
        raise ValueError(f"need a finite non-zero 1-D embedding and a finite time, got at_days={at_days}")
    t = min(1.0, max(0.0, (at_days - c.time_origin_days) / c.time_span_days))
    who, bucket = list(Speaker).index(Speaker(speaker)), session_bucket(session_key, c.session_buckets)
    return Event(
        channels={
            Channel.CONTENT: complement_code(np.clip((v / length + 1.0) / 2.0, 0.0, 1.0)),
            Channel.TIME: complement_code(np.array([t])),
            Channel.SPEAKER: complement_code(np.eye(len(Speaker))[who]),
            Channel.SESSION: complement_code(np.eye(c.session_buckets)[bucket]),
        },
        at_days=float(at_days),
    )


@dataclass
class _Episode:
    episode_id: str
    events: int
    first_days: float
    last_days: float

    def add(self, at_days: float) -> None:
        self.events += 1
        self.first_days, self.last_days = min(self.first_days, at_days), max(self.last_days, at_days)


class ArtNetwork:
    """One user's episodes: all channel templates side by side in one matrix (a row per episode).

    Learning an event costs one fuzzy AND over the ``(episodes, coded length)`` matrix.
    """

    def __init__(self, cfg: ArtConfig | None = None) -> None:
        self.cfg = ArtConfig() if cfg is None else cfg
        self._w: Vector = np.empty((0, 0))  # rows [:n] are live; spare rows let it grow by doubling
        self._norm: Vector = np.empty((0, len(Channel)))  # |w_j^k|, one column per channel
        self._starts: npt.NDArray[np.intp] = np.zeros(len(Channel), dtype=np.intp)  # channel offsets
        self._episodes: list[_Episode] = []
        self._next_id = 1

    def __len__(self) -> int:
        return len(self._episodes)

    def learn(self, event: Event) -> LearnResult:
        """Put the event into the first resonating episode by choice (learning), else a new one."""
        x = self._stack(event)
        settings = [self.cfg.channel(ch) for ch in Channel]
        choice, match = self._scores(x, np.array([c.gamma for c in settings]))
        ok = self._passes(match, {ch: c.rho for ch, c in zip(Channel, settings, strict=True) if c.vigilant})
        n = len(self)
        if not ok.any():
            self._append(x, event.at_days, f"ep-{self._next_id:06d}")
            self._next_id += 1
            return LearnResult(
                episode_id=self._episodes[-1].episode_id, created=True, match=dict.fromkeys(Channel, 1.0), resets=n
            )
        j = int(np.argmax(np.where(ok, choice, -np.inf)))  # first max: the older episode wins a tie
        ahead = (choice > choice[j]) | ((choice == choice[j]) & (np.arange(n) < j))
        result = LearnResult(
            episode_id=self._episodes[j].episode_id, created=False, match=_row(match, j), resets=int(ahead.sum())
        )
        beta = np.repeat([c.beta for c in settings], np.diff(self._starts, append=x.size))
        self._w[j] = beta * np.minimum(x, self._w[j]) + (1.0 - beta) * self._w[j]
        self._norm[j] = np.add.reduceat(self._w[j], self._starts)
        self._episodes[j].add(event.at_days)
        return result

    def resonate(
        self,
        event: Event,
        k: int = 5,
        *,
        channels: Collection[Channel] | None = None,
        rho: Mapping[Channel, float] | None = None,
    ) -> list[Recall]:
        """Return the top-k resonating episodes by choice, without learning or creating any.

        ``channels`` restricts both the choice (only their gammas count) and the resonance test
        (exactly these channels); by default the choice uses every channel and the test the config's
        vigilant ones. ``rho`` overrides the vigilance of channels in the test.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        x = self._stack(event)
        used = set(Channel) if channels is None else set(channels)
        tested = {ch for ch in Channel if self.cfg.channel(ch).vigilant} if channels is None else used
        overrides = dict(rho or {})
        if not set(overrides) <= tested or any(not 0.0 <= r <= 1.0 for r in overrides.values()):
            raise ValueError(f"rho must be within [0, 1] and only for tested channels {sorted(tested)}")
        gamma = np.array([self.cfg.channel(ch).gamma if ch in used else 0.0 for ch in Channel])
        choice, match = self._scores(x, gamma)
        candidates = np.flatnonzero(
            self._passes(match, {ch: overrides.get(ch, self.cfg.channel(ch).rho) for ch in tested})
        )
        top = candidates[np.argsort(-choice[candidates], kind="stable")[:k]]
        return [Recall(**vars(self._episodes[j]), choice=float(choice[j]), match=_row(match, j)) for j in top.tolist()]

    def template(self, episode_id: str, channel: Channel) -> Vector:
        """Return a copy of an episode's template on one channel; ``KeyError`` if unknown."""
        ids = [ep.episode_id for ep in self._episodes]
        if episode_id not in ids:
            raise KeyError(episode_id)
        return self._templates(ids.index(episode_id))[channel]

    def to_state(self) -> dict[str, Any]:
        """Return a JSON-serialisable snapshot (config, id counter, episodes with templates)."""
        episodes = [
            _EpisodeState(**vars(ep), templates={ch: v.tolist() for ch, v in self._templates(j).items()})
            for j, ep in enumerate(self._episodes)
        ]
        state = _NetworkState(version=_STATE_VERSION, config=self.cfg, next_id=self._next_id, episodes=episodes)
        return state.model_dump(mode="json")

    @classmethod
    def from_state(cls, state: Mapping[str, Any], cfg: ArtConfig | None = None) -> ArtNetwork:
        """Rebuild a network from ``to_state``; ``cfg`` replaces the stored config when given.

        Raises ``ValueError`` (pydantic's ``ValidationError`` included) for a malformed state.
        """
        parsed = _NetworkState.model_validate(state)
        if parsed.version != _STATE_VERSION:
            raise ValueError(f"unsupported state version {parsed.version}")
        net = cls(parsed.config if cfg is None else cfg)
        for ep in parsed.episodes:
            w = {ch: np.asarray(v, dtype=np.float64) for ch, v in ep.templates.items()}
            x = net._stack(Event(channels=w, at_days=ep.first_days))
            if np.any(x < 0.0) or np.any(x > 1.0) or any(e.episode_id == ep.episode_id for e in net._episodes):
                raise ValueError(f"episode {ep.episode_id}: template outside [0, 1] or duplicate id")
            net._append(x, ep.first_days, ep.episode_id)
            net._episodes[-1].events, net._episodes[-1].last_days = ep.events, ep.last_days
        net._next_id = max(parsed.next_id, len(net) + 1)
        return net

    def _stack(self, event: Event) -> Vector:
        """Concatenate the event's channels, checking each against this network's coding."""
        widths = [0, 2, 2 * len(Speaker), 2 * self.cfg.session_buckets]
        if len(self):
            widths[0] = int(self._starts[1])
        parts = [event.channels.get(ch) for ch in Channel]
        for ch, part, width in zip(Channel, parts, widths, strict=True):
            if part is None or part.ndim != 1 or part.size == 0 or part.size % 2 or (width and part.size != width):
                raise ValueError(f"event channel {ch} does not fit this network's coding")
        return np.concatenate([p for p in parts if p is not None])

    def _scores(self, x: Vector, gamma: Vector) -> tuple[Vector, Vector]:
        """Return the choice T_j (n,) and the matches m_j^k (n, channels) of x against every episode."""
        n = len(self)
        if n == 0:
            return np.zeros(0), np.zeros((0, len(Channel)))
        overlap = np.add.reduceat(np.minimum(self._w[:n], x), self._starts, axis=1)
        match = overlap / np.add.reduceat(x, self._starts)
        choice = (overlap / (self.cfg.alpha + self._norm[:n])) @ gamma
        return choice, match

    def _passes(self, match: Vector, test: Mapping[Channel, float]) -> npt.NDArray[np.bool_]:
        columns = [list(Channel).index(ch) for ch in test]
        ok: npt.NDArray[np.bool_] = np.all(match[:, columns] >= np.array(list(test.values())) - _TOLERANCE, axis=1)
        return ok

    def _append(self, x: Vector, at_days: float, episode_id: str) -> None:
        n = len(self)
        if n == 0:  # the first episode fixes the content width
            fixed = 2 + 2 * len(Speaker) + 2 * self.cfg.session_buckets
            self._starts = np.cumsum([0, x.size - fixed, 2, 2 * len(Speaker)]).astype(np.intp)
        if n == self._w.shape[0]:
            grown = np.empty((max(16, 2 * n), x.size))
            norms = np.empty((grown.shape[0], len(Channel)))
            if n:
                grown[:n], norms[:n] = self._w, self._norm
            self._w, self._norm = grown, norms
        self._w[n] = x
        self._norm[n] = np.add.reduceat(x, self._starts)
        self._episodes.append(_Episode(episode_id, 1, at_days, at_days))

    def _templates(self, j: int) -> dict[Channel, Vector]:
        parts = np.split(self._w[j], self._starts[1:])
        return {ch: part.copy() for ch, part in zip(Channel, parts, strict=True)}


def _row(match: Vector, j: int) -> dict[Channel, float]:
    return {ch: float(match[j, i]) for i, ch in enumerate(Channel)}
