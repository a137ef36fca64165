"""The Markdown page of a `benchmarks/cascade.py` run, kept apart from the measuring script so
each stays short. `markdown(report, suites)` renders the JSON report the script writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _fmt(figure: dict[str, Any] | None) -> str:
    if not figure or figure.get("value") is None:
        return "n/a"
    interval = (
        f" [{figure['low']:.3f}, {figure['high']:.3f}]" if figure.get("low") is not None else ""
    )
    return f"{figure['value']:.3f}{interval} (n={figure.get('n')})"


def _replay(tolerance: str, replay: dict[str, Any], command: str) -> list[str]:
    if "band" in replay:  # routed with a band and tolerance another run chose on dev
        return _replay_band(replay, command)
    head = replay["headline"]
    rows = [
        "",
        f"### The same answers routed with `Cascade(tolerance={tolerance})`",
        "",
        "A list keeps the 0.5B judge's answer while at most this share of its verdicts lie in the "
        f"band. Replayed from the caches of the run above (`{command.replace(' T ', f' {tolerance} ')}`; replaying "
        "tolerance 0 gave the measured cascade's scores exactly); no time measured: at most the "
        "measured cascade's, with the same 0.5B calls and fewer 1.5B ones.",
        "",
        *_replay_table(head, f"cascade, tolerance {tolerance}"),
    ]
    return [*rows, "", f"Routed: {replay['summary']}."]


def _replay_table(head: dict[str, Any], name: str) -> list[str]:
    """A replay's figures: the cascade's headline, escalations and agreement with the 1.5B."""
    rows = [
        "| | value |",
        "| --- | --- |",
        f"| {name} | {_fmt(head['cascade'])} |",
        f"| within the 1.5B judge's interval | {head['cascade_within_then_interval']} |",
        f"| cells escalated | {_fmt(head['cells_escalated'])} |",
        f"| calls escalated | {_fmt(head['calls_escalated'])} |",
        f"| decisions (score >= 0.5) kept from the 1.5B judge | {_fmt(head['decisions_kept_at_0.5'])} |",
        f"| mean absolute score difference from the 1.5B judge | {head['mean_abs_score_difference']:.3f} |",
    ]
    if "roc_auc_difference_cascade_minus_then" in head:
        rows.append(
            "| ROC-AUC, cascade minus 1.5B (paired stratified bootstrap) | "
            f"{_fmt(head['roc_auc_difference_cascade_minus_then'])} |"
        )
    return rows


def _replay_band(replay: dict[str, Any], command: str) -> list[str]:
    head = replay["headline"]
    band, tolerance = replay["band"], replay["tolerance"]
    return [
        "",
        f"### The same answers routed with the band ({band[0]:.3f}, {band[1]:.3f}) and tolerance "
        f"{tolerance:g} chosen on dev",
        "",
        f"Chosen by the run {replay['chosen_by']} on BEGIN dev, against the 1.5B judge's answers "
        "there; replayed from the caches of the run above "
        f"(`{command}`; routing the measured band first gave the measured cascade's scores "
        "exactly). No time measured: the same 0.5B calls as the measured cascade, and the 1.5B "
        "calls this routing escalates.",
        "",
        *_replay_table(head, "cascade"),
        "",
        f"Routed: {replay['summary']}.",
    ]


def _chosen_on_dev(calibration: dict[str, Any]) -> list[str]:
    """How `cascade_dev.choose_on_dev` chose the band and tolerance, with its nearest rivals and
    how much the 0.5B judge's P(yes) says of the 1.5B judge's verdicts there."""
    auc = calibration.get("verdict_auc")
    told = (
        [
            f"On those dev rows the 0.5B judge's P(yes) predicts the 1.5B judge's verdict on the "
            f"same statement with ROC-AUC {_fmt(auc)} over {calibration['verdicts']} verdicts "
            "(0.5 would say nothing of where the two disagree).",
            "",
        ]
        if auc
        else []
    )
    within = [c for c in calibration["candidates"] if c["escalated_share"] <= calibration["budget"]]
    within.sort(key=lambda c: (c["mean_abs_difference"], c["escalated_share"]))
    chosen_by = f" (by the run {calibration['chosen_by']})" if "chosen_by" in calibration else ""
    return [
        f"The band and tolerance were chosen on {calibration['rows']} BEGIN dev rows before any "
        f"test row was scored{chosen_by}: both judges answered them, and each of "
        f"{len(calibration['candidates'])} candidates (band edges at quantiles of the 0.5B "
        "judge's P(yes) on dev, tolerances 0 to 0.5) was routed over their cached answers by "
        "`Cascade` itself. Kept: the candidate whose cell scores lie closest to the 1.5B judge's "
        f"(mean absolute difference) among those escalating at most {calibration['budget']:.0%} "
        f"of the dev cells ({len(within)} did). The best five:",
        "",
        "| band | tolerance | dev cells escalated | mean abs. difference | decisions kept |",
        "| --- | --- | --- | --- | --- |",
        *(
            f"| ({c['band'][0]:.3f}, {c['band'][1]:.3f}) | {c['tolerance']:g} | "
            f"{c['escalated_share']:.0%} | {c['mean_abs_difference']:.3f} | "
            f"{c['decisions_kept']:.0%} |"
            for c in within[:5]
        ),
        "",
        *told,
    ]


def markdown(report: dict[str, Any], suites: Iterable[str]) -> str:
    """The results page of one `benchmarks/cascade.py` run (its JSON report): how the band was
    chosen, each suite's comparison, and every run's figure and load average as it finished."""
    lines = [
        "# A judge cascade: 0.5B first, the embedded 1.5B judge where it is unsure",
        "",
        f"Command: `{report['command']}`",
        "",
        *(
            [
                "Then the 0.5B judge alone, stopped after the asked statements as the cascade "
                "asks it, was scored from the cascade's cache (no model loaded): "
                "`.venv/bin/python benchmarks/cascade.py --first-from-cache WORK` (WORK: that "
                "run's work folder). The run itself had asked it without the stop.",
                "",
            ]
            if report.get("first_from_cache")
            else []
        ),
        f"Date {report['date']}, assay {report['assay_version']}, {report['machine']['cpus']} cores "
        f"(shared machine: load averages below), "
        f"band ({report['band'][0]:.3f}, {report['band'][1]:.3f}), "
        f"tolerance {report.get('tolerance', 0.0):g}, "
        f"rows one at a time (concurrency {report['concurrency']}), "
        f"{report['threads']} llama.cpp thread(s) per judge, split {report['split']}, "
        "metric faithfulness (default settings), no persistent cache for the timed runs"
        + (
            " (each kept its answers in a cache that started empty, read only by the replays)."
            if report.get("work")
            else "."
        ),
        "",
    ]
    for note in report.get("notes", []):  # what the command does not say (added by hand)
        lines += [note, ""]
    calibration = report.get("calibration")
    if calibration and "method" in calibration:
        lines += _chosen_on_dev(calibration)
    elif calibration:
        lines += [
            f"The band was chosen on {calibration['rows']} BEGIN dev rows before any test row was "
            "scored"
            + (f" (by the run {calibration['chosen_by']})" if "chosen_by" in calibration else "")
            + ": the 30th to 70th percentile of the 0.5B judge's P(yes) on the statements it "
            "was asked, in the variant (with or without a system prompt) that less often answered "
            "statements it was never asked:",
            "",
            "| variant | verdict calls | answered unasked statements | band |",
            "| --- | --- | --- | --- |",
            *(
                f"| {name} | {v['calls']} | {v['ran_on']} | "
                f"({v['band'][0]:.3f}, {v['band'][1]:.3f}) |"
                for name, v in calibration["variants"].items()
            ),
            "",
            f"Kept: {'a system prompt' if calibration['system_prompt'] else 'no system prompt'}.",
            "",
        ]
    missing = [name for name in suites if name not in report["suites"]]
    if missing:
        lines += [
            f"Not measured in this run: {', '.join(missing)} (`--suites {','.join(suites)}`).",
            "",
        ]
    for suite, found in report["suites"].items():
        head = found["headline"]
        name = found["headline_figure"]
        lines += [
            f"## {suite} ({name})",
            "",
            "| | value |",
            "| --- | --- |",
            f"| 1.5B judge alone | {_fmt(head['then_alone'])} |",
            f"| cascade | {_fmt(head['cascade'])} |",
            "| 0.5B judge alone, stopped after the asked statements (the cascade's first "
            f"answers, from its cache) | {_fmt(head.get('first_alone'))} |",
            *(
                [
                    "| 0.5B judge alone, asked as any judge is (it answers statements never asked, "
                    "which the metric scores as steering) | "
                    f"{_fmt(head['first_alone_unstopped'])} |"
                ]
                if "first_alone_unstopped" in head
                else []
            ),
            f"| cascade within the 1.5B judge's interval | {head['cascade_within_then_interval']} |",
            f"| cells escalated | {_fmt(head['cells_escalated'])} |",
            f"| calls escalated | {_fmt(head['calls_escalated'])} |",
            f"| seconds per item, 1.5B alone | {head['seconds_per_item_then_alone']:.2f} |",
            f"| seconds per item, cascade | {head['seconds_per_item_cascade']:.2f} |",
            f"| time saved against the 1.5B judge alone | {head['time_saved_share']:.0%} |",
            f"| decisions (score >= 0.5) kept from the 1.5B judge | {_fmt(head['decisions_kept_at_0.5'])} |",
            f"| mean absolute score difference from the 1.5B judge | {head['mean_abs_score_difference']:.3f} |",
        ]
        if "roc_auc_difference_cascade_minus_then" in head:
            lines.append(
                "| ROC-AUC, cascade minus 1.5B (paired stratified bootstrap) | "
                f"{_fmt(head['roc_auc_difference_cascade_minus_then'])} |"
            )
        for tolerance, replay in found.get("replays", {}).items():
            command = report.get("replay_band" if "band" in replay else "replay", "")
            lines += _replay(tolerance, replay, command)
        loads = {key: record["load_average"] for key, record in found["records"].items()}
        lines += [
            "",
            f"Cascade: {found['summary']}.",
            "",
            "Load average (1, 5, 15 min) before / after each run: "
            + "; ".join(
                f"{key} {tuple(round(x, 2) for x in load['before'])} / "
                f"{tuple(round(x, 2) for x in load['after'])}"
                for key, load in loads.items()
            ),
            "",
        ]
    lines += [
        "## Every run, as it finished",
        "",
        "| run | headline figure | seconds per item | load average before / after |",
        "| --- | --- | --- | --- |",
    ]
    for name, run in report["runs"].items():
        load = run["load_average"]
        seconds = run["seconds_per_item"]
        lines.append(
            f"| {name} | {_fmt(run['figure'])} | "
            f"{'n/a' if seconds is None else f'{seconds:.2f}'} | "
            f"{tuple(round(x, 2) for x in load['before'])} / "
            f"{tuple(round(x, 2) for x in load['after'])} |"
        )
    return "\n".join(lines) + "\n"
