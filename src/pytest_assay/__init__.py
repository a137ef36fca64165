"""assay's pytest plugin (entry point `pytest11`), kept outside the `assay` package on purpose.

Loading it imports pytest and the standard library only: importing anything under `assay` would
run `assay/__init__`, which loads the whole library (about half a second and pydantic). The
library is imported the first time a test uses assay (an `assay_*` fixture or the `assay`
marker); a session that does neither gets no output, no files and no other behaviour from it.

Options (`--assay-cache`, `--assay-budget`, ...) are listed by `pytest --help`; docs/pytest.md
is the guide. The per-test record (checks, judge calls, cache hits, cost) rides in the test's
`user_properties` as `assay.record`, so under pytest-xdist it reaches the controller with the
report; the controller takes it out (it is not a JUnit property), keeps it for the merged
report and the Markdown summary, and leaves readable properties (`assay.<metric>.score`, ...)
for `--junitxml`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

RECORD = "assay.record"
FIXTURES = frozenset(
    {"assay_judge", "assay_cache", "assay_budget", "assay_evaluate", "assay_embeddings"}
)
CACHE_MODES = ("record", "replay", "off")
_OPTIONS = pytest.StashKey["Options"]()
_SESSION = pytest.StashKey[Any]()
_BUDGET_FILE = pytest.StashKey["str | None"]()


@dataclass(frozen=True)
class Options:
    cache_mode: str
    cache_path: Path
    judge: str | None
    embeddings: str | None
    max_calls: int | None
    max_usd: float | None
    budget_text: str | None
    repeats: int | None
    baseline: Path | None
    report: Path | None
    summary: Path | None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay: LLM-judged gates (docs/pytest.md)")
    group.addoption(
        "--assay-cache",
        choices=CACHE_MODES,
        default=None,
        help="judge answers: record (read, and store new ones; default), replay (read only: a "
        "call not recorded fails the test), off (no cache)",
    )
    group.addoption(
        "--assay-cache-path",
        default=None,
        help="the cache file (default: <rootdir>/.assay/pytest-cache.sqlite)",
    )
    group.addoption("--assay-judge", default=None, help="judge model string (default: $ASSAY_LLM)")
    group.addoption(
        "--assay-embeddings",
        default=None,
        help="embedding model string (default: $ASSAY_EMBEDDINGS)",
    )
    group.addoption(
        "--assay-budget",
        default=None,
        help="cap on judge spending for the whole run, all xdist workers together: USD (2.50) or "
        "calls:N",
    )
    group.addoption(
        "--assay-repeats",
        default=None,
        help="at most this many judgements per row when a gate is inconclusive (default 1; "
        "assert_case: 3)",
    )
    group.addoption(
        "--assay-baseline",
        default=None,
        help="a report from an earlier run (--assay-report): each gate is also compared, row by "
        "row, with the same test there",
    )
    group.addoption("--assay-report", default=None, help="write the merged JSON report here")
    group.addoption(
        "--assay-summary",
        default=None,
        help="write a Markdown summary here (also appended to $GITHUB_STEP_SUMMARY when set)",
    )


def _options(config: pytest.Config) -> Options:
    get = config.getoption
    budget_text = get("assay_budget")
    max_calls = max_usd = None
    if budget_text is not None:
        text = budget_text.strip().lower()
        try:
            if text.startswith("calls:"):
                max_calls = int(text[len("calls:") :])
                if max_calls < 0:
                    raise ValueError
            else:
                max_usd = float(text.removeprefix("$"))
                if not 0 <= max_usd < float("inf"):
                    raise ValueError
        except ValueError:
            raise pytest.UsageError(
                f"--assay-budget: expected USD (e.g. 2.50) or calls:N (N a whole number), got "
                f"{budget_text!r}"
            ) from None
    repeats = get("assay_repeats")
    if repeats is not None:
        if not str(repeats).isdigit() or int(repeats) < 1:
            raise pytest.UsageError(
                f"--assay-repeats: expected a whole number of 1 or more, got {repeats!r}"
            )
        repeats = int(repeats)
    baseline = get("assay_baseline")
    if baseline is not None:
        baseline = Path(baseline)
        try:
            document = json.loads(baseline.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise pytest.UsageError(f"--assay-baseline: cannot read {baseline}: {exc}") from None
        if not isinstance(document, dict) or document.get("format") != "assay-pytest-report":
            raise pytest.UsageError(
                f"--assay-baseline: {baseline} is not an assay report (write one with --assay-report)"
            )
    root = config.rootpath
    cache_path = get("assay_cache_path")
    return Options(
        cache_mode=get("assay_cache") or "record",
        cache_path=Path(cache_path) if cache_path else root / ".assay" / "pytest-cache.sqlite",
        judge=get("assay_judge"),
        embeddings=get("assay_embeddings"),
        max_calls=max_calls,
        max_usd=max_usd,
        budget_text=budget_text,
        repeats=repeats,
        baseline=baseline,
        report=Path(get("assay_report")) if get("assay_report") else None,
        summary=Path(get("assay_summary")) if get("assay_summary") else None,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "assay(mode=, ci=, method=, repeats=): an LLM-judged test; the arguments are the "
        "defaults of assert_scores / assert_case inside it",
    )
    options = _options(config)
    config.stash[_OPTIONS] = options
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        budget_file = workerinput.get("assay_budget_file")
    elif options.budget_text is not None:
        # One file for the controller and every worker (given to them in pytest_configure_node).
        budget_file = os.path.join(tempfile.mkdtemp(prefix="assay-budget-"), "budget.sqlite")
    else:
        budget_file = None
    config.stash[_BUDGET_FILE] = budget_file
    config.pluginmanager.register(_Collector(config), "assay-collector")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:  # pytest-xdist, on the controller
    budget_file = node.config.stash.get(_BUDGET_FILE, None)
    if budget_file is not None:
        node.workerinput["assay_budget_file"] = budget_file


def _session(config: pytest.Config) -> Any:
    """The plugin session, built on first use (this is where the library is imported)."""
    session = config.stash.get(_SESSION, None)
    if session is None:
        from assay.testing.session import PluginSession

        options = config.stash[_OPTIONS]
        budget_file = config.stash.get(_BUDGET_FILE, None)
        session = PluginSession(
            cache_mode=options.cache_mode,
            cache_path=options.cache_path,
            judge_model=options.judge,
            embeddings_model=options.embeddings,
            budget_path=Path(budget_file) if budget_file else None,
            max_calls=options.max_calls,
            max_usd=options.max_usd,
            baseline_path=options.baseline,
        )
        config.stash[_SESSION] = session
    return session


def _uses_assay(item: pytest.Item) -> bool:
    return item.get_closest_marker("assay") is not None or bool(
        FIXTURES.intersection(getattr(item, "fixturenames", ()))
    )


# -- fixtures -------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def assay_cache(pytestconfig: pytest.Config) -> Any:
    """The run's response cache (None with --assay-cache=off): pass it to judges you build,
    `llm_factory(..., cache=assay_cache)`, so they record and replay with the run."""
    return _session(pytestconfig).cache


@pytest.fixture(scope="session")
def assay_judge(pytestconfig: pytest.Config) -> Any:
    """The judge LLM (--assay-judge or $ASSAY_LLM), on the run's cache and budget."""
    return _session(pytestconfig).judge


