"""Encryption at rest (``MARK_ENCRYPTION_KEY``): memory text and audit details sealed, read back, searchable."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

import cli
from memory.config import Settings, load_settings
from memory.crypto import EncryptionKeyError, KeyFormatError, TextCipher
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.models import MemoryType
from tests.conftest import HASHING_CONFIG, NOW

MARKER = "Zanzibarite vault code 7731 opens the quokka locker"
KEY = Fernet.generate_key().decode()


def _settings(tmp_path: Path, key: str | None) -> Settings:
    env = {"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "hashing", "MARK_ENCRYPTION_KEY": key or ""}
    return load_settings(env=env)


def _open(settings: Settings) -> MemoryEngine:
    return MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)


def test_cipher_round_trip_and_plain_text_passes() -> None:
    cipher = TextCipher(KEY)
    sealed = cipher.seal(MARKER)
    assert MARKER not in sealed and sealed.startswith("mark-fernet:")
    assert cipher.unseal(sealed, "x") == MARKER and cipher.unseal("written in the clear", "x") == "written in the clear"
    assert TextCipher().seal(MARKER) == MARKER and not TextCipher().enabled


def test_text_is_sealed_at_rest_and_read_back(tmp_path: Path) -> None:
    settings = _settings(tmp_path, KEY)
    engine = _open(settings)
    try:
        record = engine.add(f"My note: {MARKER}.", MemoryType.USER_QUESTION, "alice", now=NOW).record
        engine.add("Bob drinks green tea every morning.", MemoryType.USER_QUESTION, "bob", now=NOW)
        hits = engine.search("quokka locker vault code", "alice", now=NOW).all_hits()
        assert [h.record.id for h in hits] == [record.id]  # vectors are not sealed: search works
        assert engine.history(record.id)[0].detail["record"]["text"] == f"My note: {MARKER}."
    finally:
        engine.close()
    for name in ("chroma/chroma.sqlite3", "audit.sqlite3"):
        assert MARKER.encode() not in (settings.home / name).read_bytes()
    reopened = _open(settings)  # a fresh store and record cache: the text comes from the sealed documents
    try:
        assert reopened.get(record.id).text == f"My note: {MARKER}."
        assert [r.text for r in reopened.list("bob")] == ["Bob drinks green tea every morning."]
    finally:
        reopened.close()


def test_a_store_written_before_the_key_was_set_is_still_read(tmp_path: Path) -> None:
    engine = _open(_settings(tmp_path, None))
    plain = engine.add("Written before encryption.", MemoryType.USER_QUESTION, "alice", now=NOW).record
    engine.close()
    engine = _open(_settings(tmp_path, KEY))
    try:
        sealed = engine.add("Written after.", MemoryType.USER_QUESTION, "alice", now=NOW).record
        assert engine.get(plain.id).text == "Written before encryption."
        assert engine.get(sealed.id).text == "Written after."
    finally:
        engine.close()


@pytest.mark.parametrize("key", [Fernet.generate_key().decode(), None], ids=["wrong key", "no key"])
def test_a_wrong_or_missing_key_is_one_clear_error(tmp_path: Path, key: str | None) -> None:
    engine = _open(_settings(tmp_path, KEY))
    record = engine.add(f"My note: {MARKER}.", MemoryType.USER_QUESTION, "alice", now=NOW).record
    engine.close()
    engine = _open(_settings(tmp_path, key))
    try:
        with pytest.raises(EncryptionKeyError, match="MARK_ENCRYPTION_KEY") as raised:
            engine.get(record.id)
        assert "\n" not in str(raised.value)
        with pytest.raises(EncryptionKeyError, match="audit log"):
            engine.history(record.id)
    finally:
        engine.close()


def test_the_cli_says_what_is_wrong_with_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MARK_EMBEDDER", "hashing")
    monkeypatch.setenv("MARK_ENCRYPTION_KEY", KEY)
    assert cli.main(["memory", "add", "--user", "alice", "I keep my notes sealed."]) == 0
    monkeypatch.setenv("MARK_ENCRYPTION_KEY", Fernet.generate_key().decode())
    capsys.readouterr()
    assert cli.main(["memory", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "another key" in err, err
    monkeypatch.setenv("MARK_ENCRYPTION_KEY", "not-a-fernet-key")
    assert cli.main(["memory", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a Fernet key" in err and "generate_key" in err, err


def test_a_malformed_key_is_refused_when_the_store_opens(tmp_path: Path) -> None:
    with pytest.raises(KeyFormatError, match="urlsafe base64 of 32 bytes"):
        _open(_settings(tmp_path, "c2hvcnQ="))
