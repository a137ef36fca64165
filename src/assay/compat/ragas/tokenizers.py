"""Tokenizers with Ragas' interface: `encode`, `decode`, `count_tokens`.

    TiktokenWrapper()                          OpenAI's o200k_base (tiktoken, `assay[tiktoken]`)
    TiktokenWrapper(model_name="gpt-4")        the encoding of a model
    HuggingFaceTokenizer(model_name=...)       a tokenizer.json file or folder, a Hugging Face name,
                                               or "minilm" (bundled); tokenizers comes with `assay[local]`
    get_tokenizer("huggingface", model_name=...), get_default_tokenizer()

tiktoken fetches its encoding files once from the internet. Offline, `get_default_tokenizer()`
falls back to the WordPiece tokenizer bundled with the local MiniLM embeddings (it counts a little
differently, which only moves chunk boundaries) and says so once.
"""

from __future__ import annotations

import abc
import functools
import sys
from pathlib import Path
from typing import Any

from assay._util.deps import require
from assay.errors import UsageError

_BUNDLED = Path(__file__).parents[2] / "models" / "assets" / "minilm-l6-v2-tokenizer.json"


class BaseTokenizer(abc.ABC):
    """Subclass and implement `encode` and `decode`."""

    @abc.abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of `text`."""

    @abc.abstractmethod
    def decode(self, tokens: list[int]) -> str:
        """The text of token ids."""

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text))


class TiktokenWrapper(BaseTokenizer):
    """A tiktoken encoding: the one given, else the model's, else `encoding_name`, else o200k_base."""

    def __init__(
        self, encoding: Any = None, model_name: str | None = None, encoding_name: str | None = None
    ) -> None:
        if encoding is not None:
            self.encoding = encoding
            return
        tiktoken = require("tiktoken", extra="tiktoken", feature="TiktokenWrapper")
        if model_name is not None:
            try:
                self.encoding = tiktoken.encoding_for_model(model_name)
            except KeyError:
                raise UsageError(
                    f"model_name {model_name!r} has no tiktoken encoding; pass encoding_name=..."
                ) from None
        else:
            self.encoding = tiktoken.get_encoding(encoding_name or "o200k_base")

    def encode(self, text: str) -> list[int]:
        return list(self.encoding.encode(text, disallowed_special=()))

    def decode(self, tokens: list[int]) -> str:
        return self.encoding.decode(list(tokens))


class HuggingFaceTokenizer(BaseTokenizer):
    """A Hugging Face tokenizer: a `tokenizers.Tokenizer` or transformers tokenizer object, or one
    named by `model_name` (a tokenizer.json file, a folder holding one, "minilm", or a hub name)."""

    def __init__(self, tokenizer: Any = None, model_name: str | None = None) -> None:
        if tokenizer is None:
            if model_name is None:
                raise UsageError("HuggingFaceTokenizer needs tokenizer=... or model_name=...")
            tokenizer = _load_hf(model_name)
        self.tokenizer = tokenizer
        self._fast = type(self.tokenizer).__module__.startswith("tokenizers")

    def encode(self, text: str) -> list[int]:
        if self._fast:
            return list(self.tokenizer.encode(text, add_special_tokens=False).ids)
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(list(tokens))


def _load_hf(model_name: str) -> Any:
    tokenizers = require("tokenizers", extra="local", feature="HuggingFaceTokenizer")
    path = Path(model_name)
    if model_name.lower() in (
        "minilm",
        "all-minilm-l6-v2",
        "sentence-transformers/all-minilm-l6-v2",
    ):
        path = _BUNDLED
    if path.is_dir():
        path = path / "tokenizer.json"
    if path.is_file():
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
        tokenizer.no_padding()  # a file may carry a model's padding and truncation: counting needs neither
        tokenizer.no_truncation()
        return tokenizer
    try:  # transformers knows more tokenizer formats; use it when it is there
        import transformers
    except ImportError:
        return tokenizers.Tokenizer.from_pretrained(model_name)
    return transformers.AutoTokenizer.from_pretrained(model_name)


def get_tokenizer(
    tokenizer_type: str = "tiktoken",
    model_name: str | None = None,
    encoding_name: str | None = None,
) -> BaseTokenizer:
    """ "tiktoken" (model_name or encoding_name optional) or "huggingface" (model_name required)."""
    kind = str(tokenizer_type).lower()
    if kind == "tiktoken":
        return TiktokenWrapper(model_name=model_name, encoding_name=encoding_name)
    if kind == "huggingface":
        if not model_name:
            raise UsageError("get_tokenizer('huggingface') needs model_name=...")
        return HuggingFaceTokenizer(model_name=model_name)
    raise UsageError(f"unknown tokenizer_type {tokenizer_type!r}; use 'tiktoken' or 'huggingface'")


@functools.lru_cache(maxsize=1)
def get_default_tokenizer() -> BaseTokenizer:
    """o200k_base when tiktoken can load it, else the bundled WordPiece tokenizer (offline)."""
    try:
        return TiktokenWrapper()
    except Exception as exc:  # tiktoken missing, or its encoding file cannot be fetched
        print(
            f"assay: tiktoken's o200k_base is not available ({type(exc).__name__}); counting tokens with the "
            "bundled MiniLM tokenizer instead",
            file=sys.stderr,
        )
        return HuggingFaceTokenizer(model_name="minilm")


__all__ = [
    "BaseTokenizer",
    "HuggingFaceTokenizer",
    "TiktokenWrapper",
    "get_default_tokenizer",
    "get_tokenizer",
]