@pytest.fixture(scope="session")
def assay_embeddings(pytestconfig: pytest.Config) -> Any:
    """Embeddings (--assay-embeddings or $ASSAY_EMBEDDINGS) on the run's cache, or None."""
    return _session(pytestconfig).embeddings


@pytest.fixture(scope="session")
def assay_budget(pytestconfig: pytest.Config) -> Any:
    """The run's shared budget (`.used()` -> (calls, usd), `.max_calls`, `.max_usd`), or None."""
    return _session(pytestconfig).budget


@pytest.fixture
def assay_evaluate(pytestconfig: pytest.Config) -> Any:
    """`assay_evaluate(dataset, metrics, repeats=1, **evaluate_options)` -> `Runs`: evaluate with
    the run's judge (built only when a metric needs one) and embeddings, kept so that
    `assert_scores` can judge again when a gate is inconclusive."""
    from assay.testing.runs import evaluate_repeated

    session = _session(pytestconfig)

    def run(dataset: Any, metrics: Any, *, repeats: int = 1, **options: Any) -> Any:
        if "llm" not in options and any(getattr(m, "needs_llm", True) for m in metrics):
            options["llm"] = session.judge
        if "embeddings" not in options and session.embeddings is not None:
            options["embeddings"] = session.embeddings
        return evaluate_repeated(dataset, metrics, repeats=repeats, **options)

    return run


