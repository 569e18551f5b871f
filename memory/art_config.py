"""The settings of the fusion ART network (:mod:`memory.art`): pydantic only, so settings load without numpy."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Channel(StrEnum):
    """The input channels of the fusion ART network."""

    CONTENT = "content"
    TIME = "time"
    SPEAKER = "speaker"
    SESSION = "session"


class ChannelConfig(BaseModel):
    """One channel's choice weight ``gamma``, vigilance ``rho``, learning rate ``beta`` and test role."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    gamma: float = Field(ge=0.0, description="contribution to the choice T_j")
    rho: float = Field(ge=0.0, le=1.0, description="vigilance: the least match that resonates")
    beta: float = Field(default=1.0, ge=0.0, le=1.0, description="learning rate (1 = fast learning)")
    vigilant: bool = Field(default=True, description="whether the channel takes part in the resonance test")


class ArtConfig(BaseModel):
    """Per-channel settings, the choice parameter ``alpha`` and the time and session coding."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    alpha: float = Field(default=0.01, gt=0.0, description="choice parameter; small favours tight boxes")
    time_span_days: float = Field(default=3650.0, gt=0.0, description="days mapped onto [0, 1]")
    time_origin_days: float = Field(default=0.0, description="the day that maps to t = 0")
    session_buckets: int = Field(default=16, ge=1, le=4096, description="hashed one-hot size")
    # Defaults, measured with the 384-dim MiniLM embedder. Against a one-event template the content
    # match is 1 - mean|a_i - b_i| ~ 1 - sqrt((1 - cos) / (pi * d)): unrelated turns (cos ~ 0) score
    # ~0.971, turns on one topic (cos >= 0.4) >= 0.978, paraphrases (cos ~ 0.85) ~0.989. On a probe
    # of 5 topics x 4-8 turns, rho 0.975 put no two topics in one episode (0.972 did), and beta 0.5
    # (slow recode: the box widens halfway to each new turn) let an episode take several turns where
    # beta 1 closed it after one question and answer. Time spans ten years; rho 0.999 bounds an
    # episode's time box to 3.65 days, so events a few days apart land in different episodes; beta
    # 1 keeps that box the exact [first, last]. Speaker has gamma 0 and no test, so the user's and
    # the assistant's turns share an episode; session only breaks near-ties in the choice.
    content: ChannelConfig = ChannelConfig(gamma=1.0, rho=0.975, beta=0.5)
    time: ChannelConfig = ChannelConfig(gamma=0.5, rho=0.999)
    speaker: ChannelConfig = ChannelConfig(gamma=0.0, rho=0.0, vigilant=False)
    session: ChannelConfig = ChannelConfig(gamma=0.1, rho=0.0, vigilant=False)

    @model_validator(mode="after")
    def _some_choice(self) -> Self:
        if sum(self.channel(ch).gamma for ch in Channel) <= 0.0:
            raise ValueError("at least one channel needs gamma > 0")
        return self

    def channel(self, ch: Channel) -> ChannelConfig:
        """Return the settings of channel ``ch``."""
        return {
            Channel.CONTENT: self.content,
            Channel.TIME: self.time,
            Channel.SPEAKER: self.speaker,
            Channel.SESSION: self.session,
        }[ch]
