"""Administration on the caller's connection (blocking psycopg): queues, schedules, retry
and cancel one job or in bulk, dead letters, one job's record, metrics. Each function is one
statement of the extension's SQL API (docs/sql-api.md), qualified with its schema, in the
caller's transaction; durations are seconds (int, float) or timedeltas. The same functions
on an AsyncConnection: claimqueue.admin_async.

Grants stay SQL: ``grant_queue(queue, privilege, role)`` and the roles claimqueue_admin,
claimqueue_producer and claimqueue_consumer (docs/queues-and-roles.md).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields
from typing import Any, List, Optional, Sequence, Tuple, Type, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from . import _shared as shared
from ._ext import extension
from ._shared import Duration
from .errors import to_claimqueue_error

T = TypeVar("T")


def _run(conn: psycopg.Connection[Any], template: str, params: Sequence[Any]) -> List[Tuple[Any, ...]]:
    try:
        cursor = conn.execute(extension(conn).sql(template), list(params))
        return cursor.fetchall() if cursor.description is not None else []
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


def _one(conn: psycopg.Connection[Any], template: str, params: Sequence[Any]) -> Any:
    rows = _run(conn, template, params)
    return rows[0][0] if rows else None


def _rows(conn: psycopg.Connection[Any], kind: Type[T], template: str, params: Sequence[Any]) -> List[T]:
    return [kind(*row) for row in _run(conn, template, params)]


def _columns(kind: type) -> str:
    return ", ".join(f.name for f in fields(kind))


def _named(options: Sequence[Tuple[str, Any, str]]) -> Tuple[str, List[Any]]:
    """Named arguments for the options given (not None); durations become intervals."""
    parts, values = [], []
    for name, value, cast in options:
        if value is None:
            continue
        if cast == "interval":
            parts.append(f"{name} => make_interval(secs => %s)")
            values.append(shared.seconds(value, name))
        else:
            parts.append(f"{name} => %s::{cast}")
            values.append(value)
    return "".join(", " + p for p in parts), values


# --- queues ------------------------------------------------------------------


@dataclass(frozen=True)
class QueueSettings:
    """A queue's settings (the queue_settings view)."""

    queue: str
    lease: dt.timedelta
    max_attempts: int
    backoff_base: dt.timedelta
    backoff_cap: dt.timedelta
    retention: dt.timedelta
    created_at: dt.datetime
    paused: bool
    failed_retention: Optional[dt.timedelta]
    max_running: Optional[int]
    max_running_per_key: Optional[int]
    fair: bool


def _queue_options(lease: Optional[Duration], max_attempts: Optional[int], backoff_base: Optional[Duration],
                   backoff_cap: Optional[Duration], retention: Optional[Duration],
                   failed_retention: Optional[Duration], max_running: Optional[int],
                   max_running_per_key: Optional[int], fair: Optional[bool]) -> List[Tuple[str, Any, str]]:
    return [("lease", lease, "interval"), ("max_attempts", max_attempts, "int"),
            ("backoff_base", backoff_base, "interval"), ("backoff_cap", backoff_cap, "interval"),
            ("retention", retention, "interval"), ("failed_retention", failed_retention, "interval"),
            ("max_running", max_running, "int"), ("max_running_per_key", max_running_per_key, "int"),
            ("fair", fair, "boolean")]


def create_queue(conn: psycopg.Connection[Any], name: str, *, lease: Optional[Duration] = None,
                 max_attempts: Optional[int] = None, backoff_base: Optional[Duration] = None,
                 backoff_cap: Optional[Duration] = None, retention: Optional[Duration] = None,
                 failed_retention: Optional[Duration] = None, max_running: Optional[int] = None,
                 max_running_per_key: Optional[int] = None, fair: Optional[bool] = None,
                 if_not_exists: bool = False) -> bool:
    """Creates a queue (options left None take the server's defaults); True if created,
    False with ``if_not_exists`` when it exists."""
    clause, values = _named(_queue_options(lease, max_attempts, backoff_base, backoff_cap, retention,
                                           failed_retention, max_running, max_running_per_key, fair)
                            + [("if_not_exists", if_not_exists or None, "boolean")])
    return bool(_one(conn, "SELECT {cq}.create_queue(%s" + clause + ")", [name, *values]))


