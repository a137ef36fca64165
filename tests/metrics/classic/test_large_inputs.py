"""The classic metrics on 1 MB inputs: a value in bounded time, or a typed error naming a limit
(issue #14 item 4).

ROUGE-L (rouge-score's Python table), Levenshtein and Jaro (rapidfuzz) and the non-LLM context
metrics are quadratic, and every classic metric used to compute on the event loop, so a large
cell could neither finish nor be timed out. These tests are bounded by pytest-timeout markers,
never by timed assertions; speed is measured in benchmarks/classic_metrics_large_inputs.py.
"""

from __future__ import annotations

import random

import anyio
import pytest
import sacrebleu
from rapidfuzz import distance
from rouge_score import rouge_scorer

from assay import AIMessage, HumanMessage, MetricError, ToolCall, UsageError, evaluate
from assay.metrics.classic import (
    BleuScore,
    CHRFScore,
    DataCompyScore,
    DistanceMeasure,
    ExactMatch,
    IDBasedContextPrecision,
    IDBasedContextRecall,
    NonLLMContextPrecisionWithReference,
    NonLLMContextRecall,
    NonLLMStringSimilarity,
    RougeScore,
    StringPresence,
    ToolCallAccuracy,
    ToolCallF1,
)
from assay.metrics.classic._offload import OFF_LOOP_CHARS, released_gil, size_of
from assay.metrics.classic.rouge import lcs_length
from assay.schema.outcome import Error, Ok

MB = 1_000_000

_LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
_RNG = random.Random(0)
VOCABULARY = ["the", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "as"] + [
    "".join(_RNG.choices(_LETTERS, weights=range(26, 0, -1), k=_RNG.randint(3, 11)))
    for _ in range(3000)
]
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]  # Zipf, as in prose


def prose(chars: int, seed: int, sep: str = " ") -> str:
    rng = random.Random(seed)
    sentences, size = [], 0
    while size < chars:
        words = rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(6, 30))
        sentences.append(" ".join(words).capitalize() + ".")
        size += len(sentences[-1]) + 1
    return sep.join(sentences)[:chars]


def perturb(text: str, seed: int, rate: float = 0.1) -> str:
    """`text` with a share `rate` of its words replaced: a response close to its reference."""
    rng = random.Random(seed)
    words = text.split(" ")
    return " ".join(rng.choice(VOCABULARY) if rng.random() < rate else w for w in words)


def pair(chars: int, seed: int = 1, sep: str = " ") -> dict[str, str]:
    reference = prose(chars, seed, sep)
    return {"response": perturb(reference, seed + 1)[:chars], "reference": reference}


@pytest.fixture(scope="module")
def huge() -> dict[str, str]:
    return pair(MB)


def refusal(metric, **fields) -> str:
    with pytest.raises(MetricError) as caught:
        metric.score(**fields)
    return str(caught.value)


# -- each metric on 1 MB: a value, or a MetricError naming the limit ----------------------------------
@pytest.mark.timeout(60)
def test_bleu_scores_a_megabyte_as_sacrebleu_does(huge):
    assert 0 < BleuScore().score(**huge).value < 1
    small = pair(3 * OFF_LOOP_CHARS)  # scored in the worker thread
    expected = sacrebleu.corpus_bleu([small["response"]], [[small["reference"]]]).score / 100
    assert BleuScore().score(**small).value == expected


@pytest.mark.timeout(60)
def test_chrf_scores_a_megabyte_as_sacrebleu_does(huge):
    assert 0 < CHRFScore().score(**huge).value < 1
    small = pair(3 * OFF_LOOP_CHARS)
    expected = sacrebleu.corpus_chrf([small["response"]], [[small["reference"]]]).score / 100
    assert CHRFScore().score(**small).value == expected


