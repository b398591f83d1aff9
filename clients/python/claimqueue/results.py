"""Reading jobs back: job_status() (the server's job_status), await_jobs() (CALL
await_jobs) and job_errors() (each failed attempt's error), blocking and async."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import psycopg

from . import _shared as shared
from ._ext import extension, extension_async
from .errors import to_claimqueue_error

JOB_STATUS = "SELECT id, state, attempt, result, last_error FROM {cq}.job_status(%s::bigint[])"
AWAIT_JOBS = "CALL {cq}.await_jobs(%s::bigint[], make_interval(secs => %s), NULL)"
JOB_ERRORS = "SELECT attempt, failed_at, error, detail FROM {cq}.job_errors(%s) ORDER BY attempt"


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


@dataclass(frozen=True)
class JobError:
    """One failed attempt of a job (``job_errors``): its error text and, from a worker of this
    library, ``detail`` = {"class": the exception's class, "message", "stack": the traceback}."""

    attempt: int
    failed_at: dt.datetime
    error: Optional[str]
    detail: Any


def _status(row: Any) -> JobStatus:
    if isinstance(row, dict):                      # an element of await_jobs' jsonb array
        return JobStatus(id=int(row["id"]), state=row.get("state"), attempt=row.get("attempt"),
                         result=row.get("result"), last_error=row.get("last_error"))
    return JobStatus(*row)


def _await_arguments(conn: Any, ids: Sequence[int], timeout: Any) -> Tuple[List[int], float]:
    wait = shared.seconds(timeout, "timeout") or 0.0
    # psycopg opens a transaction first unless the connection is in autocommit, and
    # await_jobs can wait only as a statement of its own (25001 otherwise).
    if wait > 0 and not conn.autocommit:
        raise ValueError("await_jobs() waits only on a connection in autocommit mode "
                         "(psycopg.connect(..., autocommit=True)); timeout=0 looks once anywhere")
    return (list(ids), wait)


def job_status(conn: psycopg.Connection[Any], ids: Sequence[int]) -> List[JobStatus]:
    """One status per id, in the order of ``ids``."""
    try:
        return [_status(row) for row in conn.execute(extension(conn).sql(JOB_STATUS), (list(ids),)).fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


def await_jobs(conn: psycopg.Connection[Any], ids: Sequence[int], timeout: Any = 30.0) -> List[JobStatus]:
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
        row = conn.execute(extension(conn).sql(AWAIT_JOBS), params).fetchone()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    return [_status(job) for job in (row[0] if row else None) or []]


def job_errors(conn: psycopg.Connection[Any], job_id: int) -> List[JobError]:
    """Every failed attempt of the job, oldest first (``job_errors(id)``)."""
    try:
        rows = conn.execute(extension(conn).sql(JOB_ERRORS), (job_id,)).fetchall()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    return [JobError(*row) for row in rows]


async def job_status_async(conn: psycopg.AsyncConnection[Any], ids: Sequence[int]) -> List[JobStatus]:
    """job_status() on an AsyncConnection."""
    try:
        cursor = await conn.execute((await extension_async(conn)).sql(JOB_STATUS), (list(ids),))
        return [_status(row) for row in await cursor.fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


async def await_jobs_async(conn: psycopg.AsyncConnection[Any], ids: Sequence[int],
                           timeout: Any = 30.0) -> List[JobStatus]:
    """await_jobs() on an AsyncConnection: the event loop runs on while the server waits."""
    params = _await_arguments(conn, ids, timeout)
    try:
        cursor = await conn.execute((await extension_async(conn)).sql(AWAIT_JOBS), params)
        row = await cursor.fetchone()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    return [_status(job) for job in (row[0] if row else None) or []]


async def job_errors_async(conn: psycopg.AsyncConnection[Any], job_id: int) -> List[JobError]:
    """job_errors() on an AsyncConnection."""
    try:
        cursor = await conn.execute((await extension_async(conn)).sql(JOB_ERRORS), (job_id,))
        rows = await cursor.fetchall()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    return [JobError(*row) for row in rows]
