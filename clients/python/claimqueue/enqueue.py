"""enqueue() and enqueue_batch() on the caller's connection, in the caller's transaction.

psycopg opens a transaction on the first statement unless the connection is in
autocommit: the job becomes claimable when the caller commits.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, List, Optional, Sequence, Tuple

import psycopg
from psycopg.types.json import Jsonb

from .errors import to_claimqueue_error


def _named_arguments(run_at: Optional[dt.datetime], priority: Optional[int],
                     max_attempts: Optional[int], dedup_key: Optional[str],
                     concurrency_key: Optional[str]) -> Tuple[str, list]:
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


def _enqueue_statement(queue: str, payload: Any, **options: Any) -> Tuple[str, list]:
    clause, values = _named_arguments(**options)
    return (f"SELECT enqueue(%s, %s{clause})",
            [queue, Jsonb({} if payload is None else payload), *values])


def _enqueue_batch_statement(queue: str, payloads: Sequence[Any], **options: Any) -> Tuple[str, list]:
    clause, values = _named_arguments(dedup_key=None, **options)
    return (f"SELECT id FROM enqueue_batch(%s, %s::jsonb[]{clause}) AS id",
            [queue, [Jsonb({} if p is None else p) for p in payloads], *values])


def enqueue(conn: psycopg.Connection, queue: str, payload: Any = None, *,
            run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
            max_attempts: Optional[int] = None, dedup_key: Optional[str] = None,
            concurrency_key: Optional[str] = None) -> int:
    """Adds a job on ``conn`` and returns its id.

    run_at: not claimable before then (default now); priority: -100 ... 100, higher first;
    max_attempts: default the queue's; dedup_key: while a job of the queue with this key is
    ready or running, its id is returned instead; concurrency_key: what the queue's
    max_running_per_key counts by (1-512 bytes; a 0.5.0 server).
    """
    sql, params = _enqueue_statement(queue, payload, run_at=run_at, priority=priority,
                                     max_attempts=max_attempts, dedup_key=dedup_key,
                                     concurrency_key=concurrency_key)
    try:
        return conn.execute(sql, params).fetchone()[0]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


def enqueue_batch(conn: psycopg.Connection, queue: str, payloads: Sequence[Any], *,
                  run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
                  max_attempts: Optional[int] = None,
                  concurrency_key: Optional[str] = None) -> List[int]:
    """Adds one job per payload in one statement, all with the same options; returns
    their ids in payload order."""
    sql, params = _enqueue_batch_statement(queue, payloads, run_at=run_at, priority=priority,
                                           max_attempts=max_attempts, concurrency_key=concurrency_key)
    try:
        return [row[0] for row in conn.execute(sql, params).fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


async def enqueue_async(conn: psycopg.AsyncConnection, queue: str, payload: Any = None, *,
                        run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
                        max_attempts: Optional[int] = None, dedup_key: Optional[str] = None,
                        concurrency_key: Optional[str] = None) -> int:
    """enqueue() on an AsyncConnection."""
    sql, params = _enqueue_statement(queue, payload, run_at=run_at, priority=priority,
                                     max_attempts=max_attempts, dedup_key=dedup_key,
                                     concurrency_key=concurrency_key)
    try:
        cursor = await conn.execute(sql, params)
        return (await cursor.fetchone())[0]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err


async def enqueue_batch_async(conn: psycopg.AsyncConnection, queue: str, payloads: Sequence[Any], *,
                              run_at: Optional[dt.datetime] = None, priority: Optional[int] = None,
                              max_attempts: Optional[int] = None,
                              concurrency_key: Optional[str] = None) -> List[int]:
    """enqueue_batch() on an AsyncConnection."""
    sql, params = _enqueue_batch_statement(queue, payloads, run_at=run_at, priority=priority,
                                           max_attempts=max_attempts, concurrency_key=concurrency_key)
    try:
        cursor = await conn.execute(sql, params)
        return [row[0] for row in await cursor.fetchall()]
    except psycopg.Error as err:
        raise to_claimqueue_error(err) from err
