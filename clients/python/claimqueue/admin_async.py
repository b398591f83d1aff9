"""claimqueue.admin on an AsyncConnection: the same functions, awaited, with the same
arguments and results (see claimqueue.admin)."""
from __future__ import annotations

import datetime as dt
from typing import Any, List, Optional, Sequence, Tuple, Type, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from ._ext import extension_async
from ._shared import Duration
from .admin import (JobInfo, QueueMetrics, QueueSettings, QueueStats, Schedule, _columns, _named,
                    _queue_options)
from .errors import to_claimqueue_error

T = TypeVar("T")


async def _run(conn: psycopg.AsyncConnection[Any], template: str,
               params: Sequence[Any]) -> List[Tuple[Any, ...]]:
    try:
        cursor = await conn.execute((await extension_async(conn)).sql(template), list(params))
        return await cursor.fetchall() if cursor.description is not None else []
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


async def _one(conn: psycopg.AsyncConnection[Any], template: str, params: Sequence[Any]) -> Any:
    rows = await _run(conn, template, params)
    return rows[0][0] if rows else None


async def _rows(conn: psycopg.AsyncConnection[Any], kind: Type[T], template: str,
                params: Sequence[Any]) -> List[T]:
    return [kind(*row) for row in await _run(conn, template, params)]


