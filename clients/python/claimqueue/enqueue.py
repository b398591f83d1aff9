"""enqueue() and enqueue_batch() on the caller's connection, in the caller's transaction.

psycopg opens a transaction on the first statement unless the connection is in
autocommit: the job becomes claimable when the caller commits. Every call is qualified
with the extension's schema (looked up once per connection).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple, Union

import psycopg
from psycopg.types.json import Jsonb

from ._ext import Extension, extension, extension_async
from .errors import to_claimqueue_error


@dataclass(frozen=True)
class JobSpec:
    """One job of enqueue_batch() with options of its own; an option left None takes the
    batch's (and then the server's default)."""

    payload: Any = None
    run_at: Optional[dt.datetime] = None
    priority: Optional[int] = None
    max_attempts: Optional[int] = None
    dedup_key: Optional[str] = None
    concurrency_key: Optional[str] = None


def _named_arguments(run_at: Optional[dt.datetime], priority: Optional[int],
                     max_attempts: Optional[int], dedup_key: Optional[str],
                     concurrency_key: Optional[str]) -> Tuple[str, List[Any]]:
    # Only the options given are passed, so the server's defaults apply to the
    # rest (a NULL priority would be refused, not defaulted).
    parts, values = [], []
    for name, value, cast in (("run_at", run_at, "timestamptz"), ("priority", priority, "int"),
                              ("max_attempts", max_attempts, "int"), ("dedup_key", dedup_key, "text"),
                              ("concurrency_key", concurrency_key, "text")):
        if value is not None:
            parts.append(f"{name} => %s::{cast}")
            values.append(value)
    return ("".join(", " + part for part in parts), values)


def _enqueue_statement(ext: Extension, queue: str, payload: Any, **options: Any) -> Tuple[Any, List[Any]]:
    clause, values = _named_arguments(**options)
    return (ext.sql("SELECT {cq}.enqueue(%s, %s" + clause.replace("{", "{{").replace("}", "}}") + ")"),
            [queue, Jsonb({} if payload is None else payload), *values])


# Per-job options: one enqueue() per row of the arrays, in their order, in one statement.
# A NULL option takes the server's default (coalesce for priority, which refuses NULL).
_BATCH_PER_JOB = """SELECT {cq}.enqueue(%s, j.payload, run_at => j.run_at,
                                      priority => coalesce(j.priority, 0),
                                      max_attempts => j.max_attempts, dedup_key => j.dedup_key,
                                      concurrency_key => j.concurrency_key)
                      FROM unnest(%s::jsonb[], %s::timestamptz[], %s::int[], %s::int[], %s::text[],
                                  %s::text[]) WITH ORDINALITY
                           AS j(payload, run_at, priority, max_attempts, dedup_key, concurrency_key, n)
                     ORDER BY j.n"""


def _enqueue_batch_statement(ext: Extension, queue: str, jobs: Sequence[Union[JobSpec, Any]],
                             run_at: Optional[dt.datetime], priority: Optional[int],
                             max_attempts: Optional[int], dedup_key: Optional[str],
                             concurrency_key: Optional[str]) -> Tuple[Any, List[Any]]:
    specs = [job if isinstance(job, JobSpec) else JobSpec(payload=job) for job in jobs]
    if all(s == JobSpec(payload=s.payload) for s in specs) and dedup_key is None:
        # The same options for all: the server's enqueue_batch.
        clause, values = _named_arguments(run_at, priority, max_attempts, None, concurrency_key)
        return (ext.sql("SELECT id FROM {cq}.enqueue_batch(%s, %s::jsonb[]"
                        + clause.replace("{", "{{").replace("}", "}}") + ") AS id"),
                [queue, [Jsonb({} if s.payload is None else s.payload) for s in specs], *values])

    def pick(value: Any, default: Any) -> Any:
        return default if value is None else value
    return (ext.sql(_BATCH_PER_JOB),
            [queue,
             [Jsonb({} if s.payload is None else s.payload) for s in specs],
             [pick(s.run_at, run_at) for s in specs],
             [pick(s.priority, priority) for s in specs],
             [pick(s.max_attempts, max_attempts) for s in specs],
             [pick(s.dedup_key, None) for s in specs],
             [pick(s.concurrency_key, concurrency_key) for s in specs]])


def enqueue(conn: psycopg.Connection[Any], queue: str, payload: Any = None, *,
            run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
            max_attempts: Optional[int] = None, dedup_key: Optional[str] = None,
            concurrency_key: Optional[str] = None) -> int:
    """Adds a job on ``conn`` and returns its id.

    run_at: not claimable before then (default now); priority: -100 ... 100, higher first;
    max_attempts: default the queue's; dedup_key: while a job of the queue with this key is
    ready or running, its id is returned instead; concurrency_key: what the queue's
    max_running_per_key counts by (1-512 bytes).
    """
    try:
        sql, params = _enqueue_statement(extension(conn), queue, payload, run_at=run_at,
                                         priority=priority, max_attempts=max_attempts,
                                         dedup_key=dedup_key, concurrency_key=concurrency_key)
        row = conn.execute(sql, params).fetchone()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    assert row is not None
    return int(row[0])


def enqueue_batch(conn: psycopg.Connection[Any], queue: str, jobs: Sequence[Union[JobSpec, Any]], *,
                  run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
                  max_attempts: Optional[int] = None,
                  concurrency_key: Optional[str] = None) -> List[int]:
    """Adds one job per element of ``jobs`` in one statement; returns their ids in order.

    An element is a payload, or a JobSpec with options of its own (dedup_key included); the
    keyword options apply to the elements that leave them unset. A dedup key that another
    job of the batch (or a live job) holds gives that job's id.
    """
    try:
        sql, params = _enqueue_batch_statement(extension(conn), queue, jobs, run_at, priority,
                                               max_attempts, None, concurrency_key)
        return [int(row[0]) for row in conn.execute(sql, params).fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


async def enqueue_async(conn: psycopg.AsyncConnection[Any], queue: str, payload: Any = None, *,
                        run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
                        max_attempts: Optional[int] = None, dedup_key: Optional[str] = None,
                        concurrency_key: Optional[str] = None) -> int:
    """enqueue() on an AsyncConnection."""
    try:
        sql, params = _enqueue_statement(await extension_async(conn), queue, payload, run_at=run_at,
                                         priority=priority, max_attempts=max_attempts,
                                         dedup_key=dedup_key, concurrency_key=concurrency_key)
        cursor = await conn.execute(sql, params)
        row = await cursor.fetchone()
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
    assert row is not None
    return int(row[0])


async def enqueue_batch_async(conn: psycopg.AsyncConnection[Any], queue: str,
                              jobs: Sequence[Union[JobSpec, Any]], *,
                              run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
                              max_attempts: Optional[int] = None,
                              concurrency_key: Optional[str] = None) -> List[int]:
    """enqueue_batch() on an AsyncConnection."""
    try:
        sql, params = _enqueue_batch_statement(await extension_async(conn), queue, jobs, run_at,
                                               priority, max_attempts, None, concurrency_key)
        cursor = await conn.execute(sql, params)
        return [int(row[0]) for row in await cursor.fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
