"""Measure the agent metrics of issue #43 (part 3) where their right answer is known.

    python benchmarks/agent_metrics.py bfcl [--data-dir DIR]
    flock /tmp/assay-judge.lock python benchmarks/agent_metrics.py judged [--llm MODEL]

`bfcl`: the non-judged metrics on the BFCL suite `assay benchmark bfcl` reads (the same rows:
curated calls and controlled corruptions of them, label 1 = BFCL's checker accepts), with each
case's function definitions attached as the row's `tools` (BFCL's type names mapped to JSON
Schema's). tool_argument_correctness runs three ways (schema only, reference only, both) and
step_efficiency against the reference as the shortest trajectory. Per variant: rows, rows scored,
the share scoring 1.0 and the mean score.

`judged`: task_completion and plan_adherence on simulated conversations whose outcome is set by
construction: for each of six small domains an agent scripted to succeed, to fail (its action
tool refuses) and to loop (the same lookup again and again), each stating its plan first. The
simulation's user (saying its goal) and goal judge are scripted, so the model's time goes to the
metrics; the metrics' judge is the embedded offline judge by default (run it under the lock). What a right judge gives is known per outcome
(task completion 1 / 1/2 / 1/2 when the judge lists the two tasks, plan adherence 1 / 2/3 / 1/3);
the record has the means per outcome, how often success outscored failure and looping in the same
domain, and how many runs fell on the right side of 1.0 (1.0 for success only).

Both write `benchmarks/results/agent_metrics_<part>.{json,md}` with the command that made them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from assay import __version__, evaluate
from assay.benchmark.bfcl import CATEGORIES, load_bfcl
from assay.benchmark.loaders import _jsonl
from assay.metrics.agent import (
    PlanAdherence,
    StepEfficiency,
    TaskCompletion,
    ToolArgumentCorrectness,
)
from assay.schema.messages import AIMessage, ToolCall, ToolMessage
from assay.simulation import Scenario, simulate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

# -- BFCL ------------------------------------------------------------------------------------
_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


def json_schema(bfcl: Any) -> Any:
    """A BFCL parameter spec as JSON Schema: its type names mapped, "any" left unconstrained."""
    if isinstance(bfcl, list):
        return [json_schema(item) for item in bfcl]
    if not isinstance(bfcl, dict):
        return bfcl
    schema = {}
    for key, value in bfcl.items():
        if key == "type" and isinstance(value, str):
            if value != "any":
                schema["type"] = _TYPES.get(value, value)
        elif key in ("properties",) and isinstance(value, dict):
            schema[key] = {name: json_schema(spec) for name, spec in value.items()}
        elif key in ("items", "additionalProperties"):
            schema[key] = json_schema(value)
        else:
            schema[key] = value
    return schema


def bfcl_tools(root: Path) -> dict[str, dict[str, Any]]:
    """Case id -> {tool name: JSON Schema of its arguments}."""
    tools = {}
    for category in CATEGORIES:
        for case in _jsonl(root / "bfcl" / f"BFCL_v4_{category}.json"):
            tools[case["id"]] = {
                function["name"]: json_schema(function.get("parameters") or {"type": "dict"})
                for function in case["function"]
            }
    return tools


def _variant_table(ids: list[str], groups: list[str], result: Any, name: str) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for row, group in enumerate(groups):
        entry = table.setdefault(group, {"rows": 0, "scored": 0, "passed": 0, "values": []})
        entry["rows"] += 1
        outcome = result.outcome(row, name)
        if outcome.status == "ok":
            entry["scored"] += 1
            entry["values"].append(float(outcome.value))
            entry["passed"] += float(outcome.value) == 1.0
    for entry in table.values():
        values = entry.pop("values")
        entry["mean"] = statistics.fmean(values) if values else None
        entry["pass_rate"] = entry["passed"] / entry["scored"] if entry["scored"] else None
    return table


def run_bfcl(data_dir: Path) -> dict[str, Any]:
    suite = load_bfcl(data_dir)
    tools = bfcl_tools(data_dir)
    case_of = [row_id.rsplit("-", 1)[0] for row_id in suite.ids]
    with_tools = [
        {**row, "tools": tools[case]} for row, case in zip(suite.rows, case_of, strict=True)
    ]
    schema_only = [
        {k: v for k, v in row.items() if k != "reference_tool_calls"} for row in with_tools
    ]
    runs = {
        "tool_argument_correctness (schema only)": (schema_only, ToolArgumentCorrectness()),
        "tool_argument_correctness (reference only)": (suite.rows, ToolArgumentCorrectness()),
        "tool_argument_correctness (schema + reference)": (with_tools, ToolArgumentCorrectness()),
        "step_efficiency (reference = shortest)": (suite.rows, StepEfficiency()),
    }
    measured: dict[str, Any] = {}
    for label, (rows, metric) in runs.items():
        started = time.perf_counter()
        result = evaluate(rows, [metric], show_progress=False)
        seconds = time.perf_counter() - started
        table = _variant_table(suite.ids, suite.groups or [], result, metric.name)
        scored = [
            (float(result.outcome(r, metric.name).value) == 1.0, label_)
            for r, label_ in enumerate(suite.labels or [])
            if result.outcome(r, metric.name).status == "ok"
        ]
        agreement = sum(p == bool(lab) for p, lab in scored) / len(scored) if scored else None
        errors = sum(result.outcome(r, metric.name).status == "error" for r in range(len(rows)))
        measured[label] = {
            "variants": table,
            "agreement_with_bfcl": agreement,
            "scored": len(scored),
            "errors": errors,
            "seconds": round(seconds, 1),
        }
    return {
        "rows": len(suite.rows),
        "cases": suite.n_units,
        "sources": suite.sources,
        "runs": measured,
    }


def bfcl_markdown(record: dict[str, Any]) -> str:
    runs = record["runs"]
    variants = list(next(iter(runs.values()))["variants"])
    lines = [
        "# Agent metrics on BFCL (non-judged)",
        "",
        f"`{record['command']}` — assay {record['assay']}, {record['made']}. "
        f"{record['rows']} rows from {record['cases']} BFCL v4 cases (the rows of "
        "`assay benchmark bfcl`); each case's function definitions are the row's `tools`.",
        "",
        "Per variant: pass = the share of scored rows at 1.0 (mean score in brackets); "
        "acceptable variants should pass, corrupted ones should not.",
        "",
        "| variant | BFCL accepts | " + " | ".join(runs) + " |",
        "|---|---|" + "---|" * len(runs),
    ]
    acceptable = {"canonical", "alternative_value", "omitted_optional", "swapped_order", "no_call"}
    for variant in variants:
        cells = []
        for run in runs.values():
            entry = run["variants"][variant]
            if not entry["scored"]:
                cells.append(f"skipped ({entry['rows']})")
                continue
            cells.append(
                f"{entry['pass_rate']:.3f} ({entry['mean']:.3f}), {entry['scored']}/{entry['rows']}"
            )
        lines.append(
            f"| {variant} | {'yes' if variant in acceptable else 'no'} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "| agreement with BFCL (pass = 1.0, scored rows) | | "
        + " | ".join(
            f"{run['agreement_with_bfcl']:.3f} (n={run['scored']}, errors {run['errors']}, "
            f"{run['seconds']} s)"
            for run in runs.values()
        )
        + " |",
        "",
        "Reading it: the agreement over all variants mixes what each metric is meant to see with "
        "what it is blind to by design. tool_argument_correctness does not score calls never made "
        "(`missing_call` rows of one-call cases have no call left and are skipped, the others pass: "
        "tool selection is "
        "tool_call_f1's); step_efficiency sees only waste (extra and repeated calls), never wrong "
        "values or functions. A single reference call holds one value per argument, so the "
        "reference modes reject BFCL's `alternative_value` and `omitted_optional` rows, which "
        "BFCL accepts from its lists of acceptable values. Schema-only rejections of `canonical` "
        "rows are BFCL reference calls that break BFCL's own schemas (values outside an enum, "
        "null for a string, required arguments BFCL lists as omittable).",
        "",
        "The reference-only and step-efficiency runs are also the standard records, with "
        "intervals: `assay benchmark bfcl --metric tool_argument_correctness --data-dir DIR` and "
        "`assay benchmark bfcl --metric step_efficiency --data-dir DIR` "
        "(`bfcl__tool_calls__tool_argument_correctness__*.md`, "
        "`bfcl__tool_calls__step_efficiency__*.md`).",
        "",
    ]
    return "\n".join(lines)


# -- judged, on simulated conversations ------------------------------------------------------
DOMAINS: list[dict[str, Any]] = [
    {
        "goal": "Book a table for two at an Italian restaurant in Turin tonight at 8 pm.",
        "lookup": ("search_restaurants", {"city": "Turin", "cuisine": "Italian"}),
        "found": '{"results": ["Da Gino", "Osteria Rosa"]}',
        "act": ("book_table", {"restaurant": "Da Gino", "people": 2, "time": "20:00"}),
        "done": '{"status": "booked", "restaurant": "Da Gino", "time": "20:00"}',
        "refused": '{"error": "no table free at 20:00"}',
        "plan": [
            "search for Italian restaurants in Turin",
            "book a table for two at 8 pm",
            "confirm the booking to the user",
        ],
        "success": "Booked: Da Gino, tonight at 8 pm for two.",
        "failure": "Sorry, Da Gino has no table free at 8 pm, so nothing is booked.",
    },
    {
        "goal": "Move my flight LX318 from Friday to Saturday morning.",
        "lookup": ("find_flights", {"flight": "LX318", "day": "Saturday"}),
        "found": '{"flights": [{"id": "LX318-SAT", "departs": "08:10"}]}',
        "act": ("change_booking", {"booking": "LX318", "new_flight": "LX318-SAT"}),
        "done": '{"status": "changed", "departs": "Saturday 08:10"}',
        "refused": '{"error": "fare class does not allow changes"}',
        "plan": [
            "look up Saturday morning flights for LX318",
            "change the booking to that flight",
            "tell the user the new departure time",
        ],
        "success": "Done: you now fly on Saturday at 08:10.",
        "failure": "I could not change it: your fare does not allow changes.",
    },
    {
        "goal": "Refund order 5521, the blender arrived broken.",
        "lookup": ("get_order", {"order_id": "5521"}),
        "found": '{"order_id": "5521", "item": "blender", "paid": 79.0}',
        "act": ("issue_refund", {"order_id": "5521", "amount": 79.0}),
        "done": '{"status": "refunded", "amount": 79.0}',
        "refused": '{"error": "refund service unavailable"}',
        "plan": [
            "look up order 5521",
            "issue a refund of the amount paid",
            "confirm the refund to the user",
        ],
        "success": "Your refund of 79.00 for order 5521 has been issued.",
        "failure": "The refund service is unavailable, so I could not refund order 5521.",
    },
    {
        "goal": "Cancel my gym membership, member number 8812.",
        "lookup": ("get_membership", {"member": "8812"}),
        "found": '{"member": "8812", "plan": "monthly", "active": true}',
        "act": ("cancel_membership", {"member": "8812"}),
        "done": '{"status": "cancelled", "last_day": "2026-12-31"}',
        "refused": '{"error": "cancellation needs a signed form"}',
        "plan": [
            "find membership 8812",
            "cancel the membership",
            "tell the user the last active day",
        ],
        "success": "Cancelled: your membership ends on 31 December.",
        "failure": "I could not cancel it: a signed form is needed first.",
    },
    {
        "goal": "Send 50 euros to my sister Marta from my checking account.",
        "lookup": ("find_contact", {"name": "Marta"}),
        "found": '{"contact": "Marta Rossi", "iban": "IT60X0542811101000000123456"}',
        "act": (
            "transfer",
            {"to": "IT60X0542811101000000123456", "amount": 50, "from": "checking"},
        ),
        "done": '{"status": "sent", "amount": 50}',
        "refused": '{"error": "daily transfer limit reached"}',
        "plan": [
            "find Marta's account details",
            "transfer 50 euros from checking",
            "confirm the transfer to the user",
        ],
        "success": "Sent: 50 euros to Marta Rossi.",
        "failure": "The transfer failed: your daily limit is reached.",
    },
    {
        "goal": "Reserve the small meeting room for Tuesday 10 to 11.",
        "lookup": ("list_rooms", {"size": "small", "day": "Tuesday"}),
        "found": '{"rooms": ["Birch", "Cedar"]}',
        "act": (
            "reserve_room",
            {"room": "Birch", "day": "Tuesday", "from": "10:00", "to": "11:00"},
        ),
        "done": '{"status": "reserved", "room": "Birch"}',
        "refused": '{"error": "Birch is taken at 10:00"}',
        "plan": [
            "list the small rooms free on Tuesday",
            "reserve one from 10 to 11",
            "tell the user which room is reserved",
        ],
        "success": "Reserved: room Birch, Tuesday 10 to 11.",
        "failure": "Birch turned out to be taken at 10, so nothing is reserved.",
    },
]
LOOP_LOOKUPS = 4


def scripted_agent(domain: dict[str, Any], outcome: str) -> Any:
    plan = "Plan: " + ", ".join(f"{n}) {step}" for n, step in enumerate(domain["plan"], 1)) + "."
    lookup = ToolCall(name=domain["lookup"][0], args=domain["lookup"][1])
    act = ToolCall(name=domain["act"][0], args=domain["act"][1])

    def agent(messages: list[Any]) -> list[AIMessage | ToolMessage]:
        turn: list[AIMessage | ToolMessage] = [
            AIMessage(content=plan, tool_calls=[lookup]),
            ToolMessage(content=domain["found"]),
        ]
        if outcome == "loops":
            for _ in range(LOOP_LOOKUPS - 1):
                turn += [AIMessage(tool_calls=[lookup]), ToolMessage(content=domain["found"])]
            return [*turn, AIMessage(content="Still checking, one moment.")]
        answer = domain["refused"] if outcome == "fails" else domain["done"]
        final = domain["failure"] if outcome == "fails" else domain["success"]
        return [
            *turn,
            AIMessage(tool_calls=[act]),
            ToolMessage(content=answer),
            AIMessage(content=final),
        ]

    return agent


# What a right judge gives when it lists the two tasks (look up, act) and the three plan steps.
EXPECTED = {
    "task_completion": {"succeeds": 1.0, "fails": 0.5, "loops": 0.5},
    "plan_adherence": {"succeeds": 1.0, "fails": 2 / 3, "loops": 1 / 3},
}


def scripted_roles() -> tuple[Any, Any]:
    """The simulation's user (it says its goal) and goal judge (met once a tool output reports a
    status), scripted: the model's time goes to the metrics being measured, not to playing the
    user, and every conversation is the one its script says."""
    from assay.models import LLM, ScriptedProvider

    def fenced(request: Any, name: str) -> str:
        found = re.findall(rf"<{name}>\n(.*?)\n</{name}>", str(request.messages[-1].content), re.S)
        return found[-1] if found else ""

    def user(request: Any) -> str:
        return json.dumps({"action": "continue", "message": fenced(request, "goal"), "reason": "-"})

    def goal(request: Any) -> str:
        met = '"status"' in fenced(request, "conversation")
        return json.dumps({"reason": "scripted", "goal_met": met})

    return (
        LLM(ScriptedProvider([user], repeat_last=True)),
        LLM(ScriptedProvider([goal], repeat_last=True)),
    )


def run_judged(model: str | None, domains: int) -> dict[str, Any]:
    from assay.models import llm_factory
    from assay.models.defaults import default_llm

    llm = llm_factory(model) if model else default_llm()
    user_llm, goal_llm = scripted_roles()
    samples, keys = [], []
    simulation = {}
    started = time.perf_counter()
    for index, domain in enumerate(DOMAINS[:domains]):
        for outcome in ("succeeds", "fails", "loops"):
            scenario = Scenario(
                persona="A busy customer who writes one short message.",
                goal=domain["goal"],
                name=f"{index}-{outcome}",
            )
            run = simulate(
                scripted_agent(domain, outcome),
                [scenario],
                user_llm,
                max_turns=1,
                judge_llm=goal_llm,
                loop_limit=None,
                show_progress=False,
            )
            simulation[scenario.name] = run.counts()
            if run.dataset:
                samples.append(run.dataset[0])
                keys.append((index, outcome))
    simulated_seconds = time.perf_counter() - started
    metrics = [TaskCompletion(), PlanAdherence()]
    started = time.perf_counter()
    result = evaluate(samples, metrics, llm=llm, show_progress=False)
    seconds = time.perf_counter() - started
    per_metric: dict[str, Any] = {}
    for metric in metrics:
        rows = []
        for row, (domain, outcome) in enumerate(keys):
            outcome_ = result.outcome(row, metric.name)
            rows.append(
                {
                    "domain": domain,
                    "outcome": outcome,
                    "status": outcome_.status,
                    "value": float(outcome_.value) if outcome_.status == "ok" else None,
                    "reason": outcome_.reason if outcome_.status != "error" else outcome_.message,
                    "items": (outcome_.details or {}).get(
                        "tasks" if metric.name == "task_completion" else "steps"
                    )
                    if outcome_.status == "ok"
                    else None,
                }
            )
        means = {}
        for outcome in ("succeeds", "fails", "loops"):
            values = [
                r["value"] for r in rows if r["outcome"] == outcome and r["value"] is not None
            ]
            means[outcome] = {
                "mean": statistics.fmean(values) if values else None,
                "n": len(values),
            }
        value_of = {(r["domain"], r["outcome"]): r["value"] for r in rows}
        orderings = {}
        for worse in ("fails", "loops"):
            pairs = [
                (value_of.get((d, "succeeds")), value_of.get((d, worse)))
                for d in range(len(DOMAINS))
            ]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            orderings[f"succeeds > {worse}"] = {
                "wins": sum(a > b for a, b in pairs),
                "ties": sum(a == b for a, b in pairs),
                "n": len(pairs),
            }
        # a right judge: 1 for the run that succeeds, below 1 for the ones that fail or loop
        exact = sum(
            r["value"] is not None and (r["value"] == 1.0) == (r["outcome"] == "succeeds")
            for r in rows
        )
        per_metric[metric.name] = {
            "means": means,
            "orderings": orderings,
            "exactly_as_a_right_judge": exact,
            "rows": rows,
            "usage": {
                "requests": result.usage(metric.name).requests,
                "input_tokens": result.usage(metric.name).input_tokens,
                "output_tokens": result.usage(metric.name).output_tokens,
            },
        }
    return {
        "judge": llm.identity() if hasattr(llm, "identity") else repr(llm),
        "domains": domains,
        "conversations": len(samples),
        "simulation": simulation,
        "simulation_seconds": round(simulated_seconds, 1),
        "scoring_seconds": round(seconds, 1),
        "expected": EXPECTED,
        "metrics": per_metric,
    }


def judged_markdown(record: dict[str, Any]) -> str:
    lines = [
        "# Judged agent metrics on simulated conversations",
        "",
        f"`{record['command']}` — assay {record['assay']}, {record['made']}; judge "
        f"`{record['judge']}`; the simulated user and the goal judge are scripted. "
        f"{record['conversations']} conversations: {record['domains']} domains x an agent scripted "
        f"to succeed, fail and loop; simulation {record['simulation_seconds']} s, scoring "
        f"{record['scoring_seconds']} s.",
        "",
        "| metric | a right judge gives (succeeds / fails / loops) | mean: succeeds | fails | loops "
        "| succeeds > fails (same domain) | succeeds > loops | rows on the right side of 1.0 | requests |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in record["metrics"].items():
        expected = " / ".join(f"{v:.2f}" for v in record["expected"][name].values())
        means = [
            f"{m['mean']:.3f} (n={m['n']})" if m["mean"] is not None else "n/a"
            for m in entry["means"].values()
        ]
        orders = [f"{o['wins']}/{o['n']} (ties {o['ties']})" for o in entry["orderings"].values()]
        lines.append(
            f"| {name} | {expected} | {' | '.join(means)} | {' | '.join(orders)} | "
            f"{entry['exactly_as_a_right_judge']}/{len(entry['rows'])} | {entry['usage']['requests']} |"
        )
    lines += ["", "Per conversation (value, and the judge's items that failed):", ""]
    for name, entry in record["metrics"].items():
        lines.append(f"- **{name}**")
        for row in entry["rows"]:
            value = "error" if row["value"] is None else f"{row['value']:.3f}"
            lines.append(f"  - domain {row['domain']}, {row['outcome']}: {value} — {row['reason']}")
    return "\n".join(lines) + "\n"


def _write(part: str, record: dict[str, Any], markdown: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"agent_metrics_{part}.json").write_text(
        json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (RESULTS / f"agent_metrics_{part}.md").write_text(markdown, encoding="utf-8")
    print(markdown)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("bfcl", "judged"))
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("ASSAY_METAEVAL_DIR", ROOT.parent / "shared/data/metaeval")),
    )
    parser.add_argument(
        "--llm", default=None, help="judge (default: ASSAY_LLM, else the embedded one)"
    )
    parser.add_argument(
        "--domains", type=int, default=len(DOMAINS), help="judged: the first N domains only"
    )
    args = parser.parse_args(argv)
    command = "python benchmarks/agent_metrics.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    stamp = {"assay": __version__, "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.part == "bfcl":
        record = {"command": command, **stamp, **run_bfcl(args.data_dir)}
        _write("bfcl", record, bfcl_markdown(record))
    else:
        command = "flock /tmp/assay-judge.lock " + command
        record = {"command": command, **stamp, **run_judged(args.llm, args.domains)}
        _write("judged", record, judged_markdown(record))


if __name__ == "__main__":
    main()
