"""Repositories: the only code that queries resource tables. Each one is built for one project and
every query it makes is filtered by that project, so another project's id is simply not found."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from assay.platform.criteria_rules import FIELDS as CRITERIA_FIELDS
from assay.platform.server.errors import conflict, invalid, not_found
from assay.platform.server.storage import models

Row = TypeVar("Row", models.Task, models.Criteria, models.Dataset)
MAX_PAGE = 500
_CURSOR = re.compile(r"^[1-9][0-9]{0,9}$")


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        return moment.isoformat() + "Z"
    return moment.isoformat().replace("+00:00", "Z")


def decode_cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not _CURSOR.match(cursor):
        raise invalid("cursor", "not a cursor this server gave out")
    return int(cursor)


class ProjectScoped:
    """Base of every repository: it cannot be built without a project."""

    def __init__(self, session: Session, project_id: int) -> None:
        if isinstance(project_id, bool) or not isinstance(project_id, int):
            raise TypeError("a repository needs the id of the project it serves")
        self.session, self.project_id = session, project_id

    def _select(self, model: Any) -> Any:
        """The project's rows of `model`: every query of a repository starts here (or at
        `_columns`), so the project filter is written once."""
        return select(model).where(model.project_id == self.project_id)

    def _columns(self, model: Any, *columns: Any) -> Any:
        """Some columns of the project's rows of `model`."""
        return select(*columns).where(model.project_id == self.project_id)

    def _page(
        self, query: Any, model: Any, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        after = decode_cursor(cursor)
        if after is not None:
            query = query.where(model.id > after)
        rows = list(self.session.scalars(query.order_by(model.id).limit(limit + 1)))
        if len(rows) > limit:
            return rows[:limit], str(rows[limit - 1].id)
        return rows, None


class NamedRepo(ProjectScoped, Generic[Row]):
    """Objects unique by name within a project (tasks, criteria)."""

    model: type[Any]  # the ORM class of Row
    kind: str
    fields: tuple[str, ...]

    def get(self, ident: int) -> Row:
        row = self.session.scalar(self._select(self.model).where(self.model.id == ident))
        if row is None:
            raise not_found(self.kind, ident)
        return row

    def by_name(self, name: str) -> Row | None:
        return self.session.scalar(self._select(self.model).where(self.model.name == name))

    def list(
        self, *, name: str | None, limit: int, cursor: str | None
    ) -> tuple[list[Row], str | None]:
        query = self._select(self.model)
        if name is not None:
            query = query.where(self.model.name == name)
        return self._page(query, self.model, limit, cursor)

    def create(self, values: dict[str, Any]) -> Row:
        existing = self.by_name(values["name"])
        if existing is not None:
            raise conflict(
                f"a {self.kind} named {values['name']!r} already exists (id {existing.id})",
                existing.id,
            )
        row = self.model(project_id=self.project_id, **{f: values[f] for f in self.fields})
        self.session.add(row)
        self.session.flush()
        return row

    def replace(self, ident: int, values: dict[str, Any]) -> Row:
        row = self.get(ident)
        if values["name"] != row.name:
            other = self.by_name(values["name"])
            if other is not None:
                raise conflict(
                    f"a {self.kind} named {values['name']!r} already exists (id {other.id})",
                    other.id,
                )
        for field in self.fields:
            setattr(row, field, values[field])
        row.updated_at = models.utcnow()
        self.session.flush()
        return row

    def delete(self, ident: int) -> None:
        self.session.delete(self.get(ident))
        self.session.flush()


class TaskRepo(NamedRepo[models.Task]):
    model, kind = models.Task, "task"
    fields = ("name", "generator_model", "system_prompt")


class CriteriaRepo(NamedRepo[models.Criteria]):
    model, kind = models.Criteria, "criteria"
    fields = CRITERIA_FIELDS

    def by_names(self, names: list[str]) -> list[models.Criteria]:
        C = models.Criteria
        return list(self.session.scalars(self._select(C).where(C.name.in_(names))))


def content_hash(examples: list[dict[str, Any]]) -> str:
    canonical = json.dumps(examples, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class DatasetRepo(NamedRepo[models.Dataset]):
    """Datasets and their versions. A version is immutable: it owns a copy of its examples."""

    model, kind = models.Dataset, "dataset"
    fields = ("name", "source_type", "source_file")

    def version(self, dataset: models.Dataset, version: int | None = None) -> models.DatasetVersion:
        number = dataset.latest_version if version is None else version
        row = self.session.scalar(
            self._select(models.DatasetVersion).where(
                models.DatasetVersion.dataset_id == dataset.id,
                models.DatasetVersion.version == number,
            )
        )
        if row is None:
            raise (
                not_found(f"version {number} of dataset", dataset.id)
                if version is not None
                else not_found("dataset", dataset.id)
            )
        return row

    def _add_version(
        self, dataset: models.Dataset, number: int, values: dict[str, Any], digest: str
    ) -> models.DatasetVersion:
        examples = values["examples"]
        row = models.DatasetVersion(
            project_id=self.project_id,
            dataset_id=dataset.id,
            version=number,
            questions_qty=len(examples) or values.get("questions_qty", 0),
            example_count=len(examples),
            content_hash=digest,
        )
        self.session.add(row)
        self.session.flush()
        self.session.add_all(
            models.Example(
                project_id=self.project_id,
                dataset_version_id=row.id,
                position=position,
                question=e["question"],
                ground_truth_context=e["ground_truth_context"],
                ground_truth_answer=e["ground_truth_answer"],
            )
            for position, e in enumerate(examples)
        )
        dataset.latest_version = number
        self.session.flush()
        return row

    def create(  # type: ignore[override]  # a dataset's first version comes with it
        self, values: dict[str, Any]
    ) -> tuple[models.Dataset, models.DatasetVersion]:
        dataset = super().create(values)
        return dataset, self._add_version(dataset, 1, values, content_hash(values["examples"]))

    def replace(  # type: ignore[override]  # with its version, and whether one was added
        self, ident: int, values: dict[str, Any]
    ) -> tuple[models.Dataset, models.DatasetVersion, bool]:
        dataset = super().replace(ident, values)
        latest = self.version(dataset)
        digest = content_hash(values["examples"])
        if digest == latest.content_hash:
            quantity = len(values["examples"]) or values.get("questions_qty", 0)
            if quantity != latest.questions_qty and not values["examples"]:
                latest.questions_qty = quantity
            return dataset, latest, False
        return dataset, self._add_version(dataset, latest.version + 1, values, digest), True

    def versions(
        self, dataset: models.Dataset, *, limit: int, cursor: str | None
    ) -> tuple[list[models.DatasetVersion], str | None]:
        query = self._select(models.DatasetVersion).where(
            models.DatasetVersion.dataset_id == dataset.id
        )
        return self._page(query, models.DatasetVersion, limit, cursor)

    def examples(
        self, version: models.DatasetVersion, *, limit: int, cursor: str | None
    ) -> tuple[list[models.Example], str | None]:
        query = self._select(models.Example).where(models.Example.dataset_version_id == version.id)
        return self._page(query, models.Example, limit, cursor)

    def all_examples(self, version: models.DatasetVersion) -> list[models.Example]:
        query = self._select(models.Example).where(models.Example.dataset_version_id == version.id)
        return list(self.session.scalars(query.order_by(models.Example.position)))

    def example(self, dataset: models.Dataset, example_id: int) -> models.Example:
        query = (
            self._select(models.Example)
            .join(
                models.DatasetVersion, models.DatasetVersion.id == models.Example.dataset_version_id
            )
            .where(
                models.Example.id == example_id,
                models.DatasetVersion.dataset_id == dataset.id,
                models.DatasetVersion.project_id == self.project_id,
            )
        )
        row = self.session.scalar(query)
        if row is None:
            raise not_found("example", example_id)
        return row

    def delete(self, ident: int) -> None:
        dataset = self.get(ident)
        used = int(
            self.session.scalar(
                select(func.count())
                .select_from(models.Experiment)
                .where(
                    models.Experiment.project_id == self.project_id,
                    models.Experiment.dataset_id == dataset.id,
                )
            )
            or 0
        )
        if used:
            raise conflict(
                f"dataset {dataset.name!r} is pinned by {used} experiment(s); it cannot be deleted"
            )
        version_ids = select(models.DatasetVersion.id).where(
            models.DatasetVersion.project_id == self.project_id,
            models.DatasetVersion.dataset_id == dataset.id,
        )
        self.session.execute(
            delete(models.Example).where(
                models.Example.project_id == self.project_id,
                models.Example.dataset_version_id.in_(version_ids),
            )
        )
        self.session.execute(
            delete(models.DatasetVersion).where(
                models.DatasetVersion.project_id == self.project_id,
                models.DatasetVersion.dataset_id == dataset.id,
            )
        )
        self.session.delete(dataset)
        self.session.flush()

    def count_versions(self, dataset: models.Dataset) -> int:
        return int(
            self.session.scalar(
                select(func.count())
                .select_from(models.DatasetVersion)
                .where(
                    models.DatasetVersion.project_id == self.project_id,
                    models.DatasetVersion.dataset_id == dataset.id,
                )
            )
            or 0
        )


__all__ = [
    "MAX_PAGE",
    "CriteriaRepo",
    "DatasetRepo",
    "NamedRepo",
    "ProjectScoped",
    "TaskRepo",
    "content_hash",
    "decode_cursor",
    "iso",
]
