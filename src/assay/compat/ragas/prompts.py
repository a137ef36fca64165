"""Ragas' prompt classes over assay's prompts-as-data.

A `PydanticPrompt[In, Out]` is typed: pydantic input and output models, an `instruction`, and
`examples` as (input, output) pairs. Underneath it is an assay `Prompt` (`assay_prompt()`), so it is
rendered the assay way (inputs fenced as data, examples as earlier turns), asked through the LLM's
structured-output ladder, translated by `localize.aadapt_prompt` (labels and JSON keys kept), and a
metric can take it with `metric.set_prompt(p.assay_prompt())`.

    class MyPrompt(PydanticPrompt[MyInput, MyOutput]):
        instruction = "..."
        input_model = MyInput
        output_model = MyOutput
        examples = [(MyInput(...), MyOutput(...))]

    answer = await MyPrompt().generate(llm, MyInput(...))          # a MyOutput
    text = MyPrompt().to_string(MyInput(...))                      # what the model is sent, as text
    spanish = await MyPrompt().adapt("spanish", llm); spanish.save("p.json"); MyPrompt.load("p.json")

`StringPrompt` sends text as it is; `DynamicFewShotPrompt` picks the examples most similar to the
input by embedding; `PromptMixin` gives a class of your own get/set/adapt/save/load_prompts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from assay.errors import OutputParseError, UsageError
from assay.prompts.prompt import Example, Prompt
from assay.prompts.render import render

InputModel = TypeVar("InputModel", bound=BaseModel)
OutputModel = TypeVar("OutputModel", bound=BaseModel)

# Ragas' name for "the model's answer could not be parsed into the output model".
RagasOutputParserException = OutputParseError
FILE_FORMAT = "assay.pydantic-prompt/1"


class StringIO(BaseModel):
    text: str


class BoolIO(BaseModel):
    value: bool


def camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def as_llm(llm: Any) -> Any:
    """An assay LLM for whatever model object the caller passes (LangChain and LlamaIndex are wrapped)."""
    from assay.models.llm import LLM

    if isinstance(llm, LLM):
        return llm
    module = type(llm).__module__
    if module.startswith("langchain"):
        from assay.models.providers.langchain import LangchainLLMWrapper

        return LangchainLLMWrapper(llm)
    if module.startswith("llama_index"):
        from assay.models.providers.llamaindex import LlamaIndexLLMWrapper

        return LlamaIndexLLMWrapper(llm)
    if callable(getattr(llm, "agenerate", None)):
        return llm
    raise UsageError(
        f"llm must be a model from llm_factory (or a LangChain / LlamaIndex model), got {type(llm).__name__}"
    )


def _sampling(temperature: float | None, stop: list[str] | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if temperature is not None:
        params["temperature"] = temperature
    if stop:
        params["stop"] = list(stop)
    return params


def messages_as_text(messages: list[Any]) -> str:
    """The chat messages of a prompt as one readable text (system part, examples, then the input)."""
    parts = [str(messages[0].content)]
    turns = messages[1:-1]
    for index in range(0, len(turns) - 1, 2):
        parts.append(
            f"Example {index // 2 + 1}\n{turns[index].content}\nAnswer:\n{turns[index + 1].content}"
        )
    parts.append(f"Now the input to answer\n{messages[-1].content}\nAnswer:")
    return "\n\n".join(parts)


class BasePrompt:
    """`name` (default: the class name in snake_case), `language`, `original_hash`."""

    def __init__(
        self, name: str | None = None, language: str = "english", original_hash: str | None = None
    ) -> None:
        self.name = name or camel_to_snake(type(self).__name__)
        self.language = language
        self.original_hash = original_hash

    async def generate(
        self,
        llm: Any,
        data: Any,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
        **kwargs: Any,
    ) -> Any:
        results = await self.generate_multiple(
            llm, data, n=1, temperature=temperature, stop=stop, callbacks=callbacks, **kwargs
        )
        return results[0]

    async def generate_multiple(
        self,
        llm: Any,
        data: Any,
        n: int = 1,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
        **kwargs: Any,
    ) -> list[Any]:
        raise NotImplementedError


class StringPrompt(BasePrompt):
    """Sends `data` (a string) as the whole prompt and returns the model's text."""

    async def generate_multiple(
        self,
        llm: Any,
        data: Any,
        n: int = 1,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
        **kwargs: Any,
    ) -> list[str]:
        if not isinstance(data, str):
            raise UsageError(f"StringPrompt data must be a string, got {type(data).__name__}")
        if n < 1:
            raise UsageError(f"n must be at least 1, got {n!r}")
        response = await as_llm(llm).agenerate(data, n=n, **_sampling(temperature, stop))
        return [generation.text for generation in response.generations]


