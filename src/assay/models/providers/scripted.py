"""A provider that answers from a script: for tests and for pinning metric maths.

Each answer is a string (returned as the model's text), a `Generation` (returned as is, e.g. with
log-probabilities), an exception instance (raised), or a callable taking the request and
returning one of those. It can also embed: `vectors` maps a text to its vector. Answers are consumed in order; when the
script runs out, the last answer repeats if `repeat_last` is set, else the call fails loudly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from assay.models.providers.base import Profile, Provider
from assay.models.types import Generation, ModelRequest, ModelResponse, Usage

Answer = str | Generation | BaseException | Callable[[ModelRequest], Any]


class ScriptedProvider(Provider):
    name = "scripted"

    def __init__(
        self,
        answers: Iterable[Answer] = (),
        *,
        model: str = "scripted",
        repeat_last: bool = False,
        profile: Profile | None = None,
        finish_reason: str = "stop",
        vectors: dict[str, list[float]] | None = None,
    ) -> None:
        super().__init__(model, profile=profile or Profile(output_modes=("json_schema",)))
        self.answers = list(answers)
        self.vectors = vectors or {}
        self.repeat_last = repeat_last
        self.finish_reason = finish_reason
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        generations = []
        for _ in range(request.n):
            answer = self._next(request)
            generations.append(
                answer
                if isinstance(answer, Generation)
                else Generation(text=answer, finish_reason=self.finish_reason)
            )
        prompt_chars = sum(len(str(message.content)) for message in request.messages)
        usage = Usage(
            input_tokens=prompt_chars // 4,
            output_tokens=sum(len(g.text) for g in generations) // 4,
            requests=1,
        )
        return ModelResponse(generations=generations, usage=usage, model=self.model)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        missing = [text for text in texts if text not in self.vectors]
        if missing:
            raise AssertionError(f"the scripted embedder has no vector for {missing[0]!r}")
        return [self.vectors[text] for text in texts], sum(len(text) for text in texts) // 4

    def _next(self, request: ModelRequest) -> str | Generation:
        if not self.answers:
            raise AssertionError("the scripted model has no answers left")
        answer = (
            self.answers[0]
            if (self.repeat_last and len(self.answers) == 1)
            else self.answers.pop(0)
        )
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(request)
        if isinstance(answer, BaseException):
            raise answer
        return answer if isinstance(answer, Generation) else str(answer)


__all__ = ["ScriptedProvider"]
