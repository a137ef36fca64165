"""Backends are found by name: built-ins, entry points of `assay.dataset_backends`, `register_backend`."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from assay import Dataset
from assay.errors import UsageError
from assay.experiments.backends import DatasetBackend, backend_names, register_backend, registry

REPO = Path(__file__).resolve().parents[2]

PLUGIN = textwrap.dedent('''
    from assay.experiments.backends import DatasetBackend

    SAVED = {}

    class ReversedBackend(DatasetBackend):
        """Stores rows in reverse order, to prove this class (not a built-in) did the work."""

        def load(self, name):
            return list(reversed(SAVED[name]))

        def save(self, name, rows):
            SAVED[name] = list(reversed(rows))

        def list_names(self):
            return sorted(SAVED)
''')


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A real (if tiny) installed distribution on sys.path declaring an entry point."""
    (tmp_path / "reversed_backend_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "reversed_backend_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: reversed-backend-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[assay.dataset_backends]\nreversed = reversed_backend_plugin:ReversedBackend\n"
        "broken = reversed_backend_plugin:DoesNotExist\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield
    sys.modules.pop("reversed_backend_plugin", None)


def test_a_backend_declared_as_an_entry_point_is_used(installed_plugin, tmp_path):
    assert "reversed" in backend_names()
    Dataset("d", backend="reversed", root_dir=tmp_path, data=[{"n": 1}, {"n": 2}]).save()
    assert sys.modules["reversed_backend_plugin"].SAVED["d"] == [{"n": 2}, {"n": 1}]
    assert list(Dataset.load("d", backend="reversed", root_dir=tmp_path)) == [{"n": 1}, {"n": 2}]


def test_an_entry_point_that_fails_to_load_is_a_clear_error(installed_plugin, tmp_path):
    with pytest.raises(UsageError, match=r"'broken'.*failed to load"):
        Dataset("d", backend="broken", root_dir=tmp_path)


def test_register_backend_adds_a_backend_in_process(monkeypatch, tmp_path):
    monkeypatch.setattr(registry.BACKENDS, "_registered", {})
    store: dict[str, list] = {}

    class DictBackend(DatasetBackend):
        def load(self, name):
            return store[name]

        def save(self, name, rows):
            store[name] = [dict(row, backend="dict") for row in rows]

        def list_names(self):
            return sorted(store)

    with pytest.raises(UsageError, match="unknown dataset backend 'dict'"):
        Dataset("x", backend="dict", root_dir=tmp_path)
    register_backend("dict", DictBackend)
    Dataset("x", backend="dict", root_dir=tmp_path, data=[{"a": 1}]).save()
    assert list(Dataset.load("x", backend="dict", root_dir=tmp_path)) == [
        {"a": 1, "backend": "dict"}
    ]
    assert "dict" in backend_names()


def test_builtin_names_cannot_be_taken_and_backends_must_be_backends():
    with pytest.raises(UsageError, match="built in"):
        register_backend("local/csv", DatasetBackend)
    with pytest.raises(UsageError, match="DatasetBackend subclass"):
        register_backend("mine", dict)


def test_pyproject_declares_every_builtin_backend_under_the_group():
    # read by hand: tomllib is not in Python 3.10's standard library
    lines = (REPO / "pyproject.toml").read_text().splitlines()
    start = lines.index(f'[project.entry-points."{registry.ENTRY_POINT_GROUP}"]') + 1
    declared = {}
    for line in lines[start:]:
        if line.startswith("["):
            break
        if "=" in line and not line.startswith("#"):
            key, value = (part.strip().strip('"') for part in line.split("=", 1))
            declared[key] = value
    assert set(declared) == set(registry.BUILTIN)
    for name, target in declared.items():
        module, attribute = target.split(":")
        assert getattr(importlib.import_module(module), attribute) is registry.BUILTIN[name]
