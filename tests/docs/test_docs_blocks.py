"""Every Python block of the README and the docs runs, against loopback servers only.

Each page runs in its own interpreter (`run_page.py`), its blocks in order in one namespace, in a
fresh working directory holding the bundled `examples/`. Every model string resolves to the
generic OpenAI-compatible server on 127.0.0.1 (`tests/compat/docs_corpus/server.py`): the
environment names it as the default judge and embeddings (`ASSAY_LLM`, `ASSAY_EMBEDDINGS`) and as
OpenAI's endpoint (`OPENAI_BASE_URL`), so `llm_factory("openai/gpt-4o-mini")` in a page reaches it
too. `ASSAY_LOCAL_MODEL` names a file that does not exist, so a page can never start the embedded
1.1 GB judge. Pages that use the platform SDK get a real `assay serve` (SQLite) on 127.0.0.1 with
a key (`ASSAY_BASE_URL`, `ASSAY_API_KEY`, and `key.txt` in the working directory); that server's
worker calls a paced server of its own, so an experiment lasts long enough to be cancelled. A page
whose blocks carry `slow` (docs/ray.md: it starts a local Ray cluster) runs with `pytest -m slow`.
Besides running, some pages must print or show what their comments say (CHECKS), and no page may
print an object's bare repr.

A block that cannot run here says so in the page (`blocks.py` lists the directives); the share
of blocks run (here or by the test a `tested-by` names) must stay at or above FLOOR.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.compat.docs_corpus.server import SchemaAnswer, generic_server
from tests.docs.blocks import ROOT, Block, all_blocks, blocks_of, pages
from tests.models.fake_openai import FakeOpenAI, RecordedRequest, Reply

FLOOR = 0.90  # share of the docs' Python blocks that a test runs

PAGES = [page for page in pages() if blocks_of(page)]


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _params() -> list[object]:
    params = []
    for page in PAGES:
        blocks = blocks_of(page)
        marks = [pytest.mark.slow] if any(b.slow for b in blocks) else []
        params.append(pytest.param(page, id=_name(page), marks=marks))
    return params


def _uses_platform(blocks: list[Block]) -> bool:
    return any("assay.platform" in "\n".join([*b.setup, b.code]) for b in blocks)


# -- what a page must also show, beyond running ---------------------------------------------------
@dataclass
class Ran:
    out: str  # what the page printed
    shown: list[str | None]  # per block run, the repr of its trailing expression
    judge: FakeOpenAI
    blocks: list[Block]


def _commented_prints(ran: Ran) -> None:
    """Each `print(...)  # text` line printed that text."""
    for block in ran.blocks:
        for expected in re.findall(r"^\s*print\(.*\)\s+#\s*(.+)$", block.code, re.M):
            assert expected.strip() in ran.out, f"{block.where}: expected {expected!r}"


def _bleu_as_commented(ran: Ran) -> None:
    """The BLEU mean of the bundled examples is the one the `print(result)` comment shows."""
    assert "'bleu_score': 0.3490 (5/5 rows)" in ran.out, ran.out


def _readme(ran: Ran) -> None:
    _bleu_as_commented(ran)
    assert ran.shown[0] is not None and ran.shown[0].startswith("Ok(status='ok'"), ran.shown
    assert ran.shown[1] is not None and ran.shown[1].startswith("MetricResult(value='pass'")
    assert ran.judge.count > 0, "the tour's judged metrics never called the judge"


def _coming_from_ragas(ran: Ran) -> None:
    _commented_prints(ran)
    assert ran.judge.count > 0, "the page builds a judge but never called it"


def _platform_guide(ran: Ran) -> None:
    # the terse cohort's "Correct" summary, as the comment shows it (the fake judge says yes)
    assert "'n': 1" in ran.out and "'coverage': 1.0" in ran.out, ran.out
    shell = (ROOT / "docs" / "platform-guide.md").read_text(encoding="utf-8")
    assert "assay keys create --project demo > key.txt" in shell and "assay serve" in shell


def _shown(index: int, start: str) -> Callable[[Ran], None]:
    def check(ran: Ran) -> None:
        shown = ran.shown[index]
        assert shown is not None and shown.startswith(start), f"shown {shown!r}, not {start!r}..."

    return check


CHECKS: dict[str, Callable[[Ran], None]] = {
    "README.md": _readme,
    "docs/coming-from-ragas.md": _coming_from_ragas,
    "docs/platform-guide.md": _platform_guide,
    "docs/evaluate.md": _bleu_as_commented,
    "docs/metrics.md": _shown(2, "MetricResult(value=0.857"),  # the comment's ROUGE value
    "docs/experiments.md": _shown(0, "[]"),  # run.errors: no row failed
    "docs/simulation.md": _coming_from_ragas,  # the printed outcomes; the judge was called
    "docs/trajectories.md": _commented_prints,
    "docs/replay.md": _coming_from_ragas,  # the printed outcomes; the judge scored both sides
}


# -- the loopback servers ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def judge() -> Iterator[FakeOpenAI]:
    server = generic_server().start()
    try:
        yield server
    finally:
        server.stop()


def _judge_env(judge: FakeOpenAI, home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "ASSAY_CACHE_URL",
            "ASSAY_BASE_URL",
            "ASSAY_API_KEY",
            "RAGMETRICS_API_KEY",
            "ASSAY_DB_URL",
            "OPENAI_ORG_ID",
            "OPENAI_PROJECT_ID",
        )
    }
    env.update(
        OPENAI_API_KEY="sk-loopback-docs",
        OPENAI_BASE_URL=judge.url,
        ANTHROPIC_API_KEY="sk-ant-loopback-docs",  # the pages say to export them; never sent
        GROQ_API_KEY="gsk-loopback-docs",
        GOOGLE_API_KEY="loopback-docs",
        ASSAY_LLM=judge.model_string("gpt-4o-mini"),
        ASSAY_EMBEDDINGS=judge.model_string("text-embedding-3-small"),
        ASSAY_LOCAL_MODEL=str(home / "no-embedded-judge-in-docs-tests.gguf"),
        ASSAY_HOME=str(home),
        ASSAY_CACHE_DIR=str(home / "cache"),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        HAYSTACK_TELEMETRY_ENABLED="False",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return env


@dataclass
class Platform:
    base_url: str
    key: str


class Paced(SchemaAnswer):
    """The generic answer, 0.2 s late: the platform page's experiment (40 rows) then still runs
    when the page cancels it, however fast the machine."""

    def respond(self, request: RecordedRequest) -> Reply:
        reply = super().respond(request)
        reply.delay = 0.2
        return reply


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """`assay serve` on SQLite at a free loopback port; its worker's models answer from a paced
    loopback server of their own."""
    from tests.platform.test_resume import start

    home = tmp_path_factory.mktemp("docs-platform")
    models = generic_server()
    models.default = Paced()
    models.start()
    env = _judge_env(models, home)
    created = subprocess.run(
        [sys.executable, "-m", "assay", "keys", "create", "--project", "docs"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    process, base = start(f"sqlite:///{home / 'assay.sqlite'}", env)
    try:
        yield Platform(base_url=base, key=created.stdout.strip())
    finally:
        process.terminate()
        process.wait(30)
        models.stop()


# -- the pages --------------------------------------------------------------------------------
@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", _params())
def test_page_runs(
    page: Path, judge: FakeOpenAI, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    blocks = blocks_of(page)
    runnable = [b for b in blocks if b.runs_here]
    if not runnable:
        pytest.skip("every block is skipped or run by the test its tested-by names")
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    env = _judge_env(judge, tmp_path / "home")
    if _uses_platform(runnable):
        live: Platform = request.getfixturevalue("platform")
        env.update(ASSAY_BASE_URL=live.base_url, ASSAY_API_KEY=live.key)
        (work / "key.txt").write_text(live.key + "\n", encoding="utf-8")
    listing = tmp_path / "blocks.json"
    listing.write_text(
        json.dumps(
            [
                {
                    "page": _name(b.page),
                    "file": str(b.page),
                    "line": b.line,
                    "code": b.code,
                    "setup": b.setup,
                }
                for b in runnable
            ]
        ),
        encoding="utf-8",
    )
    judge.reset_records()
    shown = tmp_path / "shown.json"
    done = subprocess.run(
        [sys.executable, "-m", "tests.docs.run_page", str(listing), str(shown)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, f"{_name(page)}:\n{done.stderr[-4000:]}"
    # printing an object that has no repr of its own shows the reader nothing
    assert " object at 0x" not in done.stdout, f"{_name(page)} printed a bare repr:\n{done.stdout}"
    report = json.loads(shown.read_text(encoding="utf-8"))
    assert report["errors"] == {}, f"{_name(page)}: cells failed: {report['errors']}"
    check = CHECKS.get(_name(page))
    if check is not None:
        check(Ran(out=done.stdout, shown=report["shown"], judge=judge, blocks=runnable))


# -- the ledger -------------------------------------------------------------------------------
def test_enough_blocks_run() -> None:
    """At least FLOOR of the docs' Python blocks run (here, or in the test a tested-by names),
    and every skip says why (`blocks.py` refuses one that does not)."""
    blocks = all_blocks()
    skipped = [b for b in blocks if b.skip is not None]
    ran = len(blocks) - len(skipped)
    assert len(blocks) >= 50, f"only {len(blocks)} Python blocks found: is the parser broken?"
    assert ran >= FLOOR * len(blocks), f"{ran} of {len(blocks)} blocks run; skipped: " + "; ".join(
        f"{b.where} ({b.skip})" for b in skipped
    )


def test_each_tested_by_names_a_test_that_reads_the_page() -> None:
    for block in all_blocks():
        if block.tested_by is None:
            continue
        test = ROOT / block.tested_by
        assert test.is_file(), f"{block.where}: {block.tested_by} does not exist"
        assert block.page.name in test.read_text(encoding="utf-8"), (
            f"{block.where}: {block.tested_by} never names {block.page.name}"
        )
