"""Seconds each classic (no-model) metric takes on 10 KB, 100 KB and 1 MB inputs (issue #14).

Every probe runs in its own Python process, stopped at 60 seconds and at 4 GB of address space,
one at a time. It scores one sample with `metric.ascore(...)` on an event loop that also runs a
ticker, so besides the time it reports the event loop's longest stall: how long the engine's
per-cell timeout could not have fired. Sizes are per field (response and reference each; for the
context metrics all the contexts of a side together; for the tool-call metrics all the
arguments of a call).

    .venv/bin/python benchmarks/classic_metrics_large_inputs.py [--baseline REV] [--only TEXT]

`--baseline REV` runs every probe a second time against `src/` as of the git revision REV (the
code before the change) and puts both side by side, with whether the two values agree. Writes
benchmarks/results/classic_metrics_large_inputs.md (not with --only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}
STOP_SECONDS = 60
MEMORY_BYTES = 4 * 1024**3

# case id -> (metric expression, input shape)
CASES: dict[str, tuple[str, str]] = {
    "bleu": ("BleuScore()", "text"),
    "chrf": ("CHRFScore()", "text"),
    "rougeL": ("RougeScore()", "text"),
    "rouge1": ("RougeScore(rouge_type='rouge1')", "text"),
    "rougeLsum": ("RougeScore(rouge_type='rougeLsum')", "lines"),
    "levenshtein": ("NonLLMStringSimilarity()", "text"),
    "hamming": ("NonLLMStringSimilarity(distance_measure='hamming')", "text"),
    "jaro": ("NonLLMStringSimilarity(distance_measure='jaro')", "text"),
    "jaro_winkler": ("NonLLMStringSimilarity(distance_measure='jaro_winkler')", "text"),
    "exact_match": ("ExactMatch()", "text"),
    "string_present": ("StringPresence()", "text"),
    "ctx_precision": ("NonLLMContextPrecisionWithReference()", "contexts10"),
    "ctx_recall": ("NonLLMContextRecall()", "contexts10"),
    "ctx_recall_100": ("NonLLMContextRecall()", "contexts100"),
    "ctx_recall_rouge": ("NonLLMContextRecall(distance_measure=RougeScore())", "contexts10"),
    "id_precision": ("IDBasedContextPrecision()", "ids"),
    "id_recall": ("IDBasedContextRecall()", "ids"),
    "datacompy_rows": ("DataCompyScore()", "csv"),
    "datacompy_columns": ("DataCompyScore(mode='columns')", "csv"),
    "tool_accuracy": ("ToolCallAccuracy()", "tools"),
    "tool_accuracy_lev": (
        "ToolCallAccuracy(arg_comparison_metric=NonLLMStringSimilarity())",
        "tools",
    ),
    "tool_f1": ("ToolCallF1()", "tools"),
}

# -- inputs -------------------------------------------------------------------------------------
_COMMON_WORDS = (
    "the of and to in is was for on that with as by at from this be are it an which or were not "
    "but have has had they their its can will one all would there been more if no when so what"
)


def _vocabulary(size: int = 6000) -> list[str]:
    rng = random.Random(0)
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    words = _COMMON_WORDS.split(" ")
    while len(words) < size:
        words.append("".join(rng.choices(letters, weights=range(26, 0, -1), k=rng.randint(3, 11))))
    return words


VOCABULARY = _vocabulary()
# Word frequencies follow Zipf's law, as in prose.
WEIGHTS = [1 / (rank + 1) ** 1.05 for rank in range(len(VOCABULARY))]


def prose(chars: int, seed: int, *, sep: str = " ") -> str:
    """Sentences of Zipf-distributed words, `chars` characters; `sep` between sentences."""
    rng = random.Random(seed)
    sentences, size = [], 0
    while size < chars:
        words = rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(6, 30))
        words[0] = words[0].capitalize()
        sentences.append(" ".join(words) + rng.choice(".. .?!").strip())
        size += len(sentences[-1]) + 1
    return sep.join(sentences)[:chars]


def perturb(text: str, seed: int, rate: float = 0.1) -> str:
    """`text` with a share `rate` of its words replaced (a response close to its reference)."""
    rng = random.Random(seed)
    out = [
        rng.choices(VOCABULARY, WEIGHTS)[0] if rng.random() < rate else word
        for word in text.split(" ")
    ]
    return " ".join(out)


def _fit(text: str, chars: int) -> str:
    return (text + " " + text)[:chars] if len(text) < chars else text[:chars]


def inputs(shape: str, chars: int) -> dict[str, Any]:
    from assay import AIMessage, HumanMessage, ToolCall

    if shape in ("text", "lines"):
        sep = "\n" if shape == "lines" else " "
        reference = prose(chars, 1, sep=sep)
        return {"response": _fit(perturb(reference, 2), chars), "reference": reference}
    if shape.startswith("contexts"):
        count = int(shape.removeprefix("contexts"))
        each = chars // count
        reference = [prose(each, 100 + i) for i in range(count)]
        # Half the retrieved contexts are close to a reference context, half are unrelated.
        retrieved = [
            _fit(perturb(reference[i], 200 + i), each) if i % 2 else prose(each, 300 + i)
            for i in range(count)
        ]
        return {"retrieved_contexts": retrieved, "reference_contexts": reference}
    if shape == "ids":
        count = chars // 11
        return {
            "retrieved_context_ids": [f"doc-{i:06d}" for i in range(count)],
            "reference_context_ids": [
                f"doc-{i:06d}" for i in range(count // 2, count + count // 2)
            ],
        }
    if shape == "csv":
        rng = random.Random(5)
        rows = ["id,name,value,flag"]
        while sum(map(len, rows)) + len(rows) < chars:
            i = len(rows)
            rows.append(f"{i},{rng.choice(VOCABULARY)},{rng.random() * 1000:.3f},{i % 3 == 0}")
        changed = [
            row if i == 0 or rng.random() > 0.05 else row.replace(",True", ",False")
            for i, row in enumerate(rows)
        ]
        return {"response": "\n".join(changed) + "\n", "reference": "\n".join(rows) + "\n"}
    if shape == "tools":
        half = chars // 2
        filters = {f"field_{i:05d}": f"value {i}" for i in range(half // 24)}
        want = ToolCall(name="search", args={"query": prose(half, 7), "filters": filters})
        made = ToolCall(
            name="search",
            args={"query": _fit(perturb(want.args["query"], 8), half), "filters": dict(filters)},
        )
        conversation = [HumanMessage(content="Find it."), AIMessage(content="", tool_calls=[made])]
        return {"user_input": conversation, "reference_tool_calls": [want]}
    raise ValueError(shape)


# -- one probe, in a child process ---------------------------------------------------------------
async def _scored(metric: Any, fields: dict[str, Any]) -> tuple[Any, float, float]:
    """(result or exception, seconds, longest event-loop stall in seconds)."""
    stall = 0.0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal stall
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            stall = max(stall, now - last - 0.005)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)  # the ticker is running
    started = time.perf_counter()
    try:
        outcome: Any = await metric.ascore(**fields)
    except Exception as exc:  # a refusal (MetricError) or a crash: both are recorded
        outcome = exc
    seconds = time.perf_counter() - started
    stop.set()
    await task
    return outcome, seconds, stall


def probe(case: str, chars: int) -> dict[str, Any]:
    import assay.metrics.classic as classic

    expression, shape = CASES[case]
    metric = eval(expression, vars(classic))
    fields = inputs(shape, chars)
    asyncio.run(_scored(classic.ExactMatch(), {"response": "a", "reference": "a"}))  # warm up
    outcome, seconds, stall = asyncio.run(_scored(metric, fields))
    record: dict[str, Any] = {"seconds": seconds, "stall": stall}
    if isinstance(outcome, Exception):
        record["error"] = f"{type(outcome).__name__}: {outcome}"
    else:
        record["value"] = outcome.value
    return record


def run_probe(case: str, chars: int, src: Path | None) -> dict[str, Any]:
    """One probe in a child process, stopped after `STOP_SECONDS` or at `MEMORY_BYTES`."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if src is not None:
        env["PYTHONPATH"] = str(src)

    def limit_memory() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))

    command = [sys.executable, str(Path(__file__).resolve()), "--probe", case, str(chars)]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=STOP_SECONDS,
            preexec_fn=limit_memory,
        )
    except subprocess.TimeoutExpired:  # subprocess.run kills the child
        return {"stopped": f"stopped at {STOP_SECONDS} s"}
    last = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    if done.returncode == 0 and last:
        return json.loads(last[0])
    error = (done.stderr.strip().splitlines() or ["no output"])[-1]
    if "MemoryError" in done.stderr:
        error = f"MemoryError after {time.perf_counter() - started:.0f} s"
    return {"crashed": error[:200]}


