"""Settings resolution: environment > mark.toml > defaults, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.config import ConfigError, EmbedderKind, Provider, load_settings


def test_defaults_are_offline_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = load_settings(env={"MARK_HOME": str(tmp_path)})
    assert s.model.provider is Provider.LOCAL and s.model.temperature == 0.0 and s.model.n_threads == 1
    assert s.embedder.kind is EmbedderKind.ONNX and s.store.chroma_url is None
    assert s.store_path == tmp_path / "chroma" and s.audit_path == tmp_path / "audit.sqlite3"


def test_env_beats_toml_beats_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mark.toml").write_text('[model]\nprovider = "openai"\nmodel = "from-toml"\nmax_tokens = 99\n')
    s = load_settings(env={"MARK_HOME": str(tmp_path), "MARK_MODEL": "from-env"})
    assert s.model.provider is Provider.OPENAI
    assert s.model.model == "from-env"
    assert s.model.max_tokens == 99


def test_explicit_config_file_and_chroma_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "other.toml"
    cfg.write_text('[store]\nchroma_url = "http://127.0.0.1:8765"\n')
    s = load_settings(env={"MARK_HOME": str(tmp_path), "MARK_CONFIG": str(cfg)})
    assert s.store.chroma_url == "http://127.0.0.1:8765"


def test_maintenance_schedule_from_env_or_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={"MARK_HOME": str(tmp_path)}).maintenance.every_hours == 24.0
    (tmp_path / "mark.toml").write_text("[maintenance]\nevery_hours = 6\n")
    assert load_settings(env={"MARK_HOME": str(tmp_path)}).maintenance.every_hours == 6.0
    env = {"MARK_HOME": str(tmp_path), "MARK_MAINTAIN_EVERY_HOURS": "0"}
    assert load_settings(env=env).maintenance.every_hours == 0.0
    with pytest.raises(ConfigError, match=r"invalid setting maintenance\.every_hours"):
        load_settings(env={**env, "MARK_MAINTAIN_EVERY_HOURS": "-1"})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MARK_PROVIDER": "bard"}, "invalid setting model.provider"),
        ({"MARK_TEMPERATURE": "hot"}, "invalid setting model.temperature"),
        ({"MARK_CONFIG": "/nonexistent/mark.toml"}, "not a file"),
    ],
)
def test_bad_settings_are_one_clear_line(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        load_settings(env={"MARK_HOME": str(tmp_path), **env})
    assert "\n" not in str(err.value)


def test_broken_toml_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mark.toml").write_text("[model\n")
    with pytest.raises(ConfigError, match="cannot read settings file"):
        load_settings(env={"MARK_HOME": str(tmp_path)})
