"""Hallucination / NLI classifiers that say whether a premise supports a hypothesis.

`FaithfulnesswithHHEM` sends each (contexts, statement) pair to one of these instead of asking the
judge. No such model ships on PyPI, so the user points at one:

- `OnnxNLIClassifier(directory)`: a sequence-classification model exported to ONNX
  (`model.onnx` or `onnx/model.onnx`) with its `tokenizer.json`, and optionally the Hugging Face
  `config.json` (labels, maximum length, pad id) and `tokenizer_config.json` (`model_max_length`).
  Run by onnxruntime off the event loop, in batches.
- `HttpNLIClassifier(url)` (`assay.models.nli_http`): a server that scores pairs, either assay's small protocol
  (`{"pairs": [{"premise", "hypothesis"}]}` -> `{"scores": [p, ...]}`) or Hugging Face
  text-embeddings-inference's `/predict` (`{"inputs": [[premise, hypothesis], ...]}`).

A Hugging Face checkpoint without an ONNX export (e.g. Vectara's HHEM-2.1-Open as published, which
needs transformers, torch and `trust_remote_code`) is refused with the export command: assay does
not run PyTorch models in-process.

Windows: a classifier sees at most `max_length` tokens. A premise too long to fit beside its
hypothesis is cut into overlapping token windows (a quarter of a window overlaps the previous
one, so a fact at a boundary is seen whole at least once), each window is scored with the whole
hypothesis, and the pair's probability is the highest window's (supported when any part of the
contexts supports it, as the judged faithfulness merges source pieces). The hypothesis is never
cut: one that leaves less than half the window for the premise is refused with the sizes.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio

from assay._util.deps import require
from assay.errors import MetricError, ModelError, UsageError

# Labels that mean "the premise supports the hypothesis" in the classifiers people use (HHEM:
# consistent; MNLI cross-encoders: entailment).
CONSISTENT_LABELS = ("consistent", "entailment", "entailed", "supported", "factual")


class ClassifierFailed(ModelError):
    """The classifier could not score a batch (onnxruntime raised, or its output had the wrong
    shape). Recorded as this cell's error outcome with the cause."""


@runtime_checkable
class NLIClassifier(Protocol):
    """Anything that scores (premise, hypothesis) pairs with P(the premise supports it)."""

    async def consistency(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 10
    ) -> list[float]: ...

    def identity(self) -> dict[str, Any]: ...


def _sigmoid(values: Any) -> Any:
    import numpy as np

    return 1.0 / (1.0 + np.exp(-values))


def _softmax(values: Any) -> Any:
    import numpy as np

    shifted = values - values.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable JSON file ({exc})") from None