# -- per test -------------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    if not _uses_assay(item):
        return (yield)
    from assay.testing import context

    session = _session(item.config)
    options = item.config.stash[_OPTIONS]
    marker = item.get_closest_marker("assay")
    defaults: dict[str, Any] = {"repeats": options.repeats}
    if marker is not None:
        unknown = set(marker.kwargs) - {"mode", "ci", "method", "repeats"}
        if unknown or marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.assay takes mode=, ci=, method=, repeats=; got "
                f"{sorted(unknown) or list(marker.args)}"
            )
        defaults.update({k: v for k, v in marker.kwargs.items() if v is not None})
    if session.judge_started:
        defaults["llm"] = session.judge
    here = context.TestContext(item.nodeid, defaults, session.baseline_for(item.nodeid))
    context.set_current(here)
    before = session.spent()
    try:
        outcome = yield
    finally:
        context.set_current(None)
        spent = session.spent() - before
        _record(item, here, spent)
    if spent.misses:
        pytest.fail(
            f"assay replay: {spent.misses} judge call(s) were not in the replay cache "
            f"{session.cache_path}; the prompts, inputs or judge changed since it was recorded. "
            "Run once with --assay-cache=record (locally, or in a job allowed to call the judge).",
            pytrace=False,
        )
    return outcome


def _record(item: pytest.Item, here: Any, spent: Any) -> None:
    record = {
        "nodeid": item.nodeid,
        "checks": here.checks,
        "calls": spent.calls,
        "cache_hits": spent.cache_hits,
        "cost": spent.cost,
        "misses": spent.misses,
    }
    properties = item.user_properties
    for check in here.checks:
        prefix = f"assay.{check['metric']}"
        if check.get("kind") == "case":
            properties.append((f"{prefix}.values", json.dumps(check["values"])))
        else:
            properties.append((f"{prefix}.score", check["mean"]))
            if check["low"] is not None:
                properties.append(
                    (f"{prefix}.interval", f"[{check['low']:.4f}, {check['high']:.4f}]")
                )
            properties.append((f"{prefix}.rows", f"{check['n_scored']}/{check['n_rows']}"))
        properties.append((f"{prefix}.threshold", check["threshold"]))
        properties.append((f"{prefix}.decision", check["decision"]))
    properties.append(("assay.judge_calls", spent.calls))
    properties.append(("assay.cache_hits", spent.cache_hits))
    properties.append(("assay.cost_usd", round(spent.cost, 6)))
    properties.append((RECORD, json.dumps(record, allow_nan=False, default=str)))


class _Collector:
    """On the controller (or the only process): takes each test's record out of its reports and
    writes the merged report and summary at the end. Silent when no test used assay."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, str] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if hasattr(self.config, "workerinput"):
            return  # a worker: the record travels on to the controller in this report
        properties = list(report.user_properties)
        kept = [p for p in properties if p[0] != RECORD]
        if len(kept) == len(properties):
            return
        report.user_properties = kept
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.outcomes[report.nodeid] = report.outcome
        if report.when == "teardown":
            record = json.loads(str(next(p[1] for p in properties if p[0] == RECORD)))
            record["outcome"] = self.outcomes.get(report.nodeid, report.outcome)
            self.records[report.nodeid] = record

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.records or hasattr(self.config, "workerinput"):
            return
        from assay.testing.report import totals

        total = totals(self.records)
        terminalreporter.write_sep("-", "assay")
        terminalreporter.write_line(
            f"{total['tests']} judged test(s): {total['passed']} passed, {total['failed']} failed; "
            f"judge calls {total['judge_calls']}, cache hits {total['cache_hits']}, "
            f"cost ${total['cost_usd']:.4f}"
        )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = self.config
        plugin_session = config.stash.get(_SESSION, None)
        if plugin_session is not None:
            plugin_session.close()
        if hasattr(config, "workerinput"):
            return
        budget_file = config.stash.get(_BUDGET_FILE, None)
        if (
            budget_file is not None
        ):  # made by this process in pytest_configure; the workers are done
            shutil.rmtree(os.path.dirname(budget_file), ignore_errors=True)
        if not self.records:
            return
        from assay.testing.report import append_text, markdown, report_document, write_json

        options = config.stash[_OPTIONS]
        if options.report is not None:
            write_json(options.report, report_document(self.records))
        text = markdown(self.records)
        if options.summary is not None:
            options.summary.parent.mkdir(parents=True, exist_ok=True)
            options.summary.write_text(text, encoding="utf-8")
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:
            append_text(Path(step_summary), text)