@pytest.mark.timeout(60)
def test_rouge_l_scores_a_megabyte(huge):
    # About 170,000 tokens a side: under the 200,000 limit; rouge-score's own table would need
    # 29 billion cells.
    result = RougeScore().score(**huge)
    assert 0.5 < result.value < 1
    assert result.details["precision"] > 0


@pytest.mark.timeout(120)
def test_rouge_l_equals_rouge_score_on_texts_it_can_finish():
    rng = random.Random(3)
    cases = [("", "a b"), ("a b", ""), ("The cats sat.", "the cat sat"), ("x y z", "a b c")]
    for seed in range(40):
        reference = prose(rng.choice([20, 200, 1_500]), seed)
        response = perturb(reference, seed, rate=rng.choice([0.0, 0.2, 1.0]))
        cases.append((reference, response if seed % 3 else prose(len(reference), seed + 99)))
    cases.append((prose(12_000, 5), perturb(prose(12_000, 5), 6)))  # about 2,000 tokens a side
    for reference, response in cases:
        for stem in (True, False):
            want = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem).score(reference, response)
            got = RougeScore(use_stemmer=stem, mode="fmeasure").score(
                response=response, reference=reference
            )
            assert got.value == want["rougeL"].fmeasure
            assert got.details["precision"] == want["rougeL"].precision
            assert got.details["recall"] == want["rougeL"].recall


def test_lcs_length_ignores_tokens_the_other_side_lacks():
    assert lcs_length(["a", "b", "c", "b"], ["b", "x", "c", "y"]) == 2
    assert lcs_length(["a"], ["b"]) == 0
    long_a = [f"t{i % 97}" for i in range(500)]
    long_b = [f"t{i % 89}" for i in range(450)]
    table = rouge_scorer._lcs_table(long_a, long_b)
    assert lcs_length(long_a, long_b) == table[-1][-1]


@pytest.mark.timeout(60)
def test_rouge_1_scores_a_megabyte_and_equals_rouge_score_below_it(huge):
    assert 0.5 < RougeScore(rouge_type="rouge1").score(**huge).value < 1
    small = pair(3 * OFF_LOOP_CHARS)
    want = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(
        small["reference"], small["response"]
    )
    assert RougeScore(rouge_type="rouge1").score(**small).value == want["rouge1"].fmeasure


@pytest.mark.timeout(60)
def test_rouge_lsum_refuses_a_megabyte_naming_the_limit():
    lines = pair(MB, sep="\n")
    message = refusal(RougeScore(rouge_type="rougeLsum"), **lines)
    assert message.startswith("rouge_score (rougeLsum): response has ")
    assert "tokens" in message and "limit 3,000 × 3,000 tokens" in message
    assert "raise max_tokens" in message


@pytest.mark.timeout(60)
def test_rouge_lsum_below_its_limit_equals_rouge_score():
    lines = pair(8_000, sep="\n")  # about 1,300 tokens a side
    want = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True).score(
        lines["reference"], lines["response"]
    )
    assert RougeScore(rouge_type="rougeLsum").score(**lines).value == want["rougeLsum"].fmeasure


def test_rouge_l_limit_is_a_field_users_may_lower_or_raise():
    text = pair(2_000)
    message = refusal(RougeScore(max_tokens=100), **text)
    assert "rouge_score (rougeL): response has " in message
    assert "limit 100 × 100 tokens (raise max_tokens to allow more)" in message
    assert RougeScore(max_tokens=10_000).score(**text).value == RougeScore().score(**text).value
    # A short text against a long one passes while the product stays under the limit squared.
    assert RougeScore(max_tokens=100).score(response="the cat", reference=text["reference"])


@pytest.mark.timeout(60)
def test_levenshtein_refuses_a_megabyte_naming_the_limit(huge):
    message = refusal(NonLLMStringSimilarity(), **huge)
    assert message == (
        "non_llm_string_similarity (levenshtein): response has 1,000,000 characters and "
        "reference 1,000,000; the edit distance costs time in proportion to their product, "
        "limit 300,000 × 300,000 characters (raise max_chars to allow more)"
    )
    # Against a short reference the work is linear, and allowed.
    short = NonLLMStringSimilarity().score(response=huge["response"], reference="The cat.")
    assert short.value == distance.Levenshtein.normalized_similarity("The cat.", huge["response"])


