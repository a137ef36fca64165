"""What every request shares (`ServerState`): the engine, the session factory, the key pepper and
the body cap, with `transaction()` (one unit of work, database failures as API errors) and
`authenticate(token)`. The app factory builds one and puts it on `app.state.assay`; routers read
it from there (`api.deps.state_of`, `ui.web.state_of`), never from the app module.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from assay.platform.server.auth import keys
from assay.platform.server.errors import ApiError
from assay.platform.server.storage.db import session_factory

log = logging.getLogger("assay.platform.server")


class ServerState:
    """What every request shares: the engine, the session factory and the key pepper."""

    def __init__(
        self, engine: Engine, key_pepper: bytes, max_body: int, *, max_request: int = 32_000_000
    ) -> None:
        self.engine, self.pepper, self.max_body = engine, key_pepper, max_body
        self.max_request = max_request  # the largest OTLP export, before and after gzip
        self.sessions = session_factory(engine)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: committed on success, rolled back on any error; database failures
        become a 409 (a constraint: someone else changed the same thing) or a 503."""
        session = self.sessions()
        try:
            yield session
            session.commit()
        except IntegrityError:
            session.rollback()
            raise ApiError(
                409, "conflict", "the object changed meanwhile (a concurrent write); try again"
            ) from None
        except OperationalError as exc:
            session.rollback()
            log.warning("database unavailable: %s", exc)
            raise ApiError(
                503, "unavailable", "the database is busy or unavailable; try again"
            ) from None
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def authenticate(self, token: str) -> keys.Principal | str | ApiError:
        """The key's principal; else why it was refused (a message), or the error to answer with."""
        try:
            with self.transaction() as session:
                return keys.authenticate(session, self.pepper, token)
        except keys.AuthFailed as exc:
            return str(exc)
        except ApiError as exc:
            return exc


__all__ = ["ServerState"]
