"""One way to extend: metrics, providers and dataset backends are each a `Registry` fed by
built-ins, `register_*` and an entry-point group of an installed distribution.

The plugins here are real (if tiny) installed distributions: a module and a `.dist-info` folder
with `entry_points.txt` on `sys.path`, found by `importlib.metadata` exactly as a pip-installed
plugin would be.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import sys
import textwrap

import pytest

from assay import EvaluationDataset, SingleTurnSample, evaluate
from assay.errors import UsageError
from assay.metrics.base import Metric
from assay.metrics.declared import fields_from_signature
from assay.metrics.llm_metric import LLMMetric
from assay.metrics.registry import METRICS, create_metric, metric_classes, register_metric
from assay.metrics.typical import typical_calls
from assay.models import llm_factory
from assay.models.providers.registry import PROVIDER_KINDS, ProviderKind, register_provider
from assay.schema.outcome import MetricResult

PLUGIN = textwrap.dedent('''
    from dataclasses import dataclass

    from assay.metrics.base import Metric
    from assay.models.providers.scripted import ScriptedProvider
    from assay.schema.outcome import MetricResult


    @dataclass(kw_only=True)
    class ShoutRate(Metric):
        """Share of upper-case letters in the response (a plugin's metric)."""

        name: str = "shout_rate"

        async def _ascore(self, *, response: str) -> MetricResult:
            letters = [c for c in response if c.isalpha()]
            return MetricResult(sum(c.isupper() for c in letters) / max(len(letters), 1))


    BUILT = []


    def build_echo(model, *, base_url, api_key, timeout, **options):
        BUILT.append(model)
        return ScriptedProvider([f"echo from {model}"], repeat_last=True, model=model)
''')


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "assay_test_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "assay_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-test-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[assay.metrics]\n"
        "shout_rate = assay_test_plugin:ShoutRate\n"
        "broken_metric = assay_test_plugin:NoSuchClass\n"
        "not_a_metric = assay_test_plugin:build_echo\n"
        "[assay.providers]\n"
        "echo = assay_test_plugin:build_echo\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield sys.modules.get
    sys.modules.pop("assay_test_plugin", None)


# -- metrics ----------------------------------------------------------------------------------
def test_a_metric_from_an_entry_point_is_created_by_id_and_scores(plugin):
    assert "shout_rate" in metric_classes()
    metric = create_metric("shout_rate")
    assert type(metric).__module__ == "assay_test_plugin"
    result = evaluate(
        EvaluationDataset([SingleTurnSample(response="HEllo")]), ["shout_rate"], show_progress=False
    )
    assert result.to_pandas()["shout_rate"].tolist() == [pytest.approx(0.4)]


def test_a_broken_or_wrong_entry_point_is_a_usage_error_naming_it(plugin):
    with pytest.raises(UsageError, match=r"metric 'broken_metric'.*failed to load"):
        create_metric("broken_metric")
    with pytest.raises(UsageError, match=r"metric 'not_a_metric'.*concrete Metric subclass"):
        create_metric("not_a_metric")


def test_defining_a_subclass_registers_nothing_and_register_metric_does():
    @dataclasses.dataclass(kw_only=True)
    class WordCount(Metric):
        name: str = "word_count_for_test"

        async def _ascore(self, *, response: str) -> MetricResult:
            return MetricResult(float(len(response.split())))

    assert "word_count_for_test" not in metric_classes()
    with pytest.raises(UsageError, match="unknown metric 'word_count_for_test'"):
        create_metric("word_count_for_test")
    try:
        assert register_metric(WordCount) is WordCount  # usable as a decorator
        assert create_metric("word_count_for_test").score(response="a b c").value == 3.0
    finally:
        METRICS.unregister("word_count_for_test")


def test_built_in_metric_ids_cannot_be_taken_over():
    @dataclasses.dataclass(kw_only=True)
    class Impostor(Metric):
        name: str = "faithfulness"

        async def _ascore(self, *, response: str) -> MetricResult:
            return MetricResult(1.0)

    with pytest.raises(UsageError, match="'faithfulness' is built in"):
        register_metric(Impostor)
    assert create_metric("faithfulness").__class__.__name__ == "Faithfulness"


def test_the_built_in_catalogue_holds_only_assay_classes():
    assert all(cls.__module__.startswith("assay.") for cls in METRICS.builtins().values())


# -- providers --------------------------------------------------------------------------------
def test_a_provider_from_an_entry_point_serves_its_model_strings(plugin):
    llm = llm_factory("echo/team-model", cache=False)
    assert llm.generate("hi").text == "echo from team-model"
    assert plugin("assay_test_plugin").BUILT == ["team-model"]


def test_a_registered_provider_kind_can_recognise_its_own_clients():
    class HouseClient:
        pass

    from assay.models.providers.scripted import ScriptedProvider

    register_provider(
        "house",
        ProviderKind(
            "house",
            accepts_client=lambda client, _provider: isinstance(client, HouseClient),
            from_client=lambda client, model, timeout, **_: ScriptedProvider(
                ["from the house client"], repeat_last=True
            ),
        ),
    )
    try:
        llm = llm_factory("any-model", client=HouseClient(), cache=False)
        assert llm.generate("hi").text == "from the house client"
    finally:
        PROVIDER_KINDS.unregister("house")
    with pytest.raises(UsageError, match="cannot use a client of type HouseClient"):
        llm_factory("any-model", client=HouseClient(), cache=False)


def test_every_built_in_provider_name_is_one_registry_entry():
    from assay.models import factory

    kinds = PROVIDER_KINDS.builtins()
    assert set(factory.PROVIDERS) | set(factory.EXPLICIT_PROVIDERS) <= set(kinds)
    assert set(factory.EMBEDDING_PROVIDERS) <= set(kinds)
    assert all(isinstance(kind, ProviderKind) and kind.name == name for name, kind in kinds.items())


# -- what a metric states, it states once -------------------------------------------------------
def _builtin_metric_classes() -> list[type[Metric]]:
    import assay.metrics  # noqa: F401

    found, stack = [], [Metric]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("assay.metrics"):
                found.append(sub)
    return found


def _spelled_in_class_body(cls: type) -> set[str]:
    """Names assigned in the class statement itself (what its author wrote, not what the base
    class's `__init_subclass__` filled in)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]  # the ClassDef of getsource(cls)
    names = set()
    for statement in body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_no_built_in_metric_repeats_the_fields_its_signature_gives():
    repeated = []
    for cls in _builtin_metric_classes():
        spelled = _spelled_in_class_body(cls) & {"required_fields", "optional_fields"}
        if spelled and "_ascore" in cls.__dict__:
            derived = fields_from_signature(cls)
            if derived is not None and (cls.required_fields, cls.optional_fields) == derived:
                repeated.append(cls.__name__)
    assert repeated == []
    # and the check itself sees a spelled-out declaration (it found 27 before they went)
    assert "required_fields" in _spelled_in_class_body(
        importlib.import_module("assay.metrics.general.rubrics").RubricsScore
    )


def test_prompt_ids_is_a_property_a_metric_overrides_not_a_class_attribute():
    for cls in _builtin_metric_classes():
        if issubclass(cls, LLMMetric):
            assert isinstance(cls.__dict__.get("prompt_ids", property()), property), cls


def test_every_metric_that_uses_a_model_expects_calls_on_a_typical_sample():
    for name, cls in metric_classes().items():
        try:
            metric = cls()
        except Exception:  # needs a setting without a default (HHEM's classifier)
            continue
        cost = typical_calls(metric)
        if metric.needs_llm:
            assert cost.requests >= 1 and cost.input_tokens > 0, name
        elif metric.needs_embeddings:
            assert cost.embedding_tokens > 0, name
        else:
            assert cost.requests == 0, name


def test_assay_metrics_prints_the_calls_the_estimate_gives():
    from typer.testing import CliRunner

    from assay.cli.app import app

    result = CliRunner().invoke(app, ["metrics"])
    assert result.exit_code == 0, result.output
    line = next(row for row in result.output.splitlines() if row.startswith("noise_sensitivity"))
    # 3 calls + one per retrieved context; the typical sample has three contexts
    assert "6 judge calls" in line
    assert " 1 judge call " in next(
        row for row in result.output.splitlines() if row.startswith("context_recall")
    )