@pytest.mark.timeout(60)
def test_hamming_scores_a_megabyte_exactly(huge):
    metric = NonLLMStringSimilarity(distance_measure=DistanceMeasure.HAMMING)
    expected = distance.Hamming.normalized_similarity(huge["reference"], huge["response"])
    assert metric.score(**huge).value == expected


@pytest.mark.timeout(60)
@pytest.mark.parametrize("measure", ["jaro", "jaro_winkler"])
def test_jaro_refuses_a_megabyte_and_scores_at_its_limit(huge, measure):
    message = refusal(NonLLMStringSimilarity(distance_measure=measure), **huge)
    assert message.startswith(f"non_llm_string_similarity ({measure}): response has 1,000,000")
    assert "limit 300,000 × 300,000 characters (raise max_chars to allow more)" in message
    at_limit = pair(300_000)
    value = NonLLMStringSimilarity(distance_measure=measure).score(**at_limit).value
    assert 0.5 < value < 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("measure", list(DistanceMeasure))
def test_a_large_pair_off_the_loop_has_the_value_of_the_direct_call(measure):
    small = pair(2 * OFF_LOOP_CHARS)
    scorer = getattr(
        distance, {"jaro_winkler": "JaroWinkler"}.get(measure.value, measure.value.title())
    )
    want = scorer.normalized_similarity(small["reference"], small["response"])
    assert NonLLMStringSimilarity(distance_measure=measure).score(**small).value == want


@pytest.mark.parametrize("scorer", [distance.Levenshtein, distance.Hamming])
def test_the_gil_releasing_path_gives_the_direct_calls_value_bit_for_bit(scorer):
    # (Not Jaro: cdist's Jaro differs from the direct call in the last bit for about one pair
    # in ten, so Jaro is always called directly.)
    rng = random.Random(11)
    for case in range(150):
        alphabet = rng.choice(["ab", "abcdefghijklmnopqrstuvwxyz ", "aé中 x"])
        a = "".join(rng.choices(alphabet, k=rng.randint(1, 2_000)))
        if case % 2:
            b = "".join(rng.choices(alphabet, k=rng.randint(1, 2_000)))
        else:
            b = perturb(prose(rng.randint(1, 2_000), case), case)
        assert released_gil(scorer.normalized_similarity, a, b) == scorer.normalized_similarity(
            a, b
        )


def test_max_chars_is_validated_and_kept_out_of_the_spec():
    with pytest.raises(UsageError, match="max_chars"):
        NonLLMStringSimilarity(max_chars=0)
    with pytest.raises(UsageError, match="max_tokens"):
        RougeScore(max_tokens=True)
    assert NonLLMStringSimilarity(max_chars=10).spec() == NonLLMStringSimilarity().spec()
    assert RougeScore(max_tokens=10).spec() == RougeScore().spec()
    assert NonLLMContextRecall(max_chars=10).spec() == NonLLMContextRecall().spec()
    refused = refusal(NonLLMStringSimilarity(max_chars=10), response="x" * 11, reference="y" * 11)
    assert "limit 10 × 10 characters" in refused


@pytest.mark.timeout(10)
def test_exact_match_and_string_presence_on_a_megabyte(huge):
    assert ExactMatch().score(**huge).value == 0.0
    assert (
        StringPresence().score(response=huge["reference"], reference=huge["reference"]).value == 1
    )
    needle = huge["reference"][400_000:600_000]
    assert StringPresence().score(response=huge["reference"], reference=needle).value == 1.0


