"""Tests for memory.art: fusion ART episodes, with the arithmetic done by hand in the comments.

Content embeddings are 2-dimensional unit vectors, so a content code is 4 numbers:
  (1, 0)      -> a = ((1+1)/2, (0+1)/2) = (1, .5)    -> x = [1, .5, 0, .5]
  (-1, 0)     -> a = (0, .5)                           -> x = [0, .5, 1, .5]
  (0.6, 0.8)  -> a = (.8, .9)                          -> x = [.8, .9, .2, .1]
Every content code has |x| = 2 (the dimension). With time_span_days = 100, day 10 codes as
[.1, .9], day 50 as [.5, .5]; |x| = 1.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from memory.art import (
    ArtConfig,
    ArtNetwork,
    Channel,
    ChannelConfig,
    Event,
    complement_code,
    encode_event,
    session_bucket,
)
from memory.history import Speaker

C, T, SP, SE = Channel.CONTENT, Channel.TIME, Channel.SPEAKER, Channel.SESSION

# alpha .1; content: gamma 1, rho .6; time: gamma .1, rho .9; speaker and session: no weight, no test.
CFG = ArtConfig(
    alpha=0.1,
    time_span_days=100.0,
    content=ChannelConfig(gamma=1.0, rho=0.6, beta=1.0),
    time=ChannelConfig(gamma=0.1, rho=0.9, beta=1.0),
    speaker=ChannelConfig(gamma=0.0, rho=0.0, vigilant=False),
    session=ChannelConfig(gamma=0.0, rho=0.0, vigilant=False),
)


def ev(v: list[float], day: float, cfg: ArtConfig = CFG, speaker: str = "user", session: str = "s1") -> Event:
    return encode_event(v, day, speaker, session, cfg)


def approx(values: list[float]) -> Any:
    return pytest.approx(values, abs=1e-12)


# --- coding -------------------------------------------------------------------------------------


def test_complement_code_keeps_the_norm_at_the_dimension() -> None:
    x = complement_code(np.array([0.2, 0.7, 1.0]))
    assert x.tolist() == approx([0.2, 0.7, 1.0, 0.8, 0.3, 0.0])
    assert x.sum() == pytest.approx(3.0)  # .2+.7+1 + .8+.3+0 = 3 = len(a)


def test_encode_event_codes_every_channel_by_hand() -> None:
    # [3, 4] / 5 = (.6, .8) -> a = (.8, .9) -> [.8, .9, .2, .1], |x| = 2
    e = encode_event([3.0, 4.0], 25.0, Speaker.ASSISTANT, "s1", CFG)
    assert e.channels[C].tolist() == approx([0.8, 0.9, 0.2, 0.1])
    assert e.channels[C].sum() == pytest.approx(2.0)
    assert e.channels[T].tolist() == approx([0.25, 0.75])  # 25 / 100
    # speaker vocabulary (user, assistant, sme, system, other): assistant is index 1; |x| = 5
    assert e.channels[SP].tolist() == [0, 1, 0, 0, 0, 1, 0, 1, 1, 1]
    # session: sha256("s1")[:8] big-endian mod 16, recomputed here; |x| = 16 buckets
    bucket = int.from_bytes(hashlib.sha256(b"s1").digest()[:8], "big") % 16
    assert session_bucket("s1", 16) == bucket
    assert e.channels[SE].shape == (32,)
    assert e.channels[SE][bucket] == 1.0
    assert e.channels[SE].sum() == 16.0
    assert e.at_days == 25.0


def test_time_is_clipped_to_the_span_and_shifted_by_the_origin() -> None:
    assert ev([1, 0], 150.0).channels[T].tolist() == [1.0, 0.0]  # 1.5 -> 1
    assert ev([1, 0], -5.0).channels[T].tolist() == [0.0, 1.0]  # -.05 -> 0
    shifted = ArtConfig(time_span_days=100.0, time_origin_days=1000.0)
    assert ev([1, 0], 1030.0, shifted).channels[T].tolist() == approx([0.3, 0.7])  # (1030-1000)/100


@pytest.mark.parametrize("embedding", [[0.0, 0.0], [float("nan"), 1.0], [float("inf"), 1.0], [], [[1.0, 0.0]]])
def test_encode_event_rejects_bad_embeddings(embedding: list[float]) -> None:
    with pytest.raises(ValueError, match="embedding"):
        encode_event(embedding, 1.0, "user", "s1", CFG)


def test_encode_event_rejects_a_bad_time_and_an_unknown_speaker() -> None:
    with pytest.raises(ValueError, match="time"):
        encode_event([1.0, 0.0], float("nan"), "user", "s1", CFG)
    with pytest.raises(ValueError, match="robot"):
        encode_event([1.0, 0.0], 1.0, "robot", "s1", CFG)


# --- choice and match ---------------------------------------------------------------------------


def test_choice_and_match_against_one_template_by_hand() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))  # template: content [1, .5, 0, .5], time [.1, .9]
    # input (.6, .8) at day 20: content [.8, .9, .2, .1], time [.2, .8]
    #   content: x ^ w = [.8, .5, 0, .1] -> 1.4; match 1.4 / 2 = .7; choice 1.4 / (.1 + 2) = .666667
    #   time:    x ^ w = [.1, .8]        -> .9;  match .9 / 1 = .9;  choice .9 / (.1 + 1) = .818182
    #   speaker and session are identical: match 1 (their gamma is 0, so no choice)
    #   T = 1 * .666667 + .1 * .818182 = .748485; resonance: .7 >= .6 and .9 >= .9
    (recall,) = net.resonate(ev([0.6, 0.8], 20.0), k=5)
    assert recall.episode_id == "ep-000001"
    assert recall.match == {C: pytest.approx(0.7), T: pytest.approx(0.9), SP: 1.0, SE: 1.0}
    assert recall.choice == pytest.approx(0.748485, abs=1e-6)
    assert (recall.events, recall.first_days, recall.last_days) == (1, 10.0, 10.0)


# --- resonance, learning, reset, new category ---------------------------------------------------


def test_close_input_joins_and_fast_learning_takes_the_fuzzy_and() -> None:
    net = ArtNetwork(CFG)
    first = net.learn(ev([1, 0], 10.0))
    assert (first.episode_id, first.created, first.resets) == ("ep-000001", True, 0)
    # (.6, .8) at day 20: content match 1.4 / 2 = .7 >= .6; time [.2, .8] ^ [.1, .9] = [.1, .8] -> .9 >= .9
    result = net.learn(ev([0.6, 0.8], 20.0))
    assert (result.episode_id, result.created, result.resets) == ("ep-000001", False, 0)
    assert result.match[C] == pytest.approx(0.7)
    assert result.match[T] == pytest.approx(0.9)
    # beta = 1: w' = x ^ w
    assert net.template("ep-000001", C).tolist() == approx([0.8, 0.5, 0.0, 0.1])
    assert net.template("ep-000001", T).tolist() == approx([0.1, 0.8])  # the time box [.1, .2]
    assert len(net) == 1
    (recall,) = net.resonate(ev([1, 0], 15.0))
    assert (recall.events, recall.first_days, recall.last_days) == (2, 10.0, 20.0)


def test_slow_learning_moves_the_template_half_way() -> None:
    half = CFG.model_copy(update={"content": ChannelConfig(gamma=1.0, rho=0.6, beta=0.5)})
    half = half.model_copy(update={"time": ChannelConfig(gamma=0.1, rho=0.9, beta=0.5)})
    net = ArtNetwork(half)
    net.learn(ev([1, 0], 10.0, half))
    net.learn(ev([0.6, 0.8], 20.0, half))
    # content: .5 * [.8, .5, 0, .1] + .5 * [1, .5, 0, .5] = [.9, .5, 0, .3]
    assert net.template("ep-000001", C).tolist() == approx([0.9, 0.5, 0.0, 0.3])
    # time: .5 * [.1, .8] + .5 * [.1, .9] = [.1, .85]
    assert net.template("ep-000001", T).tolist() == approx([0.1, 0.85])


def test_new_category_when_nothing_resonates() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))
    # (-1, 0): [0, .5, 1, .5] ^ [1, .5, 0, .5] = [0, .5, 0, .5] -> 1; match .5 < .6: reset, then a new episode
    result = net.learn(ev([-1, 0], 10.0))
    assert (result.episode_id, result.created, result.resets) == ("ep-000002", True, 1)
    assert result.match == dict.fromkeys(Channel, 1.0)
    assert net.template("ep-000002", C).tolist() == approx([0.0, 0.5, 1.0, 0.5])  # template = input
    assert len(net) == 2


def test_reset_of_the_best_choice_lets_the_next_one_resonate() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))  # ep1: content [1, .5, 0, .5], time [.1, .9]
    # (.6, .8) at day 50: content .7 passes, time [.5, .5] ^ [.1, .9] = [.1, .5] -> .6 < .9 fails
    assert net.learn(ev([0.6, 0.8], 50.0)).episode_id == "ep-000002"  # ep2: [.8, .9, .2, .1], [.5, .5]
    # input (1, 0) at day 52: content [1, .5, 0, .5], time [.52, .48]
    #   ep1: content ^ = [1, .5, 0, .5] -> 2, match 1, choice 2 / 2.1 = .952381
    #        time ^ = [.1, .48] -> .58, match .58 < .9 (fails), choice .58 / 1.1 = .527273
    #        T1 = .952381 + .1 * .527273 = 1.005108
    #   ep2: content ^ = [.8, .5, 0, .1] -> 1.4, match .7 (passes), choice 1.4 / 2.1 = .666667
    #        time ^ = [.5, .48] -> .98, match .98 (passes), choice .98 / 1.1 = .890909
    #        T2 = .666667 + .1 * .890909 = .755758
    #   T1 > T2: ep1 is chosen first and reset, ep2 resonates.
    result = net.learn(ev([1, 0], 52.0))
    assert (result.episode_id, result.created, result.resets) == ("ep-000002", False, 1)
    assert result.match[C] == pytest.approx(0.7)
    assert result.match[T] == pytest.approx(0.98)
    assert net.template("ep-000002", C).tolist() == approx([0.8, 0.5, 0.0, 0.1])
    assert net.template("ep-000002", T).tolist() == approx([0.5, 0.48])  # the time box [.5, .52]
    assert net.template("ep-000001", C).tolist() == approx([1.0, 0.5, 0.0, 0.5])  # untouched


def test_a_tie_goes_to_the_older_episode() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))
    net.learn(ev([1, 0], 60.0))  # same content; time [.6, .4] ^ [.1, .9] = [.1, .4] -> .5 < .9: ep2
    # with time out of the recall, both score 2 / 2.1 on content alone: the older one comes first
    recalls = net.resonate(ev([1, 0], 30.0), channels={C})
    assert [r.episode_id for r in recalls] == ["ep-000001", "ep-000002"]
    assert recalls[0].choice == recalls[1].choice == pytest.approx(2 / 2.1)


# --- recall -------------------------------------------------------------------------------------


def test_recall_changes_nothing() -> None:
    net = ArtNetwork(CFG)
    assert net.resonate(ev([1, 0], 10.0)) == []  # empty network
    for v, day in [([1, 0], 10.0), ([0.6, 0.8], 20.0), ([-1, 0], 50.0)]:
        net.learn(ev(v, day))
    before = net.to_state()
    for v, day in [([1, 0], 12.0), ([0.6, 0.8], 90.0), ([-1, 0], 50.0), ([0, 1], 0.0)]:
        net.resonate(ev(v, day), k=3)
        net.resonate(ev(v, day), k=3, channels={C})
    assert net.to_state() == before
    assert len(net) == 2


def test_recall_on_content_and_time_finds_the_episode_of_the_right_time() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))  # ep1: time [.1, .9]
    net.learn(ev([1, 0], 60.0))  # ep2: time [.6, .4] (same content, time match .5 < .9)
    # query day 61, speaker and session of another conversation:
    #   ep1 time [.61, .39] ^ [.1, .9] = [.1, .39] -> .49 < .9; ep2 [.6, .39] -> .99 >= .9
    query = ev([1, 0], 61.0, speaker="assistant", session="other")
    (recall,) = net.resonate(query, k=5, channels={C, T})
    assert recall.episode_id == "ep-000002"
    assert recall.match[T] == pytest.approx(0.99)
    assert recall.choice == pytest.approx(2 / 2.1 + 0.1 * 0.99 / 1.1)
    # a looser time vigilance admits both, and the time term of the choice ranks ep2 first:
    #   T2 = .952381 + .1 * .99 / 1.1 = 1.042381 > T1 = .952381 + .1 * .49 / 1.1 = .996926
    loose = net.resonate(query, k=5, channels={C, T}, rho={T: 0.4})
    assert [r.episode_id for r in loose] == ["ep-000002", "ep-000001"]
    assert loose[1].choice == pytest.approx(2 / 2.1 + 0.1 * 0.49 / 1.1)
    assert [r.episode_id for r in net.resonate(query, k=1, channels={C, T}, rho={T: 0.4})] == ["ep-000002"]


def test_recall_rejects_bad_arguments() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))
    with pytest.raises(ValueError, match="k must be"):
        net.resonate(ev([1, 0], 10.0), k=0)
    with pytest.raises(ValueError, match="rho"):
        net.resonate(ev([1, 0], 10.0), channels={C}, rho={T: 0.5})  # time is not in the test
    with pytest.raises(ValueError, match="rho"):
        net.resonate(ev([1, 0], 10.0), rho={C: 1.5})


def test_an_event_of_another_coding_is_rejected() -> None:
    net = ArtNetwork(CFG)
    net.learn(ev([1, 0], 10.0))
    with pytest.raises(ValueError, match="content"):
        net.learn(ev([1, 0, 0], 10.0))  # 3-dim content against 2-dim templates
    other = ArtConfig(session_buckets=8)
    with pytest.raises(ValueError, match="session"):
        net.learn(ev([1, 0], 10.0, other))
    with pytest.raises(KeyError):
        net.template("ep-000099", C)


def test_vectorised_scores_equal_the_formulas_episode_by_episode() -> None:
    rng = np.random.default_rng(7)
    cfg = ArtConfig(
        alpha=0.05,
        time_span_days=100.0,
        content=ChannelConfig(gamma=1.0, rho=0.9, beta=0.5),
        time=ChannelConfig(gamma=0.3, rho=0.5, beta=0.7),
        speaker=ChannelConfig(gamma=0.2, rho=0.0, vigilant=False),
        session=ChannelConfig(gamma=0.1, rho=0.0, vigilant=False),
    )
    net = ArtNetwork(cfg)
    speakers = list(Speaker)
    for i in range(60):
        net.learn(encode_event(rng.normal(size=6), float(rng.uniform(0, 100)), speakers[i % 5], f"s{i % 3}", cfg))
    assert len(net) > 16  # grown past the first block of rows
    query = encode_event(rng.normal(size=6), 40.0, "user", "s1", cfg)
    recalls = net.resonate(query, k=len(net), rho={C: 0.0, T: 0.0})
    assert len(recalls) == len(net)
    for r in recalls:
        expected_choice = 0.0
        for ch in Channel:
            x, w = query.channels[ch], net.template(r.episode_id, ch)
            overlap = np.minimum(x, w).sum()
            assert r.match[ch] == pytest.approx(overlap / x.sum())
            expected_choice += cfg.channel(ch).gamma * overlap / (cfg.alpha + w.sum())
        assert r.choice == pytest.approx(expected_choice)
    assert [r.choice for r in recalls] == sorted((r.choice for r in recalls), reverse=True)


# --- defaults -----------------------------------------------------------------------------------


def test_defaults_put_an_exchange_in_one_episode_and_split_by_days() -> None:
    cfg = ArtConfig()
    assert (cfg.speaker.gamma, cfg.speaker.vigilant, cfg.session.vigilant) == (0.0, False, False)
    net = ArtNetwork(cfg)
    net.learn(encode_event([1.0, 0.0], 100.0, "user", "s1", cfg))
    # the assistant's reply, same content, another session, an hour later: speaker and session are not tested
    assert net.learn(encode_event([1.0, 0.0], 100.04, "assistant", "s2", cfg)).episode_id == "ep-000001"
    # 3 days later: time box 3 / 3650 = .000822 wide -> match .999178 >= .999
    assert net.learn(encode_event([1.0, 0.0], 103.0, "user", "s1", cfg)).episode_id == "ep-000001"
    # 10 days after the first: box 10 / 3650 = .00274 wide -> match .99726 < .999: a new episode
    assert net.learn(encode_event([1.0, 0.0], 110.0, "user", "s1", cfg)).created


# --- state --------------------------------------------------------------------------------------


def _trained() -> ArtNetwork:
    half = CFG.model_copy(update={"content": ChannelConfig(gamma=1.0, rho=0.6, beta=0.5)})
    net = ArtNetwork(half)
    for v, day in [([1, 0], 10.0), ([0.6, 0.8], 20.0), ([-1, 0], 50.0), ([0.28, 0.96], 90.0)]:
        net.learn(ev(v, day, half))
    return net


def test_state_round_trips_through_json() -> None:
    net = _trained()
    state = net.to_state()
    restored = ArtNetwork.from_state(json.loads(json.dumps(state)))
    assert restored.to_state() == state
    assert len(restored) == len(net) == 3
    assert restored.cfg == net.cfg
    for ch in Channel:
        assert np.array_equal(restored.template("ep-000002", ch), net.template("ep-000002", ch))
    # both go on identically, the id counter included: day 15 lies inside ep1's time box [.1, .2]
    # (match .9), day 5 does not ([.05, .95] ^ [.1, .8] = .85 < .9) and opens ep4
    joined = [restored.learn(ev([0.6, 0.8], 15.0, net.cfg)), net.learn(ev([0.6, 0.8], 15.0, net.cfg))]
    opened = [restored.learn(ev([0, 1], 5.0, net.cfg)), net.learn(ev([0, 1], 5.0, net.cfg))]
    assert joined[0] == joined[1]
    assert (joined[0].episode_id, joined[0].created) == ("ep-000001", False)
    assert opened[0] == opened[1]
    assert (opened[0].episode_id, opened[0].created) == ("ep-000004", True)
    assert restored.to_state() == net.to_state()


def test_from_state_takes_a_new_config_and_rejects_a_malformed_state() -> None:
    state = _trained().to_state()
    stricter = CFG.model_copy(update={"content": ChannelConfig(gamma=1.0, rho=0.95)})
    assert ArtNetwork.from_state(state, stricter).cfg == stricter
    with pytest.raises(ValueError, match="session"):
        ArtNetwork.from_state(state, ArtConfig(session_buckets=8))
    bad = json.loads(json.dumps(state))
    bad["episodes"][0]["templates"]["content"][0] = 1.5
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        ArtNetwork.from_state(bad)
    dup = json.loads(json.dumps(state))
    dup["episodes"][1]["episode_id"] = dup["episodes"][0]["episode_id"]
    with pytest.raises(ValueError, match="duplicate"):
        ArtNetwork.from_state(dup)
    missing = json.loads(json.dumps(state))
    del missing["episodes"][0]["templates"]["time"]
    with pytest.raises(ValueError, match="time"):
        ArtNetwork.from_state(missing)
    with pytest.raises(ValidationError):
        ArtNetwork.from_state({**state, "extra": 1})
    with pytest.raises(ValueError, match="version"):
        ArtNetwork.from_state({**state, "version": 2})


# --- config -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"gamma": -0.1, "rho": 0.5},
        {"gamma": 1.0, "rho": 1.01},
        {"gamma": 1.0, "rho": -0.01},
        {"gamma": 1.0, "rho": 0.5, "beta": 1.5},
        {"gamma": 1.0, "rho": 0.5, "beta": -0.5},
        {"gamma": float("nan"), "rho": 0.5},
        {"gamma": 1.0, "rho": 0.5, "extra": 1},
    ],
)
def test_channel_config_rejects_out_of_range_values(fields: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        ChannelConfig(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"alpha": 0.0},
        {"time_span_days": 0.0},
        {"time_span_days": float("inf")},
        {"session_buckets": 0},
        {"unknown": 1},
        {
            "content": ChannelConfig(gamma=0.0, rho=0.5),
            "time": ChannelConfig(gamma=0.0, rho=0.5),
            "session": ChannelConfig(gamma=0.0, rho=0.0, vigilant=False),
        },
    ],
)
def test_art_config_rejects_out_of_range_values(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ArtConfig(**fields)
