"""Peak memory of `assay evaluate` by row count: does it grow with the data? (issue #45, item 10)

Writes a dataset of N synthetic rows (question, answer, reference of a few dozen words) as JSONL,
or with `--format csv` as CSV (the same rows; every tenth question quoted over two lines, so the
reader meets multi-line cells),
runs `assay evaluate DATA -m exact_match,non_llm_string_similarity --output OUT --run-dir RUN`
in a subprocess, then runs the same command again (the resume of a finished run: every cell read
back from the run directory), and reports each run's peak resident memory (the child's
`ru_maxrss`, from `os.wait4`), wall time and exit code.

    nice -n 19 .venv/bin/python benchmarks/memory.py --rows 10000 100000 1000000 \
        --out benchmarks/results/memory.json
    nice -n 19 .venv/bin/python benchmarks/memory.py --format csv --rows 100000 \
        --out benchmarks/results/memory_100k_csv.json

Two classic metrics, so no judge is involved and the figures are the engine's own.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = "exact_match,non_llm_string_similarity"


def write_rows(path: Path, rows: int, seed: int = 7, form: str = "jsonl") -> int:
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(3, 9)))
        for _ in range(2000)
    ]
    columns = ["id", "user_input", "response", "reference"]
    with path.open("w", encoding="utf-8", newline="") as handle:
        table = csv.writer(handle) if form == "csv" else None
        if table is not None:
            table.writerow(columns)
        for n in range(rows):
            answer = " ".join(rng.choices(words, k=30))
            reference = answer if n % 3 == 0 else " ".join(rng.choices(words, k=30))
            row = {"id": f"r{n}", "user_input": " ".join(rng.choices(words, k=12)) + "?"}
            row.update(response=answer, reference=reference)
            if table is None:
                handle.write(json.dumps(row) + "\n")
            else:
                if n % 10 == 0:
                    row["user_input"] = row["user_input"].replace(" ", "\n", 1)
                table.writerow([row[column] for column in columns])
    return path.stat().st_size


def measure(command: list[str]) -> dict[str, float | int]:
    began = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - began
    stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {code}: {stderr[-2000:]}")
    return {
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "seconds": round(seconds, 1),
        "exit": code,
    }


def run(rows: int, work: Path, resume: bool = True, form: str = "jsonl") -> dict[str, object]:
    data, out, run_dir = (
        work / f"data-{rows}.{form}",
        work / f"out-{rows}.jsonl",
        work / f"run-{rows}",
    )
    size = write_rows(data, rows, form=form)
    command = [sys.executable, "-m", "assay", "evaluate", str(data), "-m", METRICS]
    command += ["--output", str(out), "--run-dir", str(run_dir), "--no-progress"]
    first = measure(command)
    written = sum(1 for _ in out.open("rb"))
    result: dict[str, object] = {
        "rows": rows,
        "format": form,
        "input_mb": round(size / 2**20, 1),
        "run": first,
        "output_rows": written,
    }
    if resume:
        result["resume_of_finished_run"] = measure(command)
    for path in (data, out):
        path.unlink()
    for path in run_dir.iterdir():
        path.unlink()
    run_dir.rmdir()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--resume-up-to", type=int, default=None, help="resume only runs of at most this many rows"
    )
    parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl", help="input file")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="assay-memory-") as scratch:
        for rows in args.rows:
            resume = args.resume_up_to is None or rows <= args.resume_up_to
            found = run(rows, Path(scratch), resume, args.format)
            print(json.dumps(found), flush=True)
            results.append(found)
    report = {
        "command": " ".join(sys.argv),
        "metrics": METRICS,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "results": results,
    }
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
