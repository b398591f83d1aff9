"""Reading jobs back: job_status() (the server's job_status) and await_jobs() (CALL
await_jobs), blocking and async, for request/response and fan-in over the queue."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import psycopg

from . import _shared as shared
from .errors import to_claimqueue_error

JOB_STATUS = "SELECT id, state, attempt, result, last_error FROM job_status(%s::bigint[])"
AWAIT_JOBS = "CALL await_jobs(%s::bigint[], make_interval(secs => %s), NULL)"


@dataclass(frozen=True)
class JobStatus:
    """A job as job_status() and await_jobs() report it.

    state: 'ready', 'running', 'done', 'failed' or 'cancelled'; None (and every field after
    the id) for a job that does not exist or whose queue this role holds no privilege on.
    result: what complete() stored (a handler's return value), None until then or if none was.
    """

    id: int
    state: Optional[str]
    attempt: Optional[int]
    result: Any
    last_error: Optional[str]


def _status(row: Any) -> JobStatus:
    if isinstance(row, dict):                      # an element of await_jobs' jsonb array
        return JobStatus(id=int(row["id"]), state=row.get("state"), attempt=row.get("attempt"),
                         result=row.get("result"), last_error=row.get("last_error"))
    return JobStatus(*row)


def _await_arguments(conn: Any, ids: Sequence[int], timeout: Any) -> tuple:
    wait = shared.seconds(timeout, "timeout")
    # psycopg opens a transaction first unless the connection is in autocommit, and
    # await_jobs can wait only as a statement of its own (25001 otherwise).
    if wait > 0 and not conn.autocommit:
        raise ValueError("await_jobs() waits only on a connection in autocommit mode "
                         "(psycopg.connect(..., autocommit=True)); timeout=0 looks once anywhere")
    return (list(ids), wait)


def job_status(conn: psycopg.Connection, ids: Sequence[int]) -> List[JobStatus]:
    """One status per id, in the order of ``ids``."""
    try:
        return [_status(row) for row in conn.execute(JOB_STATUS, (list(ids),)).fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


def await_jobs(conn: psycopg.Connection, ids: Sequence[int], timeout: Any = 30.0) -> List[JobStatus]:
    """Waits in the server until every job in ``ids`` is done, failed or cancelled, or
    ``timeout`` (seconds or a timedelta; 0 looks once) passes, which is not an error: the
    unfinished jobs come back with their current state. Returns the statuses in the order
    of ``ids``.

    The wait holds ``conn`` (an autocommit connection) for its whole length, but no snapshot
    or transaction: the server commits before it sleeps. A statement_timeout of the session
    ends it with an error.
    """
    params = _await_arguments(conn, ids, timeout)
    try:
        row = conn.execute(AWAIT_JOBS, params).fetchone()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    return [_status(job) for job in row[0] or []]


async def job_status_async(conn: psycopg.AsyncConnection, ids: Sequence[int]) -> List[JobStatus]:
    """job_status() on an AsyncConnection."""
    try:
        cursor = await conn.execute(JOB_STATUS, (list(ids),))
        return [_status(row) for row in await cursor.fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


async def await_jobs_async(conn: psycopg.AsyncConnection, ids: Sequence[int],
                           timeout: Any = 30.0) -> List[JobStatus]:
    """await_jobs() on an AsyncConnection: the event loop runs on while the server waits."""
    params = _await_arguments(conn, ids, timeout)
    try:
        cursor = await conn.execute(AWAIT_JOBS, params)
        row = await cursor.fetchone()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    return [_status(job) for job in row[0] or []]