NOTES = """\
What the change did, per metric (limits are fields; a refusal is a `MetricError`, which a run
records as an `error` outcome, never a truncated or approximate value):

- ROUGE-L: the longest common subsequence comes from rapidfuzz's bit-parallel LCS on rouge-score's
  own tokens (same length, so the same scores; Porter stems are cached), GIL released. Quadratic
  still: refused when the token counts multiply beyond `max_tokens`² (default 200,000²).
- rougeLsum: rouge-score's own per-sentence tables (its union of subsequences depends on which one
  its backtracking picks), refused beyond 3,000² tokens; off the loop above 2,000 characters.
- Levenshtein, Jaro, Jaro-Winkler: refused when the lengths multiply beyond `max_chars`² (default
  300,000²); Hamming is linear, no limit. Levenshtein and Hamming run through
  `rapidfuzz.process.cdist`, which releases the GIL (a rapidfuzz call holds it throughout, so a
  thread alone would still stall the loop); cdist's Jaro differs in the last bit, so Jaro is called
  directly and its limit keeps one call near a quarter of a second.
- Non-LLM context precision and recall: the same limit on the product of the two sides' total
  characters; the grid is computed off the loop; a metric used as the measure applies its own
  limits per pair, with a checkpoint between pairs.
- BLEU, chrF, ROUGE-N, DataCompy, ID and tool-call metrics are linear: no limit, off the loop
  beyond 20,000 characters. sacrebleu's regular expressions hold the GIL over the whole text, hence
  BLEU's stall of most of a second at 1 MB. Slow first imports (rouge-score's nltk, pandas,
  datacompy) happen in a worker thread. ExactMatch and StringPresence are unchanged (linear).
"""