class PydanticPrompt(BasePrompt, Generic[InputModel, OutputModel]):
    """A typed prompt; see the module docstring. Subclasses set `instruction`, `input_model`,
    `output_model` and `examples` as class attributes (or on an instance)."""

    instruction: str = ""
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    examples: list[tuple[Any, Any]] = []  # noqa: RUF012 (Ragas' class-attribute API)

    # -- what goes to the model -------------------------------------------------------------------
    def process_input(self, data: Any) -> Any:
        """Hook: change the input before it is rendered."""
        return data

    def process_output(self, output: Any, data: Any) -> Any:
        """Hook: change the parsed answer before it is returned."""
        return output

    def _input_fields(self) -> tuple[str, ...]:
        return tuple(self.input_model.model_fields)

    def _input_values(self, data: Any) -> dict[str, Any]:
        if isinstance(data, Mapping):
            data = self.input_model.model_validate(dict(data))
        if not isinstance(data, BaseModel):
            raise UsageError(
                f"{type(self).__name__} data must be a {self.input_model.__name__}, got {type(data).__name__}"
            )
        return data.model_dump(mode="json")

    def _example_of(self, pair: tuple[Any, Any]) -> Example:
        given, expected = pair
        return Example(input=self._input_values(given), output=expected.model_dump(mode="json"))

    def assay_prompt(self) -> Prompt:
        """The assay prompt this typed prompt is: id = name, JSON answer, its examples."""
        return Prompt(
            id=self.name,
            language=self.language,
            instruction=self.instruction or " ",
            inputs=self._input_fields(),
            answer="json",
            examples=tuple(self._example_of(pair) for pair in self.examples),
        )

    def to_messages(self, data: Any) -> list[Any]:
        prompt = self.assay_prompt()
        return render(prompt, self._input_values(self.process_input(data)))

    def to_string(self, data: Any = None) -> str:
        """The prompt as the model receives it, written out as text (the output schema last)."""
        if data is None:
            placeholders: dict[str, Any] = {name: f"{{{name}}}" for name in self._input_fields()}
            data = self.input_model.model_construct(**placeholders)
        schema = json.dumps(self.output_model.model_json_schema(), ensure_ascii=False)
        return f"{messages_as_text(self.to_messages(data))}\n(JSON following this schema: {schema})"

    # -- asking -------------------------------------------------------------------------------------
    async def generate_multiple(
        self,
        llm: Any,
        data: Any,
        n: int = 1,
        temperature: float | None = None,
        stop: list[str] | None = None,
        callbacks: Any = None,
        retries_left: int = 3,
        **kwargs: Any,
    ) -> list[Any]:
        """`n` answers as output-model instances (parsed strictly, tolerantly, then one repair call;
        an answer that still does not fit raises `RagasOutputParserException`)."""
        if n < 1:
            raise UsageError(f"n must be at least 1, got {n!r}")
        response = await as_llm(llm).agenerate(
            self.to_messages(data), schema=self.output_model, n=n, **_sampling(temperature, stop)
        )
        if not response.generations:
            raise OutputParseError(f"the model returned no answers when {n} were requested")
        return [self.process_output(generation.parsed, data) for generation in response.generations]

    # -- languages and files ------------------------------------------------------------------------
    def _with(self, prompt: Prompt) -> PydanticPrompt[InputModel, OutputModel]:
        """A copy of this typed prompt carrying `prompt`'s language, instruction and examples."""
        new = copy.copy(self)
        new.language = prompt.language
        new.instruction = prompt.instruction
        new.examples = [self._pair_of(example) for example in prompt.examples]
        new.original_hash = str(hash(new))
        return new

    def _pair_of(self, example: Example) -> tuple[Any, Any]:
        return self.input_model.model_validate(example.input), self.output_model.model_validate(
            example.output
        )

    async def adapt(
        self, target_language: str, llm: Any, adapt_instruction: bool = False
    ) -> PydanticPrompt[InputModel, OutputModel]:
        """A translated copy: the examples' strings always, the instruction with `adapt_instruction`.
        Field names, numbers and labels stay as they are (checked)."""
        from assay.prompts.localize import aadapt_prompt

        adapted = await aadapt_prompt(
            self.assay_prompt(), target_language, as_llm(llm), adapt_instruction=adapt_instruction
        )
        return self._with(adapted)

    def save(self, file_path: str | os.PathLike[str]) -> None:
        """Write the prompt as JSON; an existing file is a `FileExistsError`, as in Ragas."""
        from assay._version import __version__

        target = Path(file_path)
        if target.exists():
            raise FileExistsError(f"The file '{target}' already exists.")
        prompt = self.assay_prompt()
        data = {
            "format": FILE_FORMAT,
            "assay_version": __version__,
            "name": self.name,
            "language": self.language,
            "original_hash": self.original_hash,
            "instruction": self.instruction,
            "examples": [{"input": e.input, "output": e.output} for e in prompt.examples],
        }
        target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, file_path: str | os.PathLike[str]) -> PydanticPrompt[Any, Any]:
        """Read a file written by `save` into an instance of this class."""
        path = Path(file_path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UsageError(f"{path}: not a JSON prompt file ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
            raise UsageError(
                f'{path}: not a prompt saved by PydanticPrompt.save (no "format": {FILE_FORMAT!r})'
            )
        prompt = cls(
            name=data.get("name"),
            language=data.get("language", "english"),
            original_hash=data.get("original_hash"),
        )
        examples = data.get("examples")
        if not isinstance(examples, list) or not isinstance(data.get("instruction"), str):
            raise UsageError(f'{path}: "instruction" must be text and "examples" a list')
        try:
            stored = Prompt(
                id=prompt.name,
                language=prompt.language,
                instruction=data["instruction"] or " ",
                inputs=prompt._input_fields(),
                answer="json",
                examples=tuple(Example.model_validate(e) for e in examples),
            )
            loaded = prompt._with(stored)
        except ValidationError as exc:
            raise UsageError(
                f"{path}: an example does not fit the prompt's models ({exc.errors()[0]['msg']})"
            ) from None
        loaded.instruction = data["instruction"]
        loaded.original_hash = data.get("original_hash")
        return loaded

    # -- identity -----------------------------------------------------------------------------------
    def _content(self) -> str:
        prompt = self.assay_prompt()
        return json.dumps(
            {
                "name": self.name,
                "language": self.language,
                "instruction": self.instruction,
                "examples": [e.model_dump(mode="json") for e in prompt.examples],
            },
            sort_keys=True,
            ensure_ascii=False,
        )

    def __hash__(self) -> int:
        return int(hashlib.sha256(self._content().encode("utf-8")).hexdigest()[:15], 16)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._content() == self._content()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(instruction={self.instruction[:60]!r}, examples={len(self.examples)}, "
            f"language={self.language!r})"
        )


# -- dynamic few-shot ---------------------------------------------------------------------------------
def fill_instruction(instruction: str, inputs: Mapping[str, Any]) -> str:
    """An instruction with its `{placeholders}` filled from `inputs`; a missing one is named."""
    try:
        return instruction.format(**inputs)
    except KeyError as exc:
        raise UsageError(f"the instruction needs the input {exc.args[0]!r}") from None


def with_examples(text: str, examples: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """`text` followed by the examples as JSON input/output pairs, as Ragas' template prompts send."""
    if not examples:
        return text
    shown = "\n\n".join(
        f"Input: {json.dumps(i, ensure_ascii=False)}\nOutput: {json.dumps(o, ensure_ascii=False)}"
        for i, o in examples
    )
    return f"{text}\n\nExamples:\n\n{shown}"


def _as_dict(item: Any) -> dict[str, Any]:
    """An example's side as a dict (a pydantic model dumped)."""
    return item.model_dump() if isinstance(item, BaseModel) else dict(item)


class DynamicFewShotPrompt:
    """An instruction template with `{placeholders}` whose examples are chosen per input: the
    `max_similar_examples` most similar by embedding (cosine at least `similarity_threshold`)."""

    def __init__(
        self,
        instruction: str,
        examples: list[tuple[dict[str, Any], dict[str, Any]]] | None = None,
        embedding_model: Any = None,
        max_similar_examples: int = 3,
        similarity_threshold: float = 0.7,
    ) -> None:
        if not isinstance(instruction, str) or not instruction.strip():
            raise UsageError("instruction must be a non-empty string")
        if not isinstance(max_similar_examples, int) or max_similar_examples < 0:
            raise UsageError(
                f"max_similar_examples must be a whole number of 0 or more, got {max_similar_examples!r}"
            )
        if (
            not isinstance(similarity_threshold, (int, float))
            or not -1.0 <= similarity_threshold <= 1.0
        ):
            raise UsageError(
                f"similarity_threshold must be between -1 and 1, got {similarity_threshold!r}"
            )
        self.instruction = instruction
        self.embedding_model = embedding_model
        self.max_similar_examples = max_similar_examples
        self.similarity_threshold = float(similarity_threshold)
        self.examples: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self._vectors: list[list[float]] = []
        for inputs, output in examples or []:
            self.add_example(inputs, output)

    @classmethod
    def from_prompt(
        cls,
        prompt: Any,
        embedding_model: Any,
        max_similar_examples: int = 3,
        similarity_threshold: float = 0.7,
    ) -> DynamicFewShotPrompt:
        """From any prompt with an `instruction` and `examples` (pairs of dicts or pydantic models)."""
        examples = [
            (_as_dict(question), _as_dict(answer))
            for question, answer in getattr(prompt, "examples", [])
        ]
        return cls(
            prompt.instruction,
            examples,
            embedding_model,
            max_similar_examples,
            similarity_threshold,
        )

    @staticmethod
    def _text_of(inputs: Mapping[str, Any]) -> str:
        return "\n".join(f"{key}: {value}" for key, value in inputs.items())

    def _embed(self, text: str) -> list[float]:
        if self.embedding_model is None:
            raise UsageError("DynamicFewShotPrompt needs embedding_model=... to choose examples")
        return list(self.embedding_model.embed_text(text))

    def add_example(self, inputs: dict[str, Any], output: dict[str, Any]) -> None:
        if not isinstance(inputs, Mapping) or not isinstance(output, Mapping):
            raise UsageError("an example is a pair of dicts: (inputs, output)")
        self.examples.append((dict(inputs), dict(output)))
        self._vectors.append(
            self._embed(self._text_of(inputs)) if self.embedding_model is not None else []
        )

    def similar_examples(
        self, inputs: Mapping[str, Any]
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        if not self.examples or self.max_similar_examples == 0:
            return []
        query = self._embed(self._text_of(inputs))
        scored = sorted(
            ((_cosine(query, vector), index) for index, vector in enumerate(self._vectors)),
            reverse=True,
        )
        return [
            self.examples[index]
            for score, index in scored[: self.max_similar_examples]
            if score >= self.similarity_threshold
        ]

    def format(self, **inputs: Any) -> str:
        text = fill_instruction(self.instruction, inputs)  # a missing input fails before embedding
        return with_examples(text, self.similar_examples(inputs))

    to_string = format


def _cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=False)) / norm if norm else 0.0


# -- prompts of a class -----------------------------------------------------------------------------
class PromptMixin:
    """Ragas' prompt methods for a class of your own that holds `PydanticPrompt` attributes (keyed
    by `prompt.name`). On an assay metric the same methods are its own (`prompt_methods.py`),
    keyed by Ragas' prompt names; a metric subclass that also derives from this mixin keeps them."""

    def _metric_methods(self) -> Any:
        if callable(getattr(self, "judge_prompt", None)) and hasattr(self, "prompt_ids"):
            from assay.compat.ragas import prompt_methods

            return prompt_methods
        return None

    def _get_prompts(self) -> dict[str, PydanticPrompt[Any, Any]]:
        names = {*vars(type(self)), *vars(self)}
        found = {}
        for attribute in sorted(names):
            value = getattr(self, attribute, None)
            if isinstance(value, PydanticPrompt):
                found[attribute] = value
        return found

    def get_prompts(self) -> dict[str, Any]:
        """{prompt.name: prompt}."""
        if (methods := self._metric_methods()) is not None:
            return methods.get_prompts(self)
        return {prompt.name: prompt for prompt in self._get_prompts().values()}

    def set_prompts(self, **prompts: Any) -> None:
        """Replace prompts by their names (as `get_prompts` keys them); unknown names are an error."""
        if (methods := self._metric_methods()) is not None:
            methods.set_prompts(self, **prompts)
            return
        by_name = {prompt.name: attribute for attribute, prompt in self._get_prompts().items()}
        for key, prompt in prompts.items():
            if key not in by_name:
                raise UsageError(
                    f"no prompt named {key!r}; the prompts are {', '.join(sorted(by_name)) or 'none'}"
                )
            if not isinstance(prompt, PydanticPrompt):
                raise UsageError(
                    f"prompt {key!r} must be a PydanticPrompt, got {type(prompt).__name__}"
                )
            setattr(self, by_name[key], prompt)

    async def adapt_prompts(
        self, language: str, llm: Any, adapt_instruction: bool = False
    ) -> dict[str, Any]:
        """Translated copies, keyed as `get_prompts` keys them; not applied (pass them to `set_prompts`)."""
        if (methods := self._metric_methods()) is not None:
            return await methods.adapt_prompts(self, language, llm, adapt_instruction)
        return {
            name: await prompt.adapt(language, llm, adapt_instruction)
            for name, prompt in self.get_prompts().items()
        }

    def _file(self, path: str | os.PathLike[str], prompt_name: str, language: str) -> Path:
        name = getattr(self, "name", "")  # a metric's name; a bare mixin has none
        prefix = f"{name}_" if name else ""
        return Path(path) / f"{prefix}{prompt_name}_{language}.json"

    def save_prompts(self, path: str | os.PathLike[str]) -> None:
        """Write each prompt to `path/{name}_{prompt}_{language}.json` (`path` must exist)."""
        if (methods := self._metric_methods()) is not None:
            methods.save_prompts(self, path)
            return
        if not Path(path).is_dir():
            raise UsageError(f"path {str(path)!r} is not an existing directory")
        for prompt_name, prompt in self.get_prompts().items():
            prompt.save(self._file(path, prompt_name, prompt.language))

    def load_prompts(
        self, path: str | os.PathLike[str], language: str | None = None
    ) -> dict[str, Any]:
        """Read the prompts saved for `language` (default english); returned, not applied."""
        if (methods := self._metric_methods()) is not None:
            return methods.load_prompts(self, path, language)
        language = language or "english"
        if not Path(path).is_dir():
            raise UsageError(f"path {str(path)!r} is not an existing directory")
        return {
            prompt_name: type(prompt).load(self._file(path, prompt_name, language))
            for prompt_name, prompt in self.get_prompts().items()
        }


__all__ = [
    "BasePrompt",
    "BoolIO",
    "DynamicFewShotPrompt",
    "InputModel",
    "OutputModel",
    "PromptMixin",
    "PydanticPrompt",
    "RagasOutputParserException",
    "StringIO",
    "StringPrompt",
    "as_llm",
    "camel_to_snake",
    "messages_as_text",
]
