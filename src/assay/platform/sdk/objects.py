"""The seed's objects: `Example`, `Dataset`, `Task`, `Criteria`, `Cohort`.

Each stored object has `save()` (writes it under its name: creates it, or updates the object of
that name), `download(name=… | id=…)`, `to_dict()` and `from_dict()`. Constructors check their
arguments and raise `ValidationFailed` (a `ValueError`) naming the field, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from assay.platform import criteria_rules
from assay.platform.sdk.client import current
from assay.platform.sdk.errors import Conflict, NotFound, ValidationFailed

PAGE = 500


def _text(
    value: Any, field: str, *, owner: str, required: bool = False, optional: bool = False
) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValidationFailed(
            f"{owner}: {field} must be a string, got {type(value).__name__}", field=field
        )
    if required and not value.strip():
        raise ValidationFailed(f"{owner}: {field} must not be empty", field=field)
    return value


def _pages(path: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    cursor = None
    while True:
        page = current().request("GET", path, params={**params, "limit": PAGE, "cursor": cursor})
        yield from page["items"]
        cursor = page.get("next_cursor")
        if not cursor:
            return


class RagMetricsObject:
    """What `Dataset`, `Task` and `Criteria` share: saving under a name, downloading, dicts."""

    object_type: ClassVar[str] = ""
    _path: ClassVar[str] = ""
    # a same-name save makes a new version (datasets) instead of meeting the stored object
    versioned: ClassVar[bool] = False
    id: int | None = None
    name: str

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _payload(self) -> dict[str, Any]:
        return self.to_dict()

    def _apply(self, data: dict[str, Any]) -> None:
        self.id = data.get("id")

    def save(self, overwrite: bool = False) -> RagMetricsObject:
        """Store this object under its name. A downloaded (or saved) object is updated in place.
        A new object whose name is taken: a dataset becomes a new version of the stored one;
        a task or criteria with the same settings is the stored one, and with other settings is
        refused (`Conflict`) unless `overwrite=True`: one script's task must not silently
        change what another's experiments ran with."""
        client, payload = current(), self._payload()
        if self.id is not None:
            data = client.request("PUT", f"{self._path}/{self.id}", json=payload)
        else:
            try:
                data = client.request("POST", self._path, json=payload)
            except Conflict as exc:
                if exc.existing_id is None:
                    raise
                target = f"{self._path}/{exc.existing_id}"
                if self.versioned or overwrite:
                    data = client.request("PUT", target, json=payload)
                else:
                    data = client.request("GET", target)
                    if type(self).from_dict(data)._payload() != payload:
                        raise Conflict(
                            f"a {self.object_type} named {self.name!r} already exists (id "
                            f"{exc.existing_id}) with other settings: download it to change it, "
                            "save this one under another name, or save(overwrite=True)",
                            existing_id=exc.existing_id,
                        ) from None
        self._apply(data)
        return self

    @classmethod
    def _find(cls, name: str | None, id: int | None) -> dict[str, Any]:
        if (name is None) == (id is None):
            raise ValidationFailed(f"{cls.__name__}.download needs exactly one of name= or id=")
        if id is not None:
            if isinstance(id, bool) or not isinstance(id, int):
                raise ValidationFailed(
                    f"{cls.__name__}.download: id must be an integer, got {id!r}", field="id"
                )
            return current().request("GET", f"{cls._path}/{id}")
        _text(name, "name", owner=cls.__name__, required=True)
        items = current().request("GET", cls._path, params={"name": name, "limit": 1})["items"]
        if not items:
            raise NotFound(f"no {cls.object_type} named {name!r} in this project")
        return current().request("GET", f"{cls._path}/{items[0]['id']}")

    @classmethod
    def download(cls, name: str | None = None, id: int | None = None) -> Any:
        """The stored object, by name or by id."""
        return cls.from_dict(cls._find(name, id))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def _resolve(cls, value: Any) -> int:
        """An object, name or id → the id of the stored object (an unsaved object is saved)."""
        if isinstance(value, cls):
            if value.id is None:
                value.save()
            return int(value.id)  # type: ignore[arg-type]  # save() has given it an id
        if isinstance(value, bool):
            raise ValidationFailed(f"expected a {cls.__name__}, its name or its id, got {value!r}")
        if isinstance(value, int):
            return int(cls._find(None, value)["id"])
        if isinstance(value, str) and value.strip():
            return int(cls._find(value, None)["id"])
        if isinstance(value, dict):
            return cls._resolve(cls.from_dict(value))
        raise ValidationFailed(
            f"expected a {cls.__name__}, its name or its id, got {type(value).__name__}"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, id={self.id!r})"