class OnnxNLIClassifier:
    """A local ONNX sequence classifier. `template` (with `{premise}` and `{hypothesis}`) formats
    both texts into one input, as HHEM does; without it the tokenizer encodes them as a pair
    (its post-processor adds the separators, as BERT-style cross-encoders expect).
    `consistent_label` names the supporting label (or its index) when `config.json` does not make
    it clear; a single-logit model is read through a sigmoid."""

    def __init__(
        self,
        directory: str | Path,
        *,
        max_length: int | None = None,
        template: str | None = None,
        consistent_label: str | int | None = None,
        device: str = "cpu",
    ) -> None:
        self.directory = Path(directory).expanduser()
        if not self.directory.is_dir():
            raise UsageError(f"classifier directory {self.directory} does not exist")
        if template is not None and not ("{premise}" in template and "{hypothesis}" in template):
            raise UsageError("template must contain both {premise} and {hypothesis}")
        self.template = template
        self.device = device
        self.model_file = self._find_model()
        tokenizer_file = self.directory / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise UsageError(
                f"classifier directory {self.directory} has no tokenizer.json "
                "(save the model's fast tokenizer there: tokenizer.save_pretrained(directory))"
            )
        config = _read_json(self.directory / "config.json")
        tokenizer_config = _read_json(self.directory / "tokenizer_config.json")
        ort = require("onnxruntime", extra="hhem", feature="FaithfulnesswithHHEM's ONNX classifier")
        tokenizers = require("tokenizers", extra="hhem", feature="the classifier's tokenizer")
        try:
            self._tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # the Rust side raises plain Exceptions
            raise UsageError(f"{tokenizer_file}: not a tokenizers JSON file ({exc})") from None
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self.max_length = self._max_length(max_length, config, tokenizer_config)
        self._pad_id = self._find_pad_id(config)
        self._labels = {int(k): str(v) for k, v in (config.get("id2label") or {}).items()}
        self._consistent_label = consistent_label
        self._session = self._open_session(ort)
        names = [node.name for node in self._session.get_inputs()]
        if "input_ids" not in names:
            raise UsageError(f"{self.model_file}: the graph takes {names}, not input_ids")
        self._input_names = names
        self._column: int | None = None  # which output column is P(consistent), once known
        # the (rows, tokens) shape of the last batches run, for diagnostics and tests
        self.batch_shapes: collections.deque[tuple[int, int]] = collections.deque(maxlen=256)

    # -- loading -------------------------------------------------------------------------------
    def _find_model(self) -> Path:
        for candidate in (self.directory / "model.onnx", self.directory / "onnx" / "model.onnx"):
            if candidate.is_file():
                return candidate
        if any(self.directory.glob("*.safetensors")) or any(self.directory.glob("*.bin")):
            raise UsageError(
                f"{self.directory} holds a PyTorch checkpoint but no model.onnx; export it first, "
                f"e.g. `optimum-cli export onnx --model {self.directory} "
                "--task text-classification <out-dir>`, and point at the export"
            )
        raise UsageError(f"classifier directory {self.directory} has no model.onnx")

    def _max_length(
        self, given: int | None, config: dict[str, Any], tokenizer_config: dict[str, Any]
    ) -> int:
        candidates = (
            given,
            tokenizer_config.get("model_max_length"),
            config.get("max_position_embeddings"),
            config.get("n_positions"),
        )
        for value in candidates:
            # tokenizer_config says 1e30 when the tokenizer has no limit of its own
            if isinstance(value, int) and 8 <= value <= 1_000_000:
                return value
        raise UsageError(
            f"cannot tell the maximum input length of {self.directory}: pass max_length=... "
            "(config.json has no max_position_embeddings, tokenizer_config.json no model_max_length)"
        )

    def _find_pad_id(self, config: dict[str, Any]) -> int:
        padding = self._tokenizer.padding
        if padding and padding.get("pad_id") is not None:
            return int(padding["pad_id"])
        if isinstance(config.get("pad_token_id"), int):
            return int(config["pad_token_id"])
        for token in ("[PAD]", "<pad>"):
            found = self._tokenizer.token_to_id(token)
            if found is not None:
                return int(found)
        return 0  # masked out anyway

    def _open_session(self, ort: Any) -> Any:
        wanted = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}.get(
            self.device.split(":")[0].lower()
        )
        available = ort.get_available_providers()
        if wanted is None or wanted not in available:
            raise UsageError(
                f"device {self.device!r} is not available to onnxruntime here "
                f"(providers: {', '.join(available)}); use device='cpu'"
            )
        try:
            return ort.InferenceSession(str(self.model_file), providers=[wanted])
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise UsageError(f"{self.model_file}: onnxruntime cannot load it ({exc})") from None

    def identity(self) -> dict[str, Any]:
        return {
            "kind": "onnx",
            "model": str(self.model_file),
            "max_length": self.max_length,
            "template": self.template,
        }

    # -- encoding ------------------------------------------------------------------------------
    def _windows(self, premise: str, hypothesis: str) -> list[Any]:
        """The encodings of (premise window, hypothesis) that fit in max_length."""
        from tokenizers import Encoding

        encode = self._tokenizer.encode
        if self.template is None:
            frame: list[Any] = []
            overhead = self._tokenizer.num_special_tokens_to_add(True)
        else:
            before, rest = self.template.split("{premise}", 1)
            middle, after = rest.split("{hypothesis}", 1)
            frame = [encode(part, add_special_tokens=False) for part in (before, middle, after)]
            overhead = self._tokenizer.num_special_tokens_to_add(False) + sum(
                len(part.ids) for part in frame
            )
        claim = encode(hypothesis, add_special_tokens=False)
        room = self.max_length - overhead - len(claim.ids)
        if room < self.max_length // 2:
            raise MetricError(
                f"a statement of {len(claim.ids)} tokens leaves {max(room, 0)} of the classifier's "
                f"{self.max_length} for the contexts (at least {self.max_length // 2} needed)"
            )
        source = encode(premise, add_special_tokens=False)
        source.truncate(room, stride=room // 4)
        pieces = [source, *source.overflowing]
        if self.template is None:
            return [self._tokenizer.post_process(piece, claim) for piece in pieces]
        return [
            self._tokenizer.post_process(
                Encoding.merge([frame[0], piece, frame[1], claim, frame[2]])
            )
            for piece in pieces
        ]

    # -- running -------------------------------------------------------------------------------
    def _run_batch(self, encodings: Sequence[Any]) -> list[float]:
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = 1
            types[row, :n] = encoding.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        self.batch_shapes.append((len(encodings), width))
        try:
            logits = self._session.run(None, {k: feeds[k] for k in self._input_names})[0]
        except KeyError as exc:
            raise ClassifierFailed(f"{self.model_file}: the graph wants an input {exc}") from None
        except Exception as exc:
            raise ClassifierFailed(f"{self.model_file}: onnxruntime failed: {exc}") from exc
        return self._probabilities(np.asarray(logits, dtype=np.float64), len(encodings))

    def _probabilities(self, logits: Any, rows: int) -> list[float]:
        if logits.ndim == 1:
            logits = logits[:, None]
        if logits.ndim != 2 or logits.shape[0] != rows:
            raise ClassifierFailed(
                f"{self.model_file}: expected logits of shape ({rows}, labels), got {logits.shape}"
            )
        probabilities: list[float]
        if logits.shape[1] == 1:
            probabilities = _sigmoid(logits[:, 0]).tolist()
            return probabilities
        column = self._consistent_column(logits.shape[1])
        probabilities = _softmax(logits)[:, column].tolist()
        return probabilities

    def _consistent_column(self, width: int) -> int:
        if self._column is not None:
            return self._column
        wanted = self._consistent_label
        if isinstance(wanted, int):
            column = wanted
        elif isinstance(wanted, str):
            matches = [i for i, label in self._labels.items() if label.lower() == wanted.lower()]
            if not matches:
                raise UsageError(
                    f"consistent_label {wanted!r} is not among config.json's labels "
                    f"{sorted(self._labels.values())}"
                )
            column = matches[0]
        else:
            matches = [i for i, label in self._labels.items() if label.lower() in CONSISTENT_LABELS]
            if len(matches) == 1:
                column = matches[0]
            elif width == 2 and not self._labels:
                column = 1  # two unnamed labels: [hallucinated, consistent], as HHEM orders them
            else:
                raise UsageError(
                    f"{self.directory}: cannot tell which of the {width} outputs means 'supported' "
                    f"(labels {sorted(self._labels.values()) or 'unnamed'}); "
                    "pass consistent_label=..."
                )
        if not 0 <= column < width:
            raise UsageError(f"consistent_label index {column} is outside the {width} outputs")
        self._column = column
        return column

    def _consistency_sync(self, pairs: Sequence[tuple[str, str]], batch_size: int) -> list[float]:
        owners: list[int] = []
        encodings: list[Any] = []
        for index, (premise, hypothesis) in enumerate(pairs):
            for window in self._windows(premise, hypothesis):
                owners.append(index)
                encodings.append(window)
        best = [0.0] * len(pairs)
        for start in range(0, len(encodings), batch_size):
            chunk = encodings[start : start + batch_size]
            for owner, p in zip(
                owners[start : start + batch_size], self._run_batch(chunk), strict=True
            ):
                best[owner] = max(best[owner], float(p))
        return best

    async def consistency(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 10
    ) -> list[float]:
        """P(premise supports hypothesis) per pair, in order; CPU-bound, so off the event loop."""
        if not pairs:
            return []
        return await anyio.to_thread.run_sync(
            self._consistency_sync, list(pairs), batch_size, abandon_on_cancel=True
        )


def nli_classifier(source: Any, **options: Any) -> NLIClassifier:
    """A classifier from what the user points at: a URL, a model directory, or an object that
    already has `consistency` (returned as is)."""
    if isinstance(source, (str, Path)):
        text = str(source)
        if text.startswith(("http://", "https://")):
            from assay.models.nli_http import HttpNLIClassifier

            return HttpNLIClassifier(text, **options)
        return OnnxNLIClassifier(text, **options)
    if isinstance(source, NLIClassifier):
        return source
    raise UsageError(
        "classifier must be a model directory, an http(s) URL, or an object with "
        f"consistency(pairs) and identity(); got {type(source).__name__}"
    )


__all__ = [
    "CONSISTENT_LABELS",
    "ClassifierFailed",
    "NLIClassifier",
    "OnnxNLIClassifier",
    "nli_classifier",
]
