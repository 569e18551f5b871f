"""Owner-only data: the data home and what mark keeps in it can be read by their owner only.

Memory text, the audit log and conversation histories are personal data. When an engine opens a data
home (:meth:`memory.engine.MemoryEngine.open`), :func:`make_private`:

- narrows this process's umask by ``0o077``, so every file and folder that mark, SQLite (its WAL, SHM
  and journal files) and Chroma (its HNSW folders) create from then on is owner-only. The umask belongs
  to the whole process: files a program that embeds mark writes afterwards are owner-only too;
- sets the home to ``0700`` and what mark keeps there (the audit log and history databases with their
  WAL and SHM files, the Chroma folder and everything in it, ``maintenance.json``) to ``0600`` files and
  ``0700`` folders, which closes a home that an older version left world-readable.

Assembled model files (``models/``) and the user's own files there (``mark.toml``) are left as they are.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)
PRIVATE_UMASK = 0o077
_KEPT = ("audit.sqlite3", "history.sqlite3", "maintenance.json")  # file names (and their -wal / -shm files)


def make_private(home: Path, store: Path) -> int:
    """Owner-only from now on (umask) and for what exists (chmod) in ``home`` and the ``store`` folder.

    Returns how many modes it changed.
    """
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)
    try:
        home.mkdir(parents=True, exist_ok=True)
        paths = [home, *(p for p in home.iterdir() if p.name.startswith(_KEPT))]
    except OSError as exc:  # opening the store says what is wrong with the folder, and what to do
        log.debug("cannot make %s private: %s", home, exc)
        return 0
    if store.is_dir():
        paths += [store, *store.rglob("*")]
    changed = sum(_restrict(p) for p in paths)
    if changed:
        log.info("made %d file(s) and folder(s) in %s readable by their owner only", changed, home)
    return changed


def _restrict(path: Path) -> bool:
    """Drop group and other permissions from a file or folder (links are left alone); True when it changed."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) or not stat.S_IMODE(info.st_mode) & PRIVATE_UMASK:
            return False
        path.chmod(stat.S_IMODE(info.st_mode) & ~PRIVATE_UMASK & (0o700 if stat.S_ISDIR(info.st_mode) else 0o600))
    except FileNotFoundError:  # a WAL file checkpointed away meanwhile
        return False
    except PermissionError:  # another user's file: say so, and go on
        log.warning("cannot make %s readable by its owner only: it belongs to another user", path)
        return False
    return True