class Example:
    """One test case: a question, the context that holds the answer (str or list), the answer."""

    def __init__(
        self, question: str, ground_truth_context: str | list[str], ground_truth_answer: str
    ) -> None:
        self.question = _text(question, "question", owner="Example", required=True)
        if isinstance(ground_truth_context, (list, tuple)):
            for index, item in enumerate(ground_truth_context):
                if not isinstance(item, str):
                    raise ValidationFailed(
                        f"Example: ground_truth_context[{index}] must be a string, got "
                        f"{type(item).__name__}",
                        field="ground_truth_context",
                    )
            ground_truth_context = list(ground_truth_context)
        elif not isinstance(ground_truth_context, str):
            raise ValidationFailed(
                "Example: ground_truth_context must be a string or a list of strings, got "
                f"{type(ground_truth_context).__name__}",
                field="ground_truth_context",
            )
        self.ground_truth_context = ground_truth_context
        self.ground_truth_answer = _text(
            ground_truth_answer, "ground_truth_answer", owner="Example"
        )

    @property
    def contexts(self) -> list[str]:
        """The context as a list of strings."""
        context = self.ground_truth_context
        return [context] if isinstance(context, str) else list(context)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "ground_truth_context": self.ground_truth_context,
            "ground_truth_answer": self.ground_truth_answer,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Example:
        question: Any = data.get("question")  # None is refused by __init__ (ValidationFailed)
        return cls(
            question,
            data.get("ground_truth_context", ""),
            data.get("ground_truth_answer", ""),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Example) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Example(question={self.question!r})"


class Dataset(RagMetricsObject):
    """A named, versioned list of examples. A save that changes the examples makes a new version."""

    object_type = "dataset"
    _path = "/datasets"
    versioned = True

    def __init__(
        self,
        name: str,
        examples: Iterable[Example | dict[str, Any]] = (),
        source_type: str = "",
        source_file: str = "",
        questions_qty: int = 0,
    ) -> None:
        self.name = _text(name, "name", owner="Dataset", required=True)
        if isinstance(examples, (str, bytes, dict)) or not isinstance(examples, Iterable):
            raise ValidationFailed("Dataset: examples must be a list of Example", field="examples")
        self.examples: list[Example] = []
        for index, example in enumerate(examples):
            if isinstance(example, dict):
                example = Example.from_dict(example)
            if not isinstance(example, Example):
                raise ValidationFailed(
                    f"Dataset: examples[{index}] must be an Example, got {type(example).__name__}",
                    field="examples",
                )
            self.examples.append(example)
        self.source_type = _text(source_type, "source_type", owner="Dataset")
        self.source_file = _text(source_file, "source_file", owner="Dataset")
        if (
            isinstance(questions_qty, bool)
            or not isinstance(questions_qty, int)
            or questions_qty < 0
        ):
            raise ValidationFailed(
                f"Dataset: questions_qty must be a non-negative integer, got {questions_qty!r}",
                field="questions_qty",
            )
        self.questions_qty = questions_qty or len(self.examples)
        self.id: int | None = None
        self.version: int | None = None

    def __iter__(self) -> Iterator[Example]:
        return iter(self.examples)

    def __len__(self) -> int:
        return len(self.examples)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "source_type": self.source_type,
            "source_file": self.source_file,
            "examples": [e.to_dict() for e in self.examples],
            "questions_qty": len(self.examples) or self.questions_qty,
        }
        if self.id is not None:
            data["id"], data["version"] = self.id, self.version
        return data

    def _payload(self) -> dict[str, Any]:
        data = self.to_dict()
        data.pop("id", None)
        data.pop("version", None)
        return data

    def _apply(self, data: dict[str, Any]) -> None:
        self.id, self.version = data["id"], data["version"]
        self.questions_qty = data.get("questions_qty", self.questions_qty)

    def save(self, overwrite: bool = False) -> Dataset:
        """Store the examples under the name (a taken name gets a new version). A dataset made
        from a file (`source_file`, with `source_type` "csv", "jsonl" or "json", or the file's
        extension) and no examples is uploaded: the server checks it as the web UI's import does
        (a bad row is refused by number and nothing is saved), and the examples are read back."""
        if self.id is not None or self.examples or not self.source_file:
            super().save(overwrite)
            return self
        path = Path(self.source_file).expanduser()
        kind = (self.source_type or path.suffix.lstrip(".")).lower()
        kind = {"ndjson": "jsonl"}.get(kind, kind)
        if kind not in ("csv", "jsonl", "json"):
            raise ValidationFailed(
                f"Dataset: source_type must be csv, jsonl or json (or a file with that extension), "
                f"got {self.source_type or path.suffix or 'none'!r}",
                field="source_type",
            )
        try:
            content = path.read_bytes().decode("utf-8-sig")
        except OSError as exc:
            raise ValidationFailed(
                f"Dataset: cannot read {path}: {exc.strerror}", field="source_file"
            ) from None
        except UnicodeDecodeError:
            raise ValidationFailed(
                f"Dataset: {path} is not UTF-8 text", field="source_file"
            ) from None
        body = {
            "name": self.name,
            "source_type": kind,
            "source_file": path.name,
            "content": content,
        }
        data = current().request("POST", f"{self._path}/import", json=body)
        self._apply(data)
        self.source_type, self.source_file = kind, path.name
        self.examples = [
            Example.from_dict(e)
            for e in _pages(f"{self._path}/{self.id}/examples", {"version": self.version})
        ]
        return self

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Dataset:
        dataset = cls(
            data.get("name", ""),
            data.get("examples") or [],
            data.get("source_type") or "",
            data.get("source_file") or "",
            data.get("questions_qty") or 0,
        )
        dataset.id, dataset.version = data.get("id"), data.get("version")
        return dataset

    @classmethod
    def download(
        cls, name: str | None = None, id: int | None = None, version: int | None = None
    ) -> Dataset:
        """The stored dataset (its latest version, or `version`), examples included."""
        data = cls._find(name, id)
        if version is not None:
            data = current().request(
                "GET", f"{cls._path}/{data['id']}", params={"version": version}
            )
        examples = list(_pages(f"{cls._path}/{data['id']}/examples", {"version": data["version"]}))
        return cls.from_dict({**data, "examples": examples})