def contexts(total: int, count: int) -> dict[str, list[str]]:
    each = total // count
    reference = [prose(each, 100 + i) for i in range(count)]
    retrieved = [
        perturb(reference[i], 200 + i)[:each] if i % 2 else prose(each, 300 + i)
        for i in range(count)
    ]
    return {"retrieved_contexts": retrieved, "reference_contexts": reference}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("metric_class", [NonLLMContextPrecisionWithReference, NonLLMContextRecall])
def test_context_metrics_refuse_a_megabyte_of_contexts_naming_the_limit(metric_class):
    message = refusal(metric_class(), **contexts(MB, 10))
    assert message.startswith(f"{metric_class().name} (levenshtein): retrieved_contexts have ")
    assert "limit 300,000 × 300,000 characters (raise max_chars to allow more)" in message


@pytest.mark.timeout(60)
def test_context_metrics_score_a_large_grid_off_the_loop_as_pair_by_pair():
    fields = contexts(100_000, 10)
    result = NonLLMContextRecall().score(**fields)
    best = [
        max(
            distance.Levenshtein.normalized_similarity(ref, ret)
            for ret in fields["retrieved_contexts"]
        )
        for ref in fields["reference_contexts"]
    ]
    assert result.details["best_similarity"] == best
    assert result.value == 0.5  # the five close copies, not the five unrelated texts
    precision = NonLLMContextPrecisionWithReference(distance_measure="jaro").score(**fields)
    assert 0 < precision.value < 1