async def create_queue(conn: psycopg.AsyncConnection[Any], name: str, *, lease: Optional[Duration] = None,
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
    return bool(await _one(conn, "SELECT {cq}.create_queue(%s" + clause + ")", [name, *values]))


async def alter_queue(conn: psycopg.AsyncConnection[Any], name: str, *, lease: Optional[Duration] = None,
                      max_attempts: Optional[int] = None, backoff_base: Optional[Duration] = None,
                      backoff_cap: Optional[Duration] = None, retention: Optional[Duration] = None,
                      failed_retention: Optional[Duration] = None, max_running: Optional[int] = None,
                      max_running_per_key: Optional[int] = None, fair: Optional[bool] = None) -> None:
    """Changes the settings given; None leaves one as it is (a limit of 0 removes it)."""
    clause, values = _named(_queue_options(lease, max_attempts, backoff_base, backoff_cap, retention,
                                           failed_retention, max_running, max_running_per_key, fair))
    await _run(conn, "SELECT {cq}.alter_queue(%s" + clause + ")", [name, *values])


async def drop_queue(conn: psycopg.AsyncConnection[Any], name: str, *, force: bool = False) -> int:
    """Drops a queue with its jobs and schedules; returns how many jobs were deleted."""
    return int(await _one(conn, "SELECT {cq}.drop_queue(%s, force => %s)", [name, force]))


async def pause_queue(conn: psycopg.AsyncConnection[Any], name: str) -> bool:
    """The queue takes enqueues but claims nothing; True if it was running."""
    return bool(await _one(conn, "SELECT {cq}.pause_queue(%s)", [name]))


async def resume_queue(conn: psycopg.AsyncConnection[Any], name: str) -> bool:
    """The queue is claimed from again; True if it was paused."""
    return bool(await _one(conn, "SELECT {cq}.resume_queue(%s)", [name]))


async def queue_settings(conn: psycopg.AsyncConnection[Any], name: Optional[str] = None) -> List[QueueSettings]:
    """The settings of one queue, or of every queue this role holds a privilege on."""
    return await _rows(conn, QueueSettings, f"SELECT {_columns(QueueSettings)} FROM {{cq}}.queue_settings "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY queue", [name, name])


async def schedule(conn: psycopg.AsyncConnection[Any], name: str, cron: str, queue: str, payload: Any = None, *,
                   timezone: Optional[str] = None, priority: Optional[int] = None,
                   max_attempts: Optional[int] = None, catch_up: Optional[str] = None,
                   enabled: Optional[bool] = None) -> dt.datetime:
    """Creates or replaces a schedule; returns its next run."""
    clause, values = _named([("timezone", timezone, "text"), ("priority", priority, "int"),
                             ("max_attempts", max_attempts, "int"), ("catch_up", catch_up, "text"),
                             ("enabled", enabled, "boolean")])
    result: dt.datetime = await _one(conn, "SELECT {cq}.schedule(%s, %s, %s, %s" + clause + ")",
                               [name, cron, queue, Jsonb({} if payload is None else payload), *values])
    return result


async def unschedule(conn: psycopg.AsyncConnection[Any], name: str) -> None:
    """Removes a schedule (QC006 when there is none); its jobs already enqueued stay."""
    await _run(conn, "SELECT {cq}.unschedule(%s)", [name])


async def pause_schedule(conn: psycopg.AsyncConnection[Any], name: str) -> bool:
    """The schedule fires nothing until resumed; True if it was running."""
    return bool(await _one(conn, "SELECT {cq}.pause_schedule(%s)", [name]))


async def resume_schedule(conn: psycopg.AsyncConnection[Any], name: str) -> bool:
    """The schedule fires again from its first slot after now, none it missed; True if it was paused."""
    return bool(await _one(conn, "SELECT {cq}.resume_schedule(%s)", [name]))


async def schedules(conn: psycopg.AsyncConnection[Any], queue: Optional[str] = None) -> List[Schedule]:
    """The schedules (of one queue)."""
    return await _rows(conn, Schedule, f"SELECT {_columns(Schedule)} FROM {{cq}}.schedules "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY name", [queue, queue])


async def run_schedules(conn: psycopg.AsyncConnection[Any], queue: Optional[str] = None) -> int:
    """The reaper's schedule pass by hand; returns the jobs enqueued."""
    return int(await _one(conn, "SELECT {cq}.run_schedules(%s)", [queue]))


async def retry(conn: psycopg.AsyncConnection[Any], job_id: int, *, run_at: Optional[dt.datetime] = None) -> None:
    """A failed or cancelled job back to ready (at run_at) with one more attempt."""
    await _run(conn, "SELECT {cq}.retry(%s, %s)", [job_id, run_at])


async def cancel(conn: psycopg.AsyncConnection[Any], job_id: int) -> None:
    """A ready or running job to cancelled (its worker then gets QC003)."""
    await _run(conn, "SELECT {cq}.cancel(%s)", [job_id])


async def retry_jobs(conn: psycopg.AsyncConnection[Any], queue: str, *, states: Sequence[str] = ("failed",),
                     finished_before: Optional[dt.datetime] = None, max_jobs: Optional[int] = None) -> int:
    """Dead letters in bulk: the queue's jobs in ``states`` back to ready; returns how many."""
    return int(await _one(conn, "SELECT {cq}.retry_jobs(%s, %s::text[], %s, %s)",
                    [queue, list(states), finished_before, max_jobs]))


async def cancel_jobs(conn: psycopg.AsyncConnection[Any], queue: str, *, states: Sequence[str] = ("ready",),
                      created_before: Optional[dt.datetime] = None, max_jobs: Optional[int] = None) -> int:
    """The queue's jobs in ``states`` (ready, running) cancelled; returns how many."""
    return int(await _one(conn, "SELECT {cq}.cancel_jobs(%s, %s::text[], %s, %s)",
                    [queue, list(states), created_before, max_jobs]))


async def job(conn: psycopg.AsyncConnection[Any], job_id: int) -> Optional[JobInfo]:
    """One job's record, None when there is none (or its queue is not this role's)."""
    rows = await _rows(conn, JobInfo, f"SELECT {_columns(JobInfo)} FROM {{cq}}.queue_jobs WHERE id = %s", [job_id])
    return rows[0] if rows else None


async def dead_letters(conn: psycopg.AsyncConnection[Any], queue: str, *, states: Sequence[str] = ("failed",),
                       before: Optional[int] = None, limit: int = 100) -> List[JobInfo]:
    """The queue's failed (or cancelled) jobs, newest id first, ``limit`` at a time: pass the
    last id of a page as ``before`` for the next (keyset pagination, no OFFSET)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10000:
        raise ValueError("limit must be an integer from 1 to 10000")
    return await _rows(conn, JobInfo, f"SELECT {_columns(JobInfo)} FROM {{cq}}.queue_jobs "
                 "WHERE queue = %s AND state = ANY(%s::text[]) AND (%s::bigint IS NULL OR id < %s) "
                 "ORDER BY id DESC LIMIT %s", [queue, list(states), before, before, limit])


async def purge(conn: psycopg.AsyncConnection[Any], queue: Optional[str] = None) -> int:
    """The retention pass by hand: deletes finished jobs past their retention; how many."""
    return int(await _one(conn, "SELECT {cq}.purge(%s)", [queue]))


async def metrics(conn: psycopg.AsyncConnection[Any], queue: Optional[str] = None) -> List[QueueMetrics]:
    """queue_metrics for one queue or all of this role's (cheap: no job rows read)."""
    return await _rows(conn, QueueMetrics, f"SELECT {_columns(QueueMetrics)} FROM {{cq}}.queue_metrics "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY queue", [queue, queue])


async def stats(conn: psycopg.AsyncConnection[Any], queue: Optional[str] = None) -> List[QueueStats]:
    """queue_stats for one queue or all of this role's (counts the jobs kept)."""
    return await _rows(conn, QueueStats, f"SELECT {_columns(QueueStats)} FROM {{cq}}.queue_stats "
                 "WHERE %s::text IS NULL OR queue = %s ORDER BY queue", [queue, queue])