def alter_queue(conn: psycopg.Connection[Any], name: str, *, lease: Optional[Duration] = None,
                max_attempts: Optional[int] = None, backoff_base: Optional[Duration] = None,
                backoff_cap: Optional[Duration] = None, retention: Optional[Duration] = None,
                failed_retention: Optional[Duration] = None, max_running: Optional[int] = None,
                max_running_per_key: Optional[int] = None, fair: Optional[bool] = None) -> None:
    """Changes the settings given; None leaves one as it is (a limit of 0 removes it)."""
    clause, values = _named(_queue_options(lease, max_attempts, backoff_base, backoff_cap, retention,
                                           failed_retention, max_running, max_running_per_key, fair))
    _run(conn, "SELECT {cq}.alter_queue(%s" + clause + ")", [name, *values])


def drop_queue(conn: psycopg.Connection[Any], name: str, *, force: bool = False) -> int:
    """Drops a queue with its jobs and schedules; returns how many jobs were deleted."""
    return int(_one(conn, "SELECT {cq}.drop_queue(%s, force => %s)", [name, force]))


def pause_queue(conn: psycopg.Connection[Any], name: str) -> bool:
    """The queue takes enqueues but claims nothing; True if it was running."""
    return bool(_one(conn, "SELECT {cq}.pause_queue(%s)", [name]))


def resume_queue(conn: psycopg.Connection[Any], name: str) -> bool:
    """The queue is claimed from again; True if it was paused."""
    return bool(_one(conn, "SELECT {cq}.resume_queue(%s)", [name]))