# -- the table -----------------------------------------------------------------------------------
def _cell(record: dict[str, Any]) -> str:
    if "stopped" in record:
        return f"**{record['stopped']}**"
    if "crashed" in record:
        return f"**{record['crashed']}**"
    text = f"{record['seconds']:.2f}"
    if "error" in record:
        kind = record["error"].split(":")[0]
        text += " (refused)" if kind == "MetricError" else f" (**{kind}**)"
    return text


def _stall(record: dict[str, Any]) -> str:
    if "stall" not in record:
        return "–"
    return f"{record['stall']:.2f}"


def _result(record: dict[str, Any]) -> str:
    if "value" in record:
        value = record["value"]
        return f"{value:.6g}" if isinstance(value, float) else str(value)
    if "error" in record:
        return record["error"].replace("|", "\\|")
    return "–"


def _same(before: dict[str, Any], after: dict[str, Any]) -> str:
    if "value" in before and "value" in after:
        return "yes" if before["value"] == after["value"] else f"**no** ({before['value']!r})"
    return "–"


def export_src(revision: str) -> Path:
    """`src/` as of `revision`, unpacked into a temporary directory."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "src"], capture_output=True, check=True
    ).stdout
    target = Path(tempfile.mkdtemp(prefix="assay-baseline-"))
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target / "src"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", metavar="REV", help="also run src/ as of this git revision")
    parser.add_argument("--only", metavar="TEXT", help="only the cases whose id contains TEXT")
    parser.add_argument("--probe", nargs=2, metavar=("CASE", "CHARS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe[0], int(args.probe[1]))))
        return

    baseline = export_src(args.baseline) if args.baseline else None
    if baseline is not None:
        head = ["before: seconds", "before: stall"]
        header = ["metric", "size", *head, "seconds", "stall", "result", "same value"]
    else:
        header = ["metric", "size", "seconds", "stall", "result"]
    rows = []
    for case, (expression, shape) in CASES.items():
        if args.only and args.only not in case:
            continue
        for label, chars in SIZES.items():
            after = run_probe(case, chars, None)
            cells = [f"`{expression}`" + ("" if shape == "text" else f" ({shape})"), label]
            if baseline is not None:
                before = run_probe(case, chars, baseline)
                cells += [_cell(before), _stall(before)]
            cells += [_cell(after), _stall(after), _result(after)]
            if baseline is not None:
                cells.append(_same(before, after))
            rows.append("| " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    if args.only:
        return
    from assay import __version__

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    since = f' The "before" columns run `src/` as of `{args.baseline}`.' if baseline else ""
    lines = [
        "# Classic metrics on large inputs",
        "",
        f"assay {__version__}, {datetime.now(timezone.utc).isoformat(timespec='seconds')}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores; load average at the end {load:.1f} "
        "(other work on the machine inflates these numbers).",
        "",
        "One sample per probe, each in its own process, stopped at 60 s or 4 GB. The size is per "
        "field: response and reference each; all the contexts of a side together (`contexts10`: "
        "10 a side, `contexts100`: 100 a side); all the arguments of the tool call. Texts are "
        "Zipf-distributed words in sentences; the response is the reference with 10% of its words "
        "replaced. *seconds* is the time to score; *stall* the event loop's longest pause "
        "meanwhile, i.e. how late a cell timeout could fire. *(refused)* is a typed `MetricError` "
        "naming the limit (the *result* column quotes it)." + since,
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *rows,
        "",
        NOTES,
        "Made by `benchmarks/classic_metrics_large_inputs.py`.",
        "",
    ]
    out = ROOT / "results" / "classic_metrics_large_inputs.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
