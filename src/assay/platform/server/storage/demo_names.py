"""Which project and user the demo may use: `demo`, unless a real project or person already has
that name (then `demo-2`, `demo-3`, ...), so that `assay serve --demo` never seeds into, or gives
access to, a project that is not the demo, nor resets a person's password.

These queries look across projects on purpose (a name is free or taken server-wide), so they
live in storage like the other cross-project lookups.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from assay.platform.server.storage import models

DEMO_PROJECT = "demo"
DEMO_USER = "demo"
DEMO_DATASET = ("capitals", "demo")  # the dataset's name and source_type: what marks the demo


def is_demo(session: Any, project_id: int) -> bool:
    """Whether the project is one this module seeded (it holds the demo's own dataset)."""
    name, source = DEMO_DATASET
    found = session.scalar(
        select(models.Dataset.id).where(
            models.Dataset.project_id == project_id,
            models.Dataset.name == name,
            models.Dataset.source_type == source,
        )
    )
    return found is not None


def demo_project_name(session: Any) -> str:
    """`demo`, unless a project of that name is not the demo: then `demo-2`, `demo-3`, ... (the
    first that is free or is the demo)."""
    for n in range(1, 1000):
        name = DEMO_PROJECT if n == 1 else f"{DEMO_PROJECT}-{n}"
        found = session.scalar(select(models.Project.id).where(models.Project.name == name))
        if found is None or is_demo(session, found):
            return name
    raise RuntimeError("no free name for the demo project among demo … demo-999")


def demo_user_name(session: Any) -> str:
    """`demo`, unless a user of that name belongs to a project that is not a demo (a person's
    account: their password is not reset); then `demo-2`, `demo-3`, ..."""
    for n in range(1, 1000):
        name = DEMO_USER if n == 1 else f"{DEMO_USER}-{n}"
        user = session.scalar(select(models.User.id).where(models.User.username == name))
        if user is None:
            return name
        memberships = session.scalars(
            select(models.ProjectMember.project_id).where(models.ProjectMember.user_id == user)
        ).all()
        if all(is_demo(session, pid) for pid in memberships):
            return name
    raise RuntimeError("no free name for the demo user among demo … demo-999")


__all__ = [
    "DEMO_DATASET",
    "DEMO_PROJECT",
    "DEMO_USER",
    "demo_project_name",
    "demo_user_name",
    "is_demo",
]
