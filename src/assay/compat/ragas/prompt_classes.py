"""Ragas' faithfulness and factual-correctness prompt classes, typed, over assay's own prompts.

    StatementGeneratorPrompt   StatementGeneratorInput(question, answer) -> StatementGeneratorOutput(statements)
    ClaimDecompositionPrompt   ClaimDecompositionInput(response)          -> ClaimDecompositionOutput(claims)
                               (both are assay's `claims` prompt)
    NLIStatementPrompt         NLIStatementInput(context, statements)     -> NLIStatementOutput(statements=[
                                   StatementFaithfulnessAnswer(statement, reason, verdict)])
    FaithfulnessPrompt         FaithfulnessInput(response, context)       -> FaithfulnessOutput(statements=[...])
                               (both are assay's `supported` prompt: one "1. yes" line per statement;
                               FaithfulnessPrompt checks the response's sentences, as assay's default
                               faithfulness does)

The instruction and examples default to assay's prompt in the prompt's `language` (English and
Chinese are built in); a subclass may set `instruction` or typed `examples`, as the Ragas docs do.
`assay_prompt()` is the result as an assay prompt with the built-in id, so a metric takes it with
`metric.set_prompt(...)`. assay's verdict prompts carry no reasons, so `reason` comes back empty.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from assay.compat.ragas.prompts import PydanticPrompt, _sampling, as_llm, messages_as_text
from assay.errors import OutputParseError
from assay.prompts.prompt import Example, Prompt, load_prompt

_LINE = re.compile(r"^\s*(\d+)\s*[.):]\s*(\w+)", re.MULTILINE)
_ITEM = re.compile(r"^\s*\d+[.)]\s*(.*)$")
_VERDICT_FORMAT = 'Reply with one line per statement, in order, in the form "1. yes" or "1. no", and nothing else.'
_YES = {"yes", "1", "true", "是"}
_NO = {"no", "0", "false", "否"}


class StatementGeneratorInput(BaseModel):
    question: str = Field(description="the question the answer responds to")
    answer: str = Field(description="the text to split into statements")


class StatementGeneratorOutput(BaseModel):
    statements: list[str]


class ClaimDecompositionInput(BaseModel):
    response: str


class ClaimDecompositionOutput(BaseModel):
    claims: list[str]


class StatementFaithfulnessAnswer(BaseModel):
    statement: str
    reason: str = ""
    verdict: int = Field(ge=0, le=1, description="1 if the context supports the statement, else 0")


class NLIStatementInput(BaseModel):
    context: str
    statements: list[str]


class NLIStatementOutput(BaseModel):
    statements: list[StatementFaithfulnessAnswer]


class FaithfulnessInput(BaseModel):
    response: str
    context: str


class FaithfulnessOutput(BaseModel):
    statements: list[StatementFaithfulnessAnswer]


class _Claims(BaseModel):
    claims: list[str]


def numbered(statements: list[str]) -> str:
    return "\n".join(f"{index}. {statement}" for index, statement in enumerate(statements, start=1))


def unnumbered(items: str) -> list[str]:
    found = [_ITEM.match(line) for line in items.splitlines() if line.strip()]
    return [match.group(1).strip() for match in found if match]


def sentences(text: str) -> list[str]:
    import pysbd

    return [
        part.strip()
        for part in pysbd.Segmenter(language="en", clean=False).segment(text)
        if part.strip()
    ]


def read_verdicts(raw: str, count: int) -> list[int]:
    """1/0 per numbered line "N. yes|no"; every statement must be answered."""
    verdicts: dict[int, int] = {}
    for number, word in _LINE.findall(raw):
        word = word.lower()
        if word in _YES or word in _NO:
            verdicts.setdefault(int(number), 1 if word in _YES else 0)
    missing = [n for n in range(1, count + 1) if n not in verdicts]
    if missing:
        raise OutputParseError(
            f"the answer gave no verdict for statement {missing[0]} of {count}", raw=raw
        )
    return [verdicts[n] for n in range(1, count + 1)]


class AssayBackedPrompt(PydanticPrompt[Any, Any]):
    """A typed view of one of assay's prompts: the four mapping methods translate between them."""

    prompt_id: ClassVar[str]

    def builtin(self) -> Prompt:
        return load_prompt(self.prompt_id, self.language)

    # instruction and examples: set on the instance, or by a subclass, or assay's built-in ones
    @property
    def instruction(self) -> str:
        return self.__dict__.get("_instruction") or self.builtin().instruction

    @instruction.setter
    def instruction(self, value: str) -> None:
        self.__dict__["_instruction"] = value

    @property
    def examples(self) -> list[tuple[Any, Any]]:
        if "_examples" in self.__dict__:
            return self.__dict__["_examples"]
        return [self._pair_of(example) for example in self.builtin().examples]

    @examples.setter
    def examples(self, value: list[tuple[Any, Any]]) -> None:
        self.__dict__["_examples"] = list(value)

    # the mapping between Ragas' fields and assay's
    def to_assay_input(self, data: Any) -> dict[str, Any]:
        raise NotImplementedError

    def from_assay_input(self, values: dict[str, Any]) -> Any:
        raise NotImplementedError

    def to_assay_output(self, output: Any) -> Any:
        raise NotImplementedError

    def from_assay_output(self, output: Any, values: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _input_values(self, data: Any) -> dict[str, Any]:
        if isinstance(data, dict):
            data = self.input_model.model_validate(data)
        if not isinstance(data, self.input_model):
            raise TypeError(
                f"{type(self).__name__} data must be a {self.input_model.__name__}, "
                f"got {type(data).__name__}"
            )
        return self.to_assay_input(data)

    def _example_of(self, pair: tuple[Any, Any]) -> Example:
        given, expected = pair
        return Example(input=self._input_values(given), output=self.to_assay_output(expected))

    def _pair_of(self, example: Example) -> tuple[Any, Any]:
        return self.from_assay_input(dict(example.input)), self.from_assay_output(
            example.output, dict(example.input)
        )

    def assay_prompt(self) -> Prompt:
        base = self.builtin()
        instruction = self.instruction
        if (
            base.answer == "verdict"
            and instruction != base.instruction
            and '"1. yes"' not in instruction
        ):
            instruction = (
                f"{instruction.rstrip()}\n{_VERDICT_FORMAT}"  # the answer format assay reads
            )
        # Examples nobody replaced are assay's own, exactly as written in the YAML file.
        replaced = "_examples" in self.__dict__ or not isinstance(
            inspect.getattr_static(type(self), "examples"), property
        )
        examples = (
            tuple(self._example_of(pair) for pair in self.examples) if replaced else base.examples
        )
        return base.model_copy(
            update={"language": self.language, "instruction": instruction, "examples": examples}
        )

    def to_string(self, data: Any = None) -> str:
        """What the model is sent, as text (the answer format is the one the instruction states)."""
        if data is None:
            raise TypeError(
                f"{type(self).__name__}.to_string needs the input, a {self.input_model.__name__}"
            )
        return messages_as_text(self.to_messages(data))

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
        values = self._input_values(self.process_input(data))
        prompt = self.assay_prompt()
        from assay.prompts.render import render

        messages = render(prompt, values)
        model = as_llm(llm)
        if prompt.answer == "json":
            response = await model.agenerate(
                messages, schema=_Claims, n=n, **_sampling(temperature, stop)
            )
            answers = [generation.parsed.model_dump() for generation in response.generations]
        else:
            response = await model.agenerate(messages, n=n, **_sampling(temperature, stop))
            answers = [generation.text for generation in response.generations]
        return [
            self.process_output(self.from_assay_output(answer, values), data) for answer in answers
        ]


class StatementGeneratorPrompt(AssayBackedPrompt):
    prompt_id = "claims"
    input_model = StatementGeneratorInput
    output_model = StatementGeneratorOutput

    def to_assay_input(self, data: Any) -> dict[str, Any]:
        return {"question": data.question, "text": data.answer}

    def from_assay_input(self, values: dict[str, Any]) -> Any:
        return StatementGeneratorInput(question=values["question"], answer=values["text"])

    def to_assay_output(self, output: Any) -> Any:
        return {"claims": list(output.statements)}

    def from_assay_output(self, output: Any, values: dict[str, Any]) -> Any:
        return StatementGeneratorOutput(statements=list(output["claims"]))


class ClaimDecompositionPrompt(AssayBackedPrompt):
    prompt_id = "claims"
    input_model = ClaimDecompositionInput
    output_model = ClaimDecompositionOutput

    def to_assay_input(self, data: Any) -> dict[str, Any]:
        return {"question": "", "text": data.response}

    def from_assay_input(self, values: dict[str, Any]) -> Any:
        return ClaimDecompositionInput(response=values["text"])

    def to_assay_output(self, output: Any) -> Any:
        return {"claims": list(output.claims)}

    def from_assay_output(self, output: Any, values: dict[str, Any]) -> Any:
        return ClaimDecompositionOutput(claims=list(output["claims"]))


class _VerdictPrompt(AssayBackedPrompt):
    prompt_id = "supported"

    def to_assay_output(self, output: Any) -> Any:
        return "\n".join(
            f"{i}. {'yes' if answer.verdict else 'no'}"
            for i, answer in enumerate(output.statements, 1)
        )

    def _answers(self, output: Any, values: dict[str, Any]) -> list[StatementFaithfulnessAnswer]:
        statements = unnumbered(values["items"])
        verdicts = read_verdicts(str(output), len(statements))
        return [
            StatementFaithfulnessAnswer(statement=s, reason="", verdict=v)
            for s, v in zip(statements, verdicts, strict=True)
        ]


class NLIStatementPrompt(_VerdictPrompt):
    input_model = NLIStatementInput
    output_model = NLIStatementOutput

    def to_assay_input(self, data: Any) -> dict[str, Any]:
        return {"source": data.context, "items": numbered(list(data.statements))}

    def from_assay_input(self, values: dict[str, Any]) -> Any:
        return NLIStatementInput(
            context=values["source"].rstrip("\n"), statements=unnumbered(values["items"])
        )

    def from_assay_output(self, output: Any, values: dict[str, Any]) -> Any:
        return NLIStatementOutput(statements=self._answers(output, values))


class FaithfulnessPrompt(_VerdictPrompt):
    input_model = FaithfulnessInput
    output_model = FaithfulnessOutput

    def to_assay_input(self, data: Any) -> dict[str, Any]:
        return {"source": data.context, "items": numbered(sentences(data.response))}

    def from_assay_input(self, values: dict[str, Any]) -> Any:
        return FaithfulnessInput(
            response=" ".join(unnumbered(values["items"])), context=values["source"].rstrip("\n")
        )

    def from_assay_output(self, output: Any, values: dict[str, Any]) -> Any:
        return FaithfulnessOutput(statements=self._answers(output, values))


__all__ = [
    "AssayBackedPrompt",
    "ClaimDecompositionInput",
    "ClaimDecompositionOutput",
    "ClaimDecompositionPrompt",
    "FaithfulnessInput",
    "FaithfulnessOutput",
    "FaithfulnessPrompt",
    "NLIStatementInput",
    "NLIStatementOutput",
    "NLIStatementPrompt",
    "StatementFaithfulnessAnswer",
    "StatementGeneratorInput",
    "StatementGeneratorOutput",
    "StatementGeneratorPrompt",
    "numbered",
    "read_verdicts",
    "sentences",
]
