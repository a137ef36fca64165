"""Claim extraction and support checks shared by faithfulness, factual correctness and others.

Identical requests are answered once per run (the LLM layer merges concurrent duplicates and
caches), so metrics that split the same response share that call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, Field

from assay.errors import NotApplicable, OutputParseError, OutputTruncated
from assay.metrics.judge import Verdict, ask_json, ask_verdicts, consecutive_calls
from assay.metrics.rag.anchor import NO_SHARED_WORD, unanchored
from assay.metrics.text import OFF_LOOP_CHARS, asplit_sentences, split_sentences
from assay.prompts.prompt import Prompt

T = TypeVar("T")


class ClaimList(BaseModel):
    claims: list[str] = Field(default_factory=list)


async def extract_claims(llm: Any, prompt: Prompt, text: str, question: str = "") -> list[str]:
    # A budget in proportion to the text: a small judge that starts looping is cut off early (and
    # retried with a larger budget by the model layer) instead of filling its whole context window.
    budget = min(2048, 128 + len(text) // 2)
    answer = await ask_json(
        llm, prompt, {"question": question or "(none)", "text": text}, ClaimList, max_tokens=budget
    )
    return [claim.strip() for claim in answer.claims if claim and claim.strip()]


async def statements_of(
    llm: Any, prompt: Prompt | None, text: str, question: str = ""
) -> list[str]:
    """What a text states, one item per check: its sentences when `prompt` is None (no call), else
    the claims the judge splits it into. Same prompt, text and question -> same request, answered
    once per run for every metric that asks."""
    if prompt is None:
        return await asplit_sentences(text)
    return await extract_claims(llm, prompt, text, question)


async def grounded_statements(
    metric: Any, response: str, contexts: Sequence[str], question: str | None
) -> tuple[str, list[str]]:
    """The joined contexts and the statements of a response to check against them, for a metric
    with `statements` ("sentences" or "claims"), `llm` and `judge_prompt("claims")`; the cases
    with nothing to check are `NotApplicable`."""
    if not response.strip():
        raise NotApplicable("the response is empty")
    source = join_contexts(contexts)
    if not source:
        raise NotApplicable("there are no retrieved contexts to check the response against")
    prompt = metric.judge_prompt("claims") if metric.statements != "sentences" else None
    statements = await statements_of(metric.llm, prompt, response, question or "")
    if not statements:
        raise NotApplicable("the response makes no factual claims to check")
    return source, statements


@dataclass
class CrossCheck:
    """Statements of a response checked against a reference, and the reference's against the
    response; statements the judge skipped are left out of the verdict lists and kept apart."""

    response_claims: list[str]
    response_verdicts: list[Verdict]
    reference_claims: list[str]
    reference_verdicts: list[Verdict]
    unjudged: list[str]


def checked_per_call(value: Any) -> int | None:
    """A metric's `statements_per_call` option: a whole number of at least 1, or None (one list)."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(
            f"statements_per_call must be at least 1 (or None for one list), got {value!r}"
        )
    return value


async def cross_check(
    llm: Any,
    claims_prompt: Prompt | None,
    supported: Prompt,
    response: str,
    reference: str,
    question: str = "",
    *,
    both_ways: bool = True,
    empty_response: str | None = None,
    per_call: int | None = None,
) -> CrossCheck:
    """Split both texts (concurrently), then check each side against the other (concurrently).
    `both_ways=False` checks only the response against the reference (the reference is not split);
    with `empty_response`, a response without statements is NotApplicable before any check.
    `per_call` is check_support's: statements per verdict list (None: one list per side)."""
    texts = {"response": response, **({"reference": reference} if both_ways else {})}
    sources = {"response": reference, "reference": response}
    found: dict[str, list[str]] = {}
    checks: dict[str, list[Verdict | None]] = {}

    async def split(key: str) -> None:
        found[key] = await statements_of(llm, claims_prompt, texts[key], question)

    async def check(key: str) -> None:
        checks[key] = (
            await check_support(llm, supported, sources[key], found[key], per_call=per_call)
            if found[key]
            else []
        )

    async with anyio.create_task_group() as group:
        for key in texts:
            group.start_soon(split, key)
    if empty_response is not None and not found["response"]:
        raise NotApplicable(empty_response)
    async with anyio.create_task_group() as group:
        for key in texts:
            group.start_soon(check, key)
    response_claims, response_verdicts, skipped = judged(found["response"], checks["response"])
    reference_claims, reference_verdicts, skipped_reference = judged(
        found.get("reference", []), checks.get("reference", [])
    )
    return CrossCheck(
        response_claims,
        response_verdicts,
        reference_claims,
        reference_verdicts,
        skipped + skipped_reference,
    )


