"""benchmarks/testset_generation.py: the figures both engines are compared on (hand-made sample
lists), assay's side end to end on a tiny corpus against the deterministic writer-and-judge on the
loopback fake OpenAI server (tests/testset/fake_model.py), and the Ragas glue driven by a fake
worker script that speaks the real worker's protocol (CI has no Ragas virtualenv)."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.models import RetryPolicy
from tests.models.fake_openai import FakeOpenAI
from tests.testset.corpus import FOUNDRY, GARDEN, KETTLES
from tests.testset.fake_model import BagOfWords, Writer

REPO = Path(__file__).resolve().parents[2]
FAST_RETRY = RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    # main() caches answers and checkpoints by default: never under the user's home in tests
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load("testset_generation")
ragas_side = bench.ragas_side


def sample(question, *, supported=1.0, answerable=1.0, documents=("d1",), synthesizer="single"):
    return {
        "user_input": question,
        "reference": "An answer.",
        "synthesizer": synthesizer,
        "document_ids": list(documents),
        "reference_supported": supported,
        "answerable": answerable,
    }


# -- the figures -----------------------------------------------------------------------------------
def test_figures_count_shares_over_the_judged_samples_and_duplicates_once():
    samples = [
        sample("How does a for loop walk over a list?", documents=("d1",)),
        sample("How does a for loop walk over a list ?", documents=("d1",)),  # a near-copy
        sample("What does the break statement do in a loop?", supported=0.5, documents=("d2",)),
        sample("Which module holds sys.argv?", supported=None, answerable=None, documents=()),
    ]
    f = bench.figures(samples, requested=5, documents=4, llm_calls=30, calls=34, seconds=12.0)
    assert f["produced"] == 4 and f["exact_size"] is False and f["crashed"] is False
    assert f["reference_supported"] == round(2 / 3, 4) and f["supported_judged"] == 3
    assert f["answerable"] == 1.0 and f["answerable_judged"] == 3
    assert f["duplicates"] == 1 and f["duplicate_share"] == 0.25
    assert f["coverage"] == 0.5  # d1 and d2 of four documents
    assert f["llm_calls_per_sample"] == 7.5 and f["seconds_per_sample"] == 3.0
    assert f["synthesizers"] == {"single": 4}


def test_figures_of_a_crash_have_no_per_sample_figures():
    f = bench.figures(
        [], requested=3, documents=5, llm_calls=7, calls=9, seconds=2.0, error="ValueError: short"
    )
    assert f["crashed"] is True and f["exact_size"] is False and f["error"] == "ValueError: short"
    assert f["produced"] == 0 and f["coverage"] == 0.0
    assert f["reference_supported"] is None and f["llm_calls_per_sample"] is None
    assert f["seconds_per_sample"] is None


def test_questions_leaning_on_the_context_are_counted():
    samples = [sample("According to the passage, what is a tuple?"), sample("What is a tuple?")]
    f = bench.figures(samples, requested=2, documents=1, llm_calls=2, calls=2, seconds=1.0)
    assert f["leaning_on_context"] == 1 and f["exact_size"] is True


def test_contexts_are_traced_to_their_document_through_collapsed_whitespace():
    texts = [
        "Loops\n=====\n\nThe  for statement\niterates over a sequence.",
        "Errors\n======\n\nAn exception stops the program.",
        "Errors\n======\n\nAn exception stops the program.",  # a duplicate document
    ]
    distinct = ragas_side.distinct_texts(texts)
    assert len(distinct) == 2
    assert ragas_side.documents_of(["The for statement iterates"], distinct) == [0]
    assert ragas_side.documents_of(["an EXCEPTION stops", "Loops ====="], distinct) == [0, 1]
    assert ragas_side.documents_of(["nothing like it anywhere"], distinct) == []
    hops = ["<1-hop>\n\nLoops ===== The for", "<2-hop>\n\nAn exception stops"]
    assert ragas_side.documents_of(hops, distinct) == [0, 1]


def test_ragas_samples_are_refused_by_the_checks_assays_gate_makes():
    two = ["first chunk", "second chunk"]
    samples = [
        {**sample("What does range() return in Python 3?"), "reference_contexts": two},
        {**sample("According to the context, what is range?"), "reference_contexts": two},
        {
            **sample(
                "How do lists and tuples differ?",
                synthesizer="multi_hop_abstract_query_synthesizer",
            ),
            "reference_contexts": ["only one"],
        },
        {**sample("What does range() return in Python 3 ?"), "reference_contexts": two},
        {**sample("What is a dict comprehension?", supported=0.2), "reference_contexts": two},
        {**sample("What is a set literal?", answerable=0.1), "reference_contexts": two},
    ]
    verdicts = ragas_side.assay_gate_verdicts(samples)
    assert verdicts["assay_gate_refusals"] == {
        "standalone": 1,
        "multi_hop": 1,
        "duplicate": 1,
        "unsupported": 1,
        "unanswered": 1,
    }
    assert verdicts["would_pass_assay_gate"] == round(1 / 6, 4)


# -- against the fake writer-and-judge ---------------------------------------------------------
@pytest.fixture
def fake() -> Iterator[tuple[FakeOpenAI, Writer, BagOfWords]]:
    server = FakeOpenAI().start()
    writer, vectors = Writer(), BagOfWords()
    server.default, server.embedding_default = writer, vectors
    try:
        yield server, writer, vectors
    finally:
        server.stop()
    assert writer.unexpected == [], "requests the fake did not recognise"


def _models(server: FakeOpenAI):
    from assay.models import embedding_factory, llm_factory

    llm = llm_factory(server.model_string("writer"), cache=False, retry=FAST_RETRY)
    embeddings = embedding_factory(f"vllm/bow@{server.url}", cache=False, retry=FAST_RETRY)
    return llm, embeddings


def test_assay_side_end_to_end_on_a_tiny_corpus(fake):
    server, _, _ = fake
    llm, embeddings = _models(server)
    run = bench.run_assay([KETTLES, FOUNDRY, GARDEN], 3, llm, embeddings, seed=7)
    f = run["figures"]
    assert f["exact_size"] is True and f["crashed"] is False and f["produced"] == 3
    assert f["reference_supported"] == 1.0 and f["supported_judged"] == 3  # the gate kept them
    assert f["answerable"] == 1.0 and f["duplicates"] == 0
    assert f["documents"] == 3 and 0 < f["coverage"] <= 1
    # Every chat request is an LLM call of the generator (the graph makes none by default) and
    # the rest are embedding requests.
    assert f["llm_calls"] == len(server.chat_requests)
    assert f["calls"] - f["llm_calls"] == len(server.embedding_requests)
    assert run["details"]["gate_pass_rate"] == 1.0 and run["details"]["failures"] == 0
    assert [s["user_input"] for s in run["samples"]] and all(s["reference"] for s in run["samples"])


FAKE_WORKER = textwrap.dedent(
    '''
    """Speaks ragas_testset_worker.py's protocol: two samples, one failed job, a summary."""
    import argparse, json, os, sys
    import httpx

    parser = argparse.ArgumentParser()
    for name in ("--docs-list", "--out", "--llm-url", "--llm-model", "--embeddings-url",
                 "--embeddings-model", "--size", "--seed", "--concurrency", "--max-token-limit"):
        parser.add_argument(name)
    args = parser.parse_args()
    print("a chatty library says hello", flush=True)
    print(json.dumps({"ready": True, "ragas": "0.0-fake", "openai": "x"}), flush=True)
    paths = [p for p in open(args.docs_list).read().splitlines() if p]
    # Ragas hands back chunks with collapsed whitespace: the first and the last file's openings.
    first, last = (" ".join(open(p).read().split())[:200] for p in (paths[0], paths[-1]))
    # One embedding through the endpoint the parent serves in front of assay's embeddings.
    reply = httpx.post(args.embeddings_url + "/embeddings",
                       json={"model": args.embeddings_model, "input": ["probe from the worker"]})
    assert len(reply.json()["data"][0]["embedding"]) == 64, reply.text
    lines = [
        {"user_input": "When did the Hartley Foundry open in Leeds?",
         "reference": "It opened in 1887.", "reference_contexts": [first],
         "synthesizer_name": "single_hop_specific_query_synthesizer", "error": None},
        {"user_input": "Where do owners polish the kettle with salt?",
         "reference": "Owners in Leeds polish it with lemon juice and salt.",
         "reference_contexts": [last],
         "synthesizer_name": "single_hop_specific_query_synthesizer", "error": None},
        {"synthesizer_name": "multi_hop_specific_query_synthesizer",
         "error": "ValidationError: 1 validation error"},
    ]
    summary = {"summary": True, "error": None, "jobs": 3, "failed_samples": 1,
               "plain_generate_would_raise": True, "documents": len(paths), "llm_calls": 40,
               "llm_failed_calls": 0, "embedding_calls": 5, "input_tokens": 100,
               "output_tokens": 50, "seconds": 8.0,
               "seed": args.seed, "key_seen": os.environ.get("ASSAY_RAGAS_JUDGE_KEY"),
               "llm_url": args.llm_url, "size": args.size,
               "max_token_limit": args.max_token_limit and int(args.max_token_limit)}
    with open(args.out, "w") as handle:
        for line in [*lines, summary]:
            handle.write(json.dumps(line) + "\\n")
    print(json.dumps(summary), flush=True)
    '''
)


@pytest.fixture
def fake_worker(tmp_path: Path) -> Path:
    path = tmp_path / "fake_ragas_worker.py"
    path.write_text(FAKE_WORKER, encoding="utf-8")
    return path


def _corpus(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    paths = []
    for name, text in (("kettles.md", KETTLES), ("foundry.rst", FOUNDRY), ("garden.md", GARDEN)):
        (folder / name).write_text(text, encoding="utf-8")
        paths.append(folder / name)
    return sorted(paths)


def test_ragas_samples_are_judged_by_assays_gate_and_measured_alike(fake, fake_worker, tmp_path):
    server, writer, vectors = fake
    writer.unsupported_words = {"1887"}  # the judge denies support where the foundry's context is
    llm, embeddings = _models(server)
    paths = _corpus(tmp_path)
    run = bench.run_ragas(
        paths,
        3,
        11,
        python=Path(sys.executable),
        llm=llm,
        embeddings=embeddings,
        concurrency=2,
        timeout=60,
        worker=fake_worker,
    )
    f, d = run["figures"], run["details"]
    assert f["produced"] == 2 and f["exact_size"] is False and f["crashed"] is False
    assert f["reference_supported"] == 0.5 and f["supported_judged"] == 2
    assert f["coverage"] == round(2 / 3, 4)  # contexts from foundry.rst and kettles.md
    assert f["llm_calls"] == 40 and f["calls"] == 45 and f["llm_calls_per_sample"] == 20.0
    assert f["seconds"] == 8.0 and f["seconds_per_sample"] == 4.0
    assert d["failed_samples"] == 1 and d["sample_errors"] == {"ValidationError": 1}
    assert d["plain_generate_would_raise"] is True and d["ragas"] == "0.0-fake"
    assert d["contexts_matched_to_no_document"] == 0 and d["judge_errors"] == 0
    assert d["assay_gate_refusals"] == {"unsupported": 1}
    assert "probe from the worker" in vectors.texts  # the embeddings endpoint reached assay's model
    # the gate's judge prompts reached the fake: support for both samples, answerability for both
    assert writer.calls["supported"] >= 2 and writer.calls["answers_question"] == 2


@pytest.mark.parametrize(
    ("script", "timeout", "expected"),
    [
        ("import sys\nsys.stderr.write('no module named ragas')\nsys.exit(2)", 30, "no module named ragas"),
        ("import time\ntime.sleep(30)", 1, "stopped after 1 s"),
    ],
)  # fmt: skip
def test_a_worker_that_fails_or_hangs_is_recorded_not_fatal(
    fake, tmp_path, script, timeout, expected
):
    server, _, _ = fake
    llm, embeddings = _models(server)
    worker = tmp_path / "broken_worker.py"
    worker.write_text(script, encoding="utf-8")
    run = bench.run_ragas(
        _corpus(tmp_path),
        2,
        0,
        python=Path(sys.executable),
        llm=llm,
        embeddings=embeddings,
        concurrency=1,
        timeout=timeout,
        worker=worker,
    )
    assert run["details"] == {"worker_failed": True}
    assert run["figures"]["crashed"] is True and run["figures"]["produced"] == 0
    assert expected in run["figures"]["error"]


def test_main_writes_both_engines_side_by_side(fake, fake_worker, tmp_path):
    server, _, _ = fake
    _corpus(tmp_path)
    out = tmp_path / "results" / "testset_generation"
    bench.main(
        [
            "--docs", str(tmp_path / "docs"), "--size", "2", "--seed", "3",
            "--llm", server.model_string("writer"), "--embeddings", f"vllm/bow@{server.url}",
            "--ragas-python", sys.executable, "--ragas-worker", str(fake_worker),
            "--ragas-max-token-limit", "1500", "--skip-tiny", "--out", str(out),
        ]
    )  # fmt: skip
    record = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert set(record["engines"]) == {"assay", "ragas"}
    assert record["engines"]["assay"]["figures"]["exact_size"] is True
    assert record["engines"]["ragas"]["figures"]["produced"] == 2
    assert record["engines"]["ragas"]["details"]["max_token_limit"] == 1500
    assert record["documents"] == 3 and record["tiny"] == {}
    table = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| measure | assay " in table and "| Ragas 0.0-fake |" in table
    assert "| exact size | True | True |" in table


def test_without_a_ragas_interpreter_only_assay_runs_and_the_record_says_why(fake, tmp_path):
    server, _, _ = fake
    _corpus(tmp_path)
    out = tmp_path / "results" / "testset_generation"
    bench.main(
        [
            "--docs", str(tmp_path / "docs"), "--size", "1",
            "--llm", server.model_string("writer"), "--embeddings", f"vllm/bow@{server.url}",
            "--ragas-python", str(tmp_path / "no-venv" / "python"), "--skip-tiny",
            "--out", str(out),
        ]
    )  # fmt: skip
    record = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert record["engines"]["assay"]["figures"]["produced"] == 1
    assert record["engines"]["ragas"]["note"].startswith("not run: no Ragas interpreter")
    with pytest.raises(SystemExit, match="no Python interpreter"):
        bench.main(["--docs", str(tmp_path / "docs"), "--engine", "ragas",
                    "--ragas-python", str(tmp_path / "no-venv" / "python")])  # fmt: skip


def test_one_engines_run_keeps_the_others_figures_only_from_a_comparable_run(tmp_path, capsys):
    def record(**changes):
        base = {
            "size": 20, "llm": "local", "embeddings": "minilm", "docs": "/d", "documents": 3,
            "seed": 42, "tiny_size": 3, "assay": "1.0", "gate": bench.GATE.judge_settings(),
            "date": "2026-12-02T15:00:00+00:00", "engines": {}, "tiny": {},
        }  # fmt: skip
        return {**base, **changes}

    out = tmp_path / "results"
    earlier = record(
        engines={"assay": {"figures": {"produced": 20}}},
        tiny={"one document": {"assay": {"figures": {"produced": 3}}}},
    )
    out.with_suffix(".json").write_text(json.dumps(earlier), encoding="utf-8")
    now = record(date="2026-12-02T16:00:00+00:00")
    bench.keep_other_engine(now, out, "assay")
    assert now["engines"]["assay"] == {"figures": {"produced": 20}}
    assert now["tiny"]["one document"]["assay"]["figures"]["produced"] == 3
    assert now["measured"] == {"assay": "2026-12-02T15:00:00+00:00"}
    assert "assay measured 2026-12-02T15:00:00+00:00." in bench.markdown(
        {**now, "tiny": {}, "machine": "m", "judge_calls": 0}
    )
    for change in ({"docs": "/other"}, {"tiny_size": 5}, {"gate": {"support_threshold": 0.8}}):
        later = record(**change)
        bench.keep_other_engine(later, out, "assay")
        assert later["engines"] == {} and later["tiny"] == {}
        assert f"({next(iter(change))} differ)" in capsys.readouterr().err
    # an engine that produced no sample was judged by no gate: other gate settings keep it
    empty = record(
        engines={"ragas": {"figures": {"produced": 0, "crashed": True}}},
        tiny={"one document": {"ragas": {"figures": {"produced": 0}}}},
    )
    out.with_suffix(".json").write_text(json.dumps(empty), encoding="utf-8")
    regated = record(gate={"support_threshold": 0.8})
    bench.keep_other_engine(regated, out, "ragas")
    assert regated["engines"]["ragas"]["figures"]["crashed"] is True
    assert regated["tiny"]["one document"]["ragas"]["figures"]["produced"] == 0
    moved = record(gate={"support_threshold": 0.8}, docs="/other")
    bench.keep_other_engine(moved, out, "ragas")
    assert moved["engines"] == {}  # the other keys still count
    # single-hop samples only: a multi-hop setting of the gate did not judge them
    gate = bench.GATE.judge_settings()
    older_gate = {k: v for k, v in gate.items() if k != "each_hop_needed"}
    single = {"produced": 4, "synthesizers": {"single_hop_specific_query_synthesizer": 4}}
    multi = {"produced": 2, "synthesizers": {"multi_hop_specific_query_synthesizer": 2}}

    def kept_after(previous_gate, figures, current_gate=gate):
        """Write a record whose Ragas tiny case has `figures`; what a run with `current_gate` keeps."""
        previous = record(gate=previous_gate, tiny={"no headings": {"ragas": {"figures": figures}}})
        out.with_suffix(".json").write_text(json.dumps(previous), encoding="utf-8")
        now = record(gate=current_gate)
        bench.keep_other_engine(now, out, "ragas")
        return now

    kept = kept_after(older_gate, single)
    assert kept["tiny"]["no headings"]["ragas"]["figures"] == single
    dropped = kept_after(older_gate, multi)
    assert dropped["tiny"] == {} and "(gate differ)" in capsys.readouterr().err
    stricter = kept_after(gate, single, {**gate, "support_threshold": 0.8})
    assert stricter["tiny"] == {}  # a threshold judged the single-hop samples too
