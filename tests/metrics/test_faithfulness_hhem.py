"""FaithfulnesswithHHEM through a tiny ONNX classifier these tests build, and through HTTP.

The model: a WordLevel tokenizer and a graph whose logits are [0, sum of per-token weights over
the unmasked tokens], so P(consistent) = sigmoid(sum of the weights) exactly. "evidence" weighs
+3, "claim" -1, "contradicts" -6, other tokens 0. It also holds a position table of
`MAX_POSITIONS` rows that every input gathers from, so like a real transformer it fails on a
sequence longer than that: windowing is needed, not cosmetic.
"""

from __future__ import annotations

import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

import assay
from assay import SingleTurnSample, evaluate
from assay.errors import MetricError, UsageError
from assay.metrics import FaithfulnesswithHHEM
from assay.models.nli_classifier import ClassifierFailed, OnnxNLIClassifier
from assay.models.nli_http import HttpNLIClassifier
from assay.schema.dataset import EvaluationDataset
from tests.metrics.rag.scripted import claims, judge

WEIGHTS = {"evidence": 3.0, "claim": -1.0, "contradicts": -6.0}
WORDS = ["evidence", "claim", "contradicts", "filler", "the", "moon", "is", "made", "of", "rock"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
MAX_POSITIONS = 32


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def expected(premise: str, hypothesis: str) -> float:
    words = re.findall(r"\w+", f"{premise} {hypothesis}".lower())
    return sigmoid(sum(WEIGHTS.get(w, 0.0) for w in words))


def build_classifier(directory: Path, *, max_positions: int = MAX_POSITIONS, config=None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate([*SPECIALS, *WORDS])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.save(str(directory / "tokenizer.json"))

    table = np.zeros((len(vocab), 2), dtype=np.float32)
    for word, weight in WEIGHTS.items():
        table[vocab[word], 1] = weight
    nodes = [
        helper.make_node("Shape", ["input_ids"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["length"], axis=0),
        helper.make_node("Range", ["zero", "length", "one"], ["positions"]),
        helper.make_node("Gather", ["position_table", "positions"], ["position_rows"], axis=0),
        helper.make_node("Gather", ["token_table", "input_ids"], ["token_rows"], axis=0),
        helper.make_node("Add", ["token_rows", "position_rows"], ["rows"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_float", "last_axis"], ["mask3"]),
        helper.make_node("Mul", ["rows", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "seq_axis"], ["logits"], keepdims=0),
    ]
    initializers = [
        numpy_helper.from_array(table, "token_table"),
        numpy_helper.from_array(np.zeros((max_positions, 2), np.float32), "position_table"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([-1], np.int64), "last_axis"),
        numpy_helper.from_array(np.array([1], np.int64), "seq_axis"),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-nli",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 2])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(directory / "model.onnx"))
    (directory / "config.json").write_text(
        json.dumps(
            config
            or {
                "id2label": {"0": "hallucinated", "1": "consistent"},
                "max_position_embeddings": max_positions,
            }
        )
    )
    return directory


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return build_classifier(tmp_path_factory.mktemp("tiny-nli"))


CONTEXT = ["The moon is made of evidence rock."]


# -- the metric through the real judge path and the real ONNX model ------------------------------
def test_statements_from_the_judge_are_scored_by_the_classifier(model_dir):
    llm, provider = judge(claims("The moon claim is rock.", "The claim contradicts the moon."))
    metric = FaithfulnesswithHHEM(llm=llm, classifier=str(model_dir))
    result = metric.score(response="anything", retrieved_contexts=CONTEXT, user_input="q")
    # one judge call (the claim split); the verdicts come from the classifier
    assert len(provider.requests) == 1
    assert provider.requests[0].output is not None
    p_first = expected(CONTEXT[0], "The moon claim is rock.")  # 3 - 1 = 2
    p_second = expected(CONTEXT[0], "The claim contradicts the moon.")  # 3 - 1 - 6 = -4
    assert p_first == pytest.approx(sigmoid(2.0)) and p_second == pytest.approx(sigmoid(-4.0))
    assert [c["probability"] for c in result.details["claims"]] == [
        round(p_first, 4),
        round(p_second, 4),
    ]
    assert [c["verdict"] for c in result.details["claims"]] == ["yes", "no"]
    assert result.value == 0.5
    assert result.reason.startswith("1 of 2 claims are supported")


def test_threshold_decides_supported(model_dir):
    llm, _ = judge(claims("The moon claim is rock."), repeat_last=True)
    loose = FaithfulnesswithHHEM(llm=llm, classifier=str(model_dir), threshold=0.85)
    strict = FaithfulnesswithHHEM(llm=llm, classifier=str(model_dir), threshold=0.9)
    assert loose.score(response="x", retrieved_contexts=CONTEXT).value == 1.0  # 0.8808 >= 0.85
    assert strict.score(response="x", retrieved_contexts=CONTEXT).value == 0.0


def test_sentence_statements_need_no_judge_and_run_in_evaluate(model_dir):
    metric = FaithfulnesswithHHEM(classifier=str(model_dir), statements="sentences")
    assert metric.needs_llm is False
    data = EvaluationDataset(
        samples=[
            SingleTurnSample(
                response="The claim is rock. The claim contradicts.", retrieved_contexts=CONTEXT
            ),
            SingleTurnSample(response="Filler claim.", retrieved_contexts=["the moon"]),
        ]
    )
    result = evaluate(data, [metric], show_progress=False)
    assert result.errors() == []
    assert result["faithfulness_with_hhem"] == [0.5, 0.0]


def test_batches_hold_batch_size_pairs_and_padding_changes_nothing(model_dir):
    statements = [("claim " * (i % 5 + 1)).strip() + " rock" for i in range(23)]
    pairs = [(CONTEXT[0], s) for s in statements]
    classifier = OnnxNLIClassifier(model_dir)
    import anyio

    in_tens = anyio.run(lambda: classifier.consistency(pairs, batch_size=10))
    assert [rows for rows, _ in classifier.batch_shapes] == [10, 10, 3]
    classifier.batch_shapes.clear()
    one_by_one = anyio.run(lambda: classifier.consistency(pairs, batch_size=1))
    assert len(classifier.batch_shapes) == 23
    assert in_tens == pytest.approx(one_by_one, abs=1e-6)
    assert in_tens == pytest.approx([expected(*pair) for pair in pairs], abs=1e-6)


def test_metric_passes_its_batch_size(model_dir):
    sentences = " ".join(f"Claim {word}." for word in ["rock", "moon", "the", "is", "of"])
    metric = FaithfulnesswithHHEM(classifier=str(model_dir), statements="sentences", batch_size=2)
    metric.score(response=sentences, retrieved_contexts=CONTEXT)
    assert [rows for rows, _ in metric.classifier.batch_shapes] == [2, 2, 1]


def test_long_contexts_are_scored_in_windows_that_fit_the_model(model_dir):
    # 40 filler tokens, then the evidence: far past the model's 32 positions
    long_context = "filler " * 40 + "evidence"
    metric = FaithfulnesswithHHEM(classifier=str(model_dir), statements="sentences")
    result = metric.score(response="The claim. Moon.", retrieved_contexts=[long_context])
    # each statement is supported because one window holds the evidence: 3 - 1 and 3 + 0
    probabilities = [c["probability"] for c in result.details["claims"]]
    assert probabilities == [round(sigmoid(2.0), 4), round(sigmoid(3.0), 4)]
    assert result.value == 1.0
    shapes = list(metric.classifier.batch_shapes)
    assert all(width <= MAX_POSITIONS for _, width in shapes)
    # room beside "[CLS] … [SEP] the claim . [SEP]": 32 - 3 - 3 = 26 tokens, 6 of overlap
    assert sum(rows for rows, _ in shapes) > 2  # several windows per statement
    # the model itself refuses a longer input: the limit is real
    session = metric.classifier._session
    with pytest.raises(Exception, match="ONNXRuntimeError"):
        session.run(
            None,
            {
                "input_ids": np.ones((1, MAX_POSITIONS + 1), np.int64),
                "attention_mask": np.ones((1, MAX_POSITIONS + 1), np.int64),
            },
        )


def test_no_evidence_in_any_window_stays_unsupported(model_dir):
    metric = FaithfulnesswithHHEM(classifier=str(model_dir), statements="sentences")
    result = metric.score(response="The claim.", retrieved_contexts=["filler " * 40])
    assert result.details["claims"][0]["probability"] == round(sigmoid(-1.0), 4)
    assert result.value == 0.0


def test_a_statement_too_long_for_the_window_is_an_error_outcome_naming_the_sizes(model_dir):
    metric = FaithfulnesswithHHEM(classifier=str(model_dir), statements="sentences")
    with pytest.raises(
        MetricError, match=r"statement of 15 tokens leaves 14 of the classifier's 32"
    ):
        metric.score(response="claim " * 14 + ".", retrieved_contexts=CONTEXT)
    data = EvaluationDataset(
        samples=[SingleTurnSample(response="claim " * 14 + ".", retrieved_contexts=CONTEXT)]
    )
    [(_, _, error)] = evaluate(data, [metric], show_progress=False).errors()
    assert error.error_type == "MetricError" and "32" in error.message


def test_template_inputs_are_windowed_around_the_template(model_dir):
    classifier = OnnxNLIClassifier(model_dir, template="the {premise} is {hypothesis}")
    import anyio

    [p] = anyio.run(lambda: classifier.consistency([("filler " * 30 + "evidence", "claim")]))
    assert p == pytest.approx(sigmoid(2.0), abs=1e-6)
    assert all(width <= MAX_POSITIONS for _, width in classifier.batch_shapes)


# -- bad model directories and failing classifiers -----------------------------------------------
def test_bad_model_directories_are_named(tmp_path, model_dir):
    with pytest.raises(UsageError, match="does not exist"):
        FaithfulnesswithHHEM(classifier=str(tmp_path / "nowhere"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match=r"has no model\.onnx"):
        FaithfulnesswithHHEM(classifier=str(empty))
    (empty / "model.safetensors").write_bytes(b"\0")
    with pytest.raises(UsageError, match="optimum-cli export onnx"):
        FaithfulnesswithHHEM(classifier=str(empty))
    no_tokenizer = tmp_path / "no-tokenizer"
    no_tokenizer.mkdir()
    (no_tokenizer / "model.onnx").write_bytes((model_dir / "model.onnx").read_bytes())
    with pytest.raises(UsageError, match=r"no tokenizer\.json"):
        FaithfulnesswithHHEM(classifier=str(no_tokenizer))
    corrupt = build_classifier(tmp_path / "corrupt")
    (corrupt / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(UsageError, match=r"corrupt[/\\]model\.onnx: onnxruntime cannot load it"):
        FaithfulnesswithHHEM(classifier=str(corrupt))
    unknown_length = build_classifier(tmp_path / "no-length", config={"id2label": {}})
    with pytest.raises(UsageError, match="pass max_length"):
        FaithfulnesswithHHEM(classifier=str(unknown_length))
    with pytest.raises(UsageError, match="needs classifier="):
        FaithfulnesswithHHEM()


def test_unclear_labels_ask_for_consistent_label(tmp_path):
    three = build_classifier(
        tmp_path / "labels",
        config={"id2label": {"0": "a", "1": "b"}, "max_position_embeddings": MAX_POSITIONS},
    )
    metric = FaithfulnesswithHHEM(classifier=str(three), statements="sentences")
    with pytest.raises(UsageError, match="consistent_label"):
        metric.score(response="Claim.", retrieved_contexts=CONTEXT)
    named = FaithfulnesswithHHEM(
        classifier=str(three), statements="sentences", classifier_options={"consistent_label": "a"}
    )
    # column "a" is P(hallucinated) of the construction: 1 - sigmoid(3 - 1)
    result = named.score(response="Claim.", retrieved_contexts=CONTEXT)
    assert result.details["claims"][0]["probability"] == round(1 - sigmoid(2.0), 4)


def test_a_classifier_that_fails_at_run_time_is_a_typed_error_outcome(tmp_path):
    # config.json claims 64 positions but the graph holds 32: onnxruntime fails on long inputs
    wrong = build_classifier(
        tmp_path / "wrong-length",
        config={"id2label": {"1": "consistent", "0": "no"}, "max_position_embeddings": 64},
    )
    metric = FaithfulnesswithHHEM(classifier=str(wrong), statements="sentences")
    data = EvaluationDataset(
        samples=[
            SingleTurnSample(response="Claim.", retrieved_contexts=["filler " * 30]),
            SingleTurnSample(response="Claim.", retrieved_contexts=["evidence"]),
        ]
    )
    result = evaluate(data, [metric], show_progress=False)
    [(row, _, error)] = result.errors()
    assert row == 0 and error.error_type == "ClassifierFailed"
    assert "model.onnx: onnxruntime failed" in error.message
    assert result["faithfulness_with_hhem"][1] == 1.0
    assert issubclass(ClassifierFailed, assay.ModelError)


# -- HTTP classifiers ----------------------------------------------------------------------------
class _ClassifierServer:
    """A real HTTP classifier on 127.0.0.1: the construction's scores, both protocols, faults."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.failures_left = 0
        self.failure_status = 503
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                if outer.failures_left:
                    outer.failures_left -= 1
                    self._send(outer.failure_status, {"error": "busy"})
                elif "pairs" in body:
                    scores = [expected(p["premise"], p["hypothesis"]) for p in body["pairs"]]
                    self._send(200, {"scores": scores})
                else:
                    self._send(200, [self._labels(*pair) for pair in body["inputs"]])

            def _labels(self, premise: str, hypothesis: str) -> list[dict]:
                p = expected(premise, hypothesis)
                return [{"label": "ENTAILMENT", "score": p}, {"label": "neutral", "score": 1 - p}]

            def _send(self, status: int, payload) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/score"

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join(timeout=5)


@pytest.fixture
def server():
    running = _ClassifierServer()
    yield running
    running.close()


@pytest.mark.parametrize("protocol", ["scores", "tei"])
def test_an_http_classifier_scores_pairs_in_batches(server, protocol):
    metric = FaithfulnesswithHHEM(
        classifier=server.url,
        statements="sentences",
        batch_size=2,
        classifier_options={"protocol": protocol, "headers": {"Authorization": "Bearer k"}},
    )
    result = metric.score(
        response="Claim. The claim contradicts. Moon.", retrieved_contexts=CONTEXT
    )
    assert result.value == pytest.approx(2 / 3)
    sizes = [len(body.get("pairs") or body.get("inputs")) for body in server.bodies]
    assert sizes == [2, 1]
    assert "Bearer k" not in json.dumps(metric.spec())  # headers may hold a key
    assert metric.spec()["params"]["classifier"] == {
        "kind": "http",
        "url": server.url,
        "protocol": protocol,
    }


def test_http_failures_are_retried_then_typed_error_outcomes(server):
    metric = FaithfulnesswithHHEM(classifier=server.url, statements="sentences")
    server.failures_left = 1  # one 503, then an answer: retried
    assert metric.score(response="Claim.", retrieved_contexts=CONTEXT).value == 1.0
    server.failure_status, server.failures_left = 429, 1  # rate limited: retried too
    assert metric.score(response="Claim.", retrieved_contexts=CONTEXT).value == 1.0
    server.failure_status = 503
    server.failures_left = 10
    data = EvaluationDataset(
        samples=[SingleTurnSample(response="Claim.", retrieved_contexts=CONTEXT)]
    )
    [(_, _, error)] = evaluate(data, [metric], show_progress=False).errors()
    assert error.error_type == "ProviderError" and "503" in error.message
    assert error.attempts == 3


def test_an_unreachable_classifier_is_a_connection_error(server):
    url = server.url
    server.close()  # nothing listens on the port any more
    metric = FaithfulnesswithHHEM(
        classifier=url, statements="sentences", classifier_options={"attempts": 1}
    )
    data = EvaluationDataset(
        samples=[SingleTurnSample(response="Claim.", retrieved_contexts=CONTEXT)]
    )
    [(_, _, error)] = evaluate(data, [metric], show_progress=False).errors()
    assert error.error_type == "ModelConnectionError" and url in error.message


def test_http_classifier_with_a_wrong_answer_shape_is_malformed(server):
    classifier = HttpNLIClassifier(server.url, protocol="tei", consistent_label="contradiction")
    metric = FaithfulnesswithHHEM(classifier=classifier, statements="sentences")
    data = EvaluationDataset(
        samples=[SingleTurnSample(response="Claim.", retrieved_contexts=CONTEXT)]
    )
    [(_, _, error)] = evaluate(data, [metric], show_progress=False).errors()
    assert error.error_type == "MalformedResponse" and "contradiction" in error.message


# -- surface --------------------------------------------------------------------------------------
def test_public_names_and_registry(model_dir):
    from assay.metrics.registry import metric_classes

    assert assay.FaithfulnesswithHHEM is FaithfulnesswithHHEM
    assert metric_classes()["faithfulness_with_hhem"] is FaithfulnesswithHHEM
    metric = FaithfulnesswithHHEM(classifier=str(model_dir))
    assert metric.prompt_ids == ("claims",) and metric.needs_llm
    spec = metric.spec()
    assert spec["params"]["classifier"]["kind"] == "onnx"
    assert spec["params"]["classifier"]["max_length"] == MAX_POSITIONS
    assert spec["params"]["batch_size"] == 10 and spec["params"]["threshold"] == 0.5
