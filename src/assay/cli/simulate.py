"""`assay simulate`: a simulated user talks to an agent, scenario by scenario; print how each
conversation ended and write the conversations for `assay evaluate`.

The command parses its options, calls `assay.simulation.file_run.simulate_file` (which checks
everything before any call, runs, and writes --output) and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Scenarios = Annotated[Path, typer.Argument(help="Scenario file: .jsonl, .json or .csv")]
Agent = Annotated[
    str,
    typer.Option(
        "--agent",
        "-a",
        help="module:function, path/to/file.py:function, or the URL of an HTTP agent",
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write the finished conversations as evaluation rows (.jsonl)"
    ),
]
UserLlm = Annotated[
    str | None,
    typer.Option("--user-llm", help="Model that plays the user (default: the default judge)"),
]
JudgeLlm = Annotated[
    str | None,
    typer.Option(
        "--judge-llm", help="Model that decides when the goal is met (default: --user-llm)"
    ),
]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Endpoint of an OpenAI-compatible model server")
]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the response cache")
]
MaxTurns = Annotated[int, typer.Option("--max-turns", help="Most user messages per conversation")]
Concurrency = Annotated[int, typer.Option("--concurrency", help="Conversations at once")]
RunDir = Annotated[
    Path | None,
    typer.Option("--run-dir", help="Save conversations as they finish; rerun to resume"),
]
Budget = Annotated[
    float | None, typer.Option("--budget", help="Stop making model calls after this many USD")
]
Estimate = Annotated[
    bool, typer.Option("--estimate", help="Print an upper bound on calls and cost; call nothing")
]
AgentTimeout = Annotated[
    float, typer.Option("--agent-timeout", help="Seconds allowed for one agent reply")
]
LoopLimit = Annotated[
    int, typer.Option("--loop-limit", help="The same reply this many times in a row is a loop")
]
Language = Annotated[str, typer.Option("--language", help="Language of the user's prompts")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar")]


def simulate_command(
    scenarios: Scenarios,
    agent: Agent,
    output: Output = None,
    user_llm: UserLlm = None,
    judge_llm: JudgeLlm = None,
    base_url: BaseUrl = None,
    no_cache: NoCache = False,
    max_turns: MaxTurns = 10,
    concurrency: Concurrency = 4,
    run_dir: RunDir = None,
    budget: Budget = None,
    estimate: Estimate = False,
    agent_timeout: AgentTimeout = 300.0,
    loop_limit: LoopLimit = 3,
    language: Language = "english",
    progress: Progress = True,
) -> None:
    """Simulate a conversation with the agent for every scenario and print how each ended.

    Exit codes:
    0  every conversation ended (goal met, gave up or max turns)
    1  at least one conversation ended in an error (listed)
    2  a usage or data error, reported in one line before any call
    """
    from assay.cli.console import stderr, stdout
    from assay.simulation.file_run import SimulateFileOptions, simulate_file
    from assay.simulation.result import report_simulation

    options = SimulateFileOptions(
        output=output,
        user_llm=user_llm,
        judge_llm=judge_llm,
        base_url=base_url,
        cache=not no_cache,
        max_turns=max_turns,
        concurrency=concurrency,
        run_dir=run_dir,
        budget=budget,
        loop_limit=loop_limit,
        agent_timeout=agent_timeout,
        language=language,
        show_progress=progress,
    )
    try:
        result = simulate_file(scenarios, agent, options, estimate=estimate)
    except KeyboardInterrupt:
        stderr.print(f"interrupted; finished conversations are kept in --run-dir {run_dir}")
        raise typer.Exit(130) from None
    if report_simulation(result, stdout, output=output):
        raise typer.Exit(1)