class Task(RagMetricsObject):
    """How answers are generated: the default model and the system prompt."""

    object_type = "task"
    _path = "/tasks"

    def __init__(self, name: str, generator_model: str = "", system_prompt: str = "") -> None:
        self.name = _text(name, "name", owner="Task", required=True)
        self.generator_model = _text(generator_model or "", "generator_model", owner="Task")
        self.system_prompt = _text(system_prompt or "", "system_prompt", owner="Task")
        self.id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "generator_model": self.generator_model,
            "system_prompt": self.system_prompt,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        task = cls(
            data.get("name", ""), data.get("generator_model") or "", data.get("system_prompt") or ""
        )
        task.id = data.get("id")
        return task


class Criteria(RagMetricsObject):
    """How a response is judged: an LLM judge (5-point, bool, prompt) or a function (string match).

    Checked on construction with the same rules the server applies (`assay.platform.criteria_rules`);
    `validation_status` is computed ("invalid" when a function's pattern misses its own test_string).
    """

    object_type = "criteria"
    _path = "/criteria"
    validation_status: str  # set with the other checked fields in __init__

    def __init__(
        self,
        name: str,
        phase: str = "",
        description: str = "",
        prompt: str = "",
        bool_true: str = "",
        bool_false: str = "",
        output_type: str = "",
        header: str = "",
        likert_score_1: str = "",
        likert_score_2: str = "",
        likert_score_3: str = "",
        likert_score_4: str = "",
        likert_score_5: str = "",
        criteria_type: str = "llm_judge",
        function_name: str = "",
        match_type: str = "",
        match_pattern: str = "",
        test_string: str = "",
        validation_status: str = "",
        case_sensitive: bool = False,
    ) -> None:
        values = dict(locals())
        values.pop("self")
        if not isinstance(case_sensitive, bool):
            raise ValidationFailed(
                f"Criteria: case_sensitive must be True or False, got {case_sensitive!r}",
                field="case_sensitive",
            )
        try:
            checked = criteria_rules.check(values)
        except criteria_rules.CriteriaProblem as exc:
            label = name if isinstance(name, str) else "?"
            raise ValidationFailed(
                f"Criteria {label!r}: {exc.field}: {exc.detail}", field=exc.field
            ) from None
        for field, value in checked.items():
            setattr(self, field, value)
        self.id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {field: getattr(self, field) for field in criteria_rules.FIELDS}

    def _apply(self, data: dict[str, Any]) -> None:
        self.id = data["id"]
        self.validation_status = data.get("validation_status", self.validation_status)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Criteria:
        criteria = cls(**{k: v for k, v in data.items() if k in criteria_rules.FIELDS})
        criteria.id = data.get("id")
        return criteria


class Cohort:
    """One configuration to compare: a generator model or a registered RAG pipeline, not both."""

    def __init__(
        self,
        name: str,
        generator_model: str | None = None,
        rag_pipeline: str | None = None,
        system_prompt: str | None = None,
    ) -> None:
        self.name = _text(name, "name", owner="Cohort", required=True)
        self.generator_model = (
            _text(generator_model, "generator_model", owner="Cohort", optional=True) or None
        )
        self.rag_pipeline = (
            _text(rag_pipeline, "rag_pipeline", owner="Cohort", optional=True) or None
        )
        self.system_prompt = _text(system_prompt, "system_prompt", owner="Cohort", optional=True)
        if (self.generator_model is None) == (self.rag_pipeline is None):
            raise ValidationFailed(
                f"Cohort {name!r}: give exactly one of generator_model or rag_pipeline",
                field="generator_model",
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "generator_model": self.generator_model,
            "rag_pipeline": self.rag_pipeline,
            "system_prompt": self.system_prompt,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cohort:
        return cls(
            data.get("name", ""),
            data.get("generator_model"),
            data.get("rag_pipeline"),
            data.get("system_prompt"),
        )

    def __repr__(self) -> str:
        return f"Cohort(name={self.name!r}, generator_model={self.generator_model!r}, rag_pipeline={self.rag_pipeline!r})"


__all__ = ["Cohort", "Criteria", "Dataset", "Example", "RagMetricsObject", "Task"]