def queue_settings(conn: psycopg.Connection[Any], name: Optional[str] = None) -> List[QueueSettings]:
    """The settings of one queue, or of every queue this role holds a privilege on."""
    return _rows(conn, QueueSettings, f"SELECT {_columns(QueueSettings)} FROM {{cq}}.queue_settings "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY queue", [name, name])


# --- schedules ---------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    """A recurring job (the schedules view)."""

    name: str
    cron: str
    timezone: str
    queue: str
    next_run_at: Optional[dt.datetime]
    last_run_at: Optional[dt.datetime]
    last_job_id: Optional[int]
    enabled: bool
    catch_up: str
    priority: int
    max_attempts: Optional[int]
    payload: Any
    paused: bool


def schedule(conn: psycopg.Connection[Any], name: str, cron: str, queue: str, payload: Any = None, *,
             timezone: Optional[str] = None, priority: Optional[int] = None,
             max_attempts: Optional[int] = None, catch_up: Optional[str] = None,
             enabled: Optional[bool] = None) -> dt.datetime:
    """Creates or replaces a schedule; returns its next run."""
    clause, values = _named([("timezone", timezone, "text"), ("priority", priority, "int"),
                             ("max_attempts", max_attempts, "int"), ("catch_up", catch_up, "text"),
                             ("enabled", enabled, "boolean")])
    result: dt.datetime = _one(conn, "SELECT {cq}.schedule(%s, %s, %s, %s" + clause + ")",
                               [name, cron, queue, Jsonb({} if payload is None else payload), *values])
    return result


def unschedule(conn: psycopg.Connection[Any], name: str) -> None:
    """Removes a schedule (QC006 when there is none); its jobs already enqueued stay."""
    _run(conn, "SELECT {cq}.unschedule(%s)", [name])


def pause_schedule(conn: psycopg.Connection[Any], name: str) -> bool:
    """The schedule fires nothing until resumed; True if it was running."""
    return bool(_one(conn, "SELECT {cq}.pause_schedule(%s)", [name]))


def resume_schedule(conn: psycopg.Connection[Any], name: str) -> bool:
    """The schedule fires again from its first slot after now, none it missed; True if it was paused."""
    return bool(_one(conn, "SELECT {cq}.resume_schedule(%s)", [name]))


def schedules(conn: psycopg.Connection[Any], queue: Optional[str] = None) -> List[Schedule]:
    """The schedules (of one queue)."""
    return _rows(conn, Schedule, f"SELECT {_columns(Schedule)} FROM {{cq}}.schedules "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY name", [queue, queue])


def run_schedules(conn: psycopg.Connection[Any], queue: Optional[str] = None) -> int:
    """The reaper's schedule pass by hand; returns the jobs enqueued."""
    return int(_one(conn, "SELECT {cq}.run_schedules(%s)", [queue]))


# --- retry, cancel, dead letters --------------------------------------------


def retry(conn: psycopg.Connection[Any], job_id: int, *, run_at: Optional[dt.datetime] = None) -> None:
    """A failed or cancelled job back to ready (at run_at) with one more attempt."""
    _run(conn, "SELECT {cq}.retry(%s, %s)", [job_id, run_at])


def cancel(conn: psycopg.Connection[Any], job_id: int) -> None:
    """A ready or running job to cancelled (its worker then gets QC003)."""
    _run(conn, "SELECT {cq}.cancel(%s)", [job_id])


def retry_jobs(conn: psycopg.Connection[Any], queue: str, *, states: Sequence[str] = ("failed",),
               finished_before: Optional[dt.datetime] = None, max_jobs: Optional[int] = None) -> int:
    """Dead letters in bulk: the queue's jobs in ``states`` back to ready; returns how many."""
    return int(_one(conn, "SELECT {cq}.retry_jobs(%s, %s::text[], %s, %s)",
                    [queue, list(states), finished_before, max_jobs]))


def cancel_jobs(conn: psycopg.Connection[Any], queue: str, *, states: Sequence[str] = ("ready",),
                created_before: Optional[dt.datetime] = None, max_jobs: Optional[int] = None) -> int:
    """The queue's jobs in ``states`` (ready, running) cancelled; returns how many."""
    return int(_one(conn, "SELECT {cq}.cancel_jobs(%s, %s::text[], %s, %s)",
                    [queue, list(states), created_before, max_jobs]))


@dataclass(frozen=True)
class JobInfo:
    """A job's record (the queue_jobs view)."""

    id: int
    queue: str
    state: str
    priority: int
    attempt: int
    max_attempts: int
    run_at: dt.datetime
    created_at: dt.datetime
    started_at: Optional[dt.datetime]
    finished_at: Optional[dt.datetime]
    lease_expires_at: Optional[dt.datetime]
    worker: Optional[str]
    dedup_key: Optional[str]
    last_error: Optional[str]
    payload: Any
    result: Any
    concurrency_key: Optional[str]


def job(conn: psycopg.Connection[Any], job_id: int) -> Optional[JobInfo]:
    """One job's record, None when there is none (or its queue is not this role's)."""
    rows = _rows(conn, JobInfo, f"SELECT {_columns(JobInfo)} FROM {{cq}}.queue_jobs WHERE id = %s", [job_id])
    return rows[0] if rows else None


def dead_letters(conn: psycopg.Connection[Any], queue: str, *, states: Sequence[str] = ("failed",),
                 before: Optional[int] = None, limit: int = 100) -> List[JobInfo]:
    """The queue's failed (or cancelled) jobs, newest id first, ``limit`` at a time: pass the
    last id of a page as ``before`` for the next (keyset pagination, no OFFSET)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10000:
        raise ValueError("limit must be an integer from 1 to 10000")
    return _rows(conn, JobInfo, f"SELECT {_columns(JobInfo)} FROM {{cq}}.queue_jobs "
                 "WHERE queue = %s AND state = ANY(%s::text[]) AND (%s::bigint IS NULL OR id < %s) "
                 "ORDER BY id DESC LIMIT %s", [queue, list(states), before, before, limit])


def purge(conn: psycopg.Connection[Any], queue: Optional[str] = None) -> int:
    """The retention pass by hand: deletes finished jobs past their retention; how many."""
    return int(_one(conn, "SELECT {cq}.purge(%s)", [queue]))


# --- metrics -----------------------------------------------------------------


@dataclass(frozen=True)
class QueueMetrics:
    """A queue's counters and gauges from shared memory (the queue_metrics view)."""

    queue: str
    enqueued: int
    claimed: int
    completed: int
    failed: int
    reaped: int
    retried: int
    cancelled: int
    ready_or_scheduled: int
    running: int
    oldest_ready_age: Optional[dt.timedelta]
    counters_since: Optional[dt.datetime]
    gauges_since: Optional[dt.datetime]


@dataclass(frozen=True)
class QueueStats:
    """A queue's jobs counted by state (the queue_stats view: reads the jobs)."""

    queue: str
    ready: int
    scheduled: int
    running: int
    done: int
    failed: int
    cancelled: int
    oldest_ready_age: Optional[dt.timedelta]
    expired_leases: int
    paused: bool


def metrics(conn: psycopg.Connection[Any], queue: Optional[str] = None) -> List[QueueMetrics]:
    """queue_metrics for one queue or all of this role's (cheap: no job rows read)."""
    return _rows(conn, QueueMetrics, f"SELECT {_columns(QueueMetrics)} FROM {{cq}}.queue_metrics "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY queue", [queue, queue])


def stats(conn: psycopg.Connection[Any], queue: Optional[str] = None) -> List[QueueStats]:
    """queue_stats for one queue or all of this role's (counts the jobs kept)."""
    return _rows(conn, QueueStats, f"SELECT {_columns(QueueStats)} FROM {{cq}}.queue_stats "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY queue", [queue, queue])
