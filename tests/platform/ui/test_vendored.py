"""The vendored front-end files are exactly the npm files the manifest names, and every script
and stylesheet a page loads is one of the package's own files (nothing from a CDN)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import assay.platform.ui as ui

STATIC = Path(ui.__file__).parent / "static"
TEMPLATES = Path(ui.__file__).parent / "templates"


def test_each_vendored_file_matches_its_manifest_sha256():
    manifest = json.loads((STATIC / "vendor" / "manifest.json").read_text())["files"]
    on_disk = {p.name for p in (STATIC / "vendor").iterdir() if p.name != "manifest.json"}
    assert on_disk == set(manifest)  # nothing unlisted, nothing missing
    for name, entry in manifest.items():
        digest = hashlib.sha256((STATIC / "vendor" / name).read_bytes()).hexdigest()
        assert digest == entry["sha256"], (
            f"{name} differs from {entry['package']}@{entry['version']}"
        )
        assert entry["version"] in name or name.endswith("LICENSE.txt")


def test_templates_load_only_local_files_and_have_no_inline_script():
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        for url in re.findall(r'(?:src|href)="([^"{]+)"', text):
            assert not re.match(r"(https?:)?//", url), f"{template.name} loads {url}"
        for tag in re.findall(r"<script[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, (template.name, tag)
        assert not re.search(r"\son[a-z]+=", text), template.name
        for path in re.findall(r'src="(/ui/static/[^"]+)"', text):
            assert (STATIC / path.removeprefix("/ui/static/")).is_file(), path