# Sources longer than this are judged in pieces. Small local judges have 4k-token windows; a long
# document is split at sentence boundaries rather than cut, and a statement counts as supported
# when any piece supports it.
MAX_SOURCE_CHARS = 6000


def chunk_text(text: str, max_chars: int = MAX_SOURCE_CHARS) -> list[str]:
    """Pieces of at most `max_chars`, cut between sentences (a single longer sentence is cut hard)."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in split_sentences(text):
        while len(sentence) > max_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:max_chars])
            sentence = sentence[max_chars:]
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return pieces


async def over_pieces(
    text: str, judge: Callable[[str], Awaitable[T]], *, max_chars: int = MAX_SOURCE_CHARS
) -> list[T]:
    """`judge` applied to each piece of `text` (just `text` when it fits), concurrently, in order.
    How a metric merges the pieces' answers is its own business."""
    pieces = (
        chunk_text(text, max_chars)
        if len(text) <= OFF_LOOP_CHARS  # else split off the event loop
        else await anyio.to_thread.run_sync(chunk_text, text, max_chars, abandon_on_cancel=True)
    )
    if len(pieces) == 1:
        return [await judge(text)]
    results: list[Any] = [None] * len(pieces)

    async def run(index: int) -> None:
        results[index] = await judge(pieces[index])

    async with anyio.create_task_group() as group:
        for index in range(len(pieces)):
            group.start_soon(run, index)
    return results


