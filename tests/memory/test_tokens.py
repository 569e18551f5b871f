"""tiktoken works offline once its cache is seeded from the packaged BPE files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import tokens


def test_counts_tokens_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    tokens._encoding.cache_clear()
    assert tokens.count_tokens("hello world") == 2  # cl100k: "hello", " world"
    assert len(list((tmp_path / "cache").iterdir())) == 2
    assert tokens.count_tokens("hello world", "o200k_base") == 2
    assert tokens.count_words("a  b\nc") == 3
    tokens._encoding.cache_clear()