@pytest.mark.timeout(60)
def test_id_context_metrics_on_a_megabyte_of_ids():
    count = MB // 11
    fields = {
        "retrieved_context_ids": [f"doc-{i:06d}" for i in range(count)],
        "reference_context_ids": [f"doc-{i:06d}" for i in range(count // 2, count + count // 2)],
    }
    assert IDBasedContextPrecision().score(**fields).value == pytest.approx(0.5, abs=1e-4)
    assert IDBasedContextRecall().score(**fields).value == pytest.approx(0.5, abs=1e-4)


@pytest.mark.timeout(60)
def test_datacompy_compares_a_megabyte_of_csv():
    rows = ["id,name,value"] + [f"{i},{VOCABULARY[i % 3000]},{i * 0.5}" for i in range(60_000)]
    reference = "\n".join(rows) + "\n"
    assert len(reference) > MB
    last_id = rows[-1].split(",")[0]
    changed = "\n".join([*rows[:-1], f"{last_id},changed,0"]) + "\n"
    result = DataCompyScore(metric="recall").score(response=changed, reference=reference)
    assert result.value == (len(rows) - 2) / (len(rows) - 1)


def tool_fields(chars: int) -> dict:
    half = chars // 2
    filters = {f"field_{i:05d}": f"value {i}" for i in range(half // 24)}
    want = ToolCall(name="search", args={"query": prose(half, 7), "filters": filters})
    made = ToolCall(
        name="search", args={"query": perturb(want.args["query"], 8), "filters": dict(filters)}
    )
    conversation = [HumanMessage(content="Find it."), AIMessage(content="", tool_calls=[made])]
    return {"user_input": conversation, "reference_tool_calls": [want]}


@pytest.mark.timeout(60)
def test_tool_call_metrics_on_a_megabyte_of_arguments():
    fields = tool_fields(MB)
    assert ToolCallAccuracy().score(**fields).value == 0.5  # filters match, the query does not
    assert ToolCallAccuracy(strict_order=False).score(**fields).value == 0.5
    assert ToolCallF1().score(**fields).value == 0.0
    # A string comparison of the 500,000-character query is over Levenshtein's limit.
    message = refusal(ToolCallAccuracy(arg_comparison_metric=NonLLMStringSimilarity()), **fields)
    assert message.startswith("non_llm_string_similarity (levenshtein): response has ")
    assert "limit 300,000 × 300,000 characters" in message
    hamming = NonLLMStringSimilarity(distance_measure="hamming")
    assert 0.5 < ToolCallAccuracy(arg_comparison_metric=hamming).score(**fields).value < 1


def test_size_of_counts_strings_inside_containers_and_stops_at_the_cap():
    assert size_of("abc", ["de", {"f": "gh"}]) == 3 + 1 + 2 + 1 + 1 + 2
    assert size_of(ToolCall(name="n", args={"q": "xyz"})) == 1 + 1 + 1 + 1 + 3
    assert size_of(["x"] * 10_000_000, cap=100) <= 102


# -- the event loop keeps turning, and the engine's timeout fires ----------------------------------
def ticks_while(coroutine_function, **fields) -> int:
    """How often a 1 ms ticker ran while `coroutine_function(**fields)` was computing."""
    counted: list[int] = []

    async def main() -> None:
        ticks = 0
        finished = anyio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not finished.is_set():
                await anyio.sleep(0.001)
                ticks += 1

        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            await anyio.sleep(0)
            await coroutine_function(**fields)
            counted.append(ticks)
            finished.set()

    anyio.run(main)
    return counted[0]


def as_contexts(fields: dict[str, str]) -> dict[str, list[str]]:
    return {"retrieved_contexts": [fields["response"]], "reference_contexts": [fields["reference"]]}


LOOP_CASES = {
    # rapidfuzz holds the GIL through one comparison: a worker thread alone would not do.
    "levenshtein": (NonLLMStringSimilarity(), lambda: pair(200_000)),
    "contexts": (NonLLMContextRecall(), lambda: as_contexts(pair(200_000))),
    # 10,000 pairs of 100 characters: small each, slow together.
    "many small contexts": (NonLLMContextRecall(), lambda: contexts(20_000, 100)),
    "rougeL": (RougeScore(), lambda: pair(200_000)),
    # rouge-score's pure-Python tables: about a second at 10 KB a side.
    "rougeLsum": (RougeScore(rouge_type="rougeLsum"), lambda: pair(10_000, sep="\n")),
    "chrf": (CHRFScore(), lambda: pair(200_000)),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", list(LOOP_CASES))
def test_a_large_comparison_leaves_the_event_loop_running(case):
    metric, fields = LOOP_CASES[case]
    # A blocked loop would not tick at all.
    assert ticks_while(metric.ascore, **fields()) >= 2


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "metric", [NonLLMStringSimilarity(), NonLLMContextRecall()], ids=["pair", "contexts"]
)
def test_a_slow_large_cell_times_out_on_time_and_the_other_rows_are_scored(metric):
    # Two 300,000-character texts (the default limit): seconds of work, well over the timeout.
    big = pair(300_000)
    if isinstance(metric, NonLLMContextRecall):
        rows = [{"retrieved_contexts": [big["response"]], "reference_contexts": [big["reference"]]}]
        rows += [{"retrieved_contexts": ["a cat"], "reference_contexts": ["a cat"]}] * 3
    else:
        rows = [big] + [{"response": "a cat", "reference": "a cat"}] * 3
    result = evaluate(rows, [metric], timeout=0.5, show_progress=False)
    outcome = result.outcome(0, metric.name)
    # Scored inline, the cell would have finished late as Ok: the timeout could not interrupt it.
    assert isinstance(outcome, Error) and outcome.error_type == "Timeout", outcome
    for row in (1, 2, 3):
        scored = result.outcome(row, metric.name)
        assert isinstance(scored, Ok) and scored.value == 1.0, scored


@pytest.mark.timeout(60)
def test_a_refused_cell_is_a_metric_error_outcome_in_a_run():
    rows = [pair(MB), {"response": "a cat", "reference": "a cat"}]
    result = evaluate(rows, [NonLLMStringSimilarity()], show_progress=False)
    outcome = result.outcome(0, "non_llm_string_similarity")
    assert isinstance(outcome, Error) and outcome.error_type == "MetricError", outcome
    assert "limit 300,000 × 300,000 characters" in outcome.message
    assert result.outcome(1, "non_llm_string_similarity").value == 1.0