async def check_support(
    llm: Any,
    prompt: Prompt,
    source: str,
    statements: Sequence[str],
    *,
    max_source_chars: int = MAX_SOURCE_CHARS,
    per_call: int | None = None,
    anchor: bool = False,
) -> list[Verdict | None]:
    """Does `source` support each statement? One call per source piece (usually one); None for a
    statement no piece judged.

    `anchor=True` first applies the lexical anchor (metrics/rag/anchor.py): a statement that
    shares no content word with the source is unsupported without a call (its verdict's
    `decided_by` says so) and is not shown to the judge, so it cannot sway the others either.

    `per_call=k` asks the statements in lists of at most k per piece instead of all at once, with
    the same prompt (so aligned examples still apply). A small judge "herds" along a long list:
    once it has written a few "yes" lines, its P(yes) drifts up whatever the statement, so
    unsupported statements late in a long answer pass; short lists start afresh. With k=1 no
    statement sees another: a sentence that addresses the judge cannot sway its neighbours, and
    a lone statement that leads the judge to answer items it was never given (a fake verdict
    list, "answer yes to all") is judged unsupported. A piece's lists are asked one after
    another on one held slot of the endpoint (`LLM.consecutive`), so a llama.cpp server keeps
    the shared prefix (instruction, examples, source) in that slot and reads only the new
    statements. A list whose answer cannot be read leaves its statements unjudged; only when no
    list could be read is that an error. A list of several statements cut off at the token limit
    is an error (`OutputTruncated`) of the whole call, never a score over the other lists."""

    if per_call is not None and per_call < 1:
        raise ValueError(f"per_call must be at least 1, got {per_call}")

    async def judge(piece: str) -> list[Verdict | None]:
        if per_call is None:
            return await ask_verdicts(llm, prompt, {"source": piece}, list(statements))
        verdicts: list[Verdict | None] = []
        failure: OutputParseError | OutputTruncated | None = None
        async with consecutive_calls(llm):
            for start in range(0, len(statements), per_call):
                group = list(statements[start : start + per_call])
                try:
                    verdicts.extend(
                        await ask_verdicts(
                            llm,
                            prompt,
                            {"source": piece},
                            group,
                            # a lone statement answered with a list was steering the judge
                            on_extra_items="negative" if len(group) == 1 else "ignore",
                        )
                    )
                except (OutputParseError, OutputTruncated) as exc:
                    if isinstance(exc, OutputTruncated) and len(group) > 1:
                        # a list cut off at the token limit (after the model layer asked again
                        # with larger budgets): scoring the statements of the other lists would
                        # report another number as if it were complete
                        raise
                    # an unreadable list, or one statement whose answer never ends (a sentence
                    # that sets the judge writing prose): its statements are unjudged, as items
                    # skipped in a list, and the row's reason and details say how many
                    verdicts.extend([None] * len(group))
                    failure = exc
        if failure is not None and all(v is None for v in verdicts):
            raise failure
        return verdicts

    if anchor:
        loose = (
            unanchored(statements, source)
            if len(source) <= OFF_LOOP_CHARS  # else read the words off the event loop
            else await anyio.to_thread.run_sync(
                unanchored, statements, source, abandon_on_cancel=True
            )
        )
        if any(loose):
            asked = [s for s, away in zip(statements, loose, strict=True) if not away]
            answers = iter(
                await check_support(
                    llm, prompt, source, asked, max_source_chars=max_source_chars, per_call=per_call
                )
                if asked
                else []
            )
            negative = Verdict(prompt.choices[1].lower(), 0.0, decided_by=NO_SHARED_WORD)
            return [negative if away else next(answers) for away in loose]
    results = await over_pieces(source, judge, max_chars=max_source_chars)
    if len(results) == 1:
        return results[0]
    return [merge_verdicts([piece[i] for piece in results]) for i in range(len(statements))]


def merge_verdicts(verdicts: Sequence[Verdict | None]) -> Verdict | None:
    """Supported by any piece: keep the most confident supporting verdict."""
    present = [v for v in verdicts if v is not None]
    return max(present, key=lambda v: v.probability) if present else None


def judged(
    items: Sequence[str], verdicts: Sequence[Verdict | None]
) -> tuple[list[str], list[Verdict], list[str]]:
    """Split into (items with a verdict, their verdicts, items the judge skipped)."""
    kept = [
        (item, verdict)
        for item, verdict in zip(items, verdicts, strict=True)
        if verdict is not None
    ]
    skipped = [item for item, verdict in zip(items, verdicts, strict=True) if verdict is None]
    return [item for item, _ in kept], [verdict for _, verdict in kept], skipped


def skipped_note(skipped: Sequence[str]) -> str:
    return (
        f"; the judge gave no verdict on {len(skipped)} item(s), left out of the score"
        if skipped
        else ""
    )


def join_contexts(contexts: Sequence[str]) -> str:
    return "\n\n".join(context.strip() for context in contexts if context and context.strip())


def claim_details(claims: Sequence[str], verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [
        {
            "claim": claim,
            "verdict": verdict.label,
            "probability": round(verdict.probability, 4),
            **({"decided_by": verdict.decided_by} if verdict.decided_by != "judge" else {}),
        }
        for claim, verdict in zip(claims, verdicts, strict=True)
    ]


__all__ = [
    "MAX_SOURCE_CHARS",
    "ClaimList",
    "CrossCheck",
    "check_support",
    "chunk_text",
    "claim_details",
    "cross_check",
    "extract_claims",
    "join_contexts",
    "judged",
    "merge_verdicts",
    "over_pieces",
    "skipped_note",
    "statements_of",
]
