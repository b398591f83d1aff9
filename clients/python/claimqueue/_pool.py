"""Where a worker's connections come from: the application's psycopg_pool pool, or a pool
of the worker's own made from a conninfo. Every connection is used in autocommit while the
worker holds it, and given back as it came."""
from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Dict, Iterator, Optional, Union

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import _ext
from ._ext import Extension


def _autocommit(conn: Any) -> bool:
    before = bool(conn.autocommit)
    if not before:
        conn.autocommit = True
    return before


def _restore(conn: Any, before: bool) -> None:
    if before or conn.closed or conn.broken:
        return
    try:
        conn.autocommit = False
    except psycopg.Error:
        pass


def check_size(max_size: int, queues: int, size: int) -> None:
    """A pool the waiting connections would fill leaves none to finish a job: refused."""
    if max_size < queues + 1:
        raise ValueError(f"the pool's max_size ({max_size}) is too small for {queues} queue(s): the "
                         f"worker holds one connection per queue and needs at least one more; "
                         f"{size} (queues + total concurrency + 1) never makes a handler wait")


class Connections:
    """A worker's connections from a ConnectionPool (its own when given a conninfo)."""

    def __init__(self, db: Union[str, ConnectionPool], size: int) -> None:
        self.own = isinstance(db, str)
        if isinstance(db, str):
            self.pool: ConnectionPool = ConnectionPool(db, min_size=1, max_size=max(size, 1), open=False,
                                                       kwargs={"autocommit": True},
                                                       name="claimqueue-worker")
        elif isinstance(db, ConnectionPool):
            self.pool = db
        else:
            raise TypeError("db must be a conninfo string or a psycopg_pool.ConnectionPool")
        self._held: Dict[int, bool] = {}

    def open(self, queues: int, size: int) -> None:
        if self.own:
            self.pool.open()
        else:
            check_size(self.pool.max_size, queues, size)

    def close(self) -> None:
        if self.own:
            self.pool.close()

    @contextlib.contextmanager
    def connection(self, timeout: Optional[float] = None) -> Iterator[psycopg.Connection[Any]]:
        with self.pool.connection(timeout=timeout) as conn:
            before = _autocommit(conn)
            try:
                yield conn
            finally:
                _restore(conn, before)

    def hold(self) -> psycopg.Connection[Any]:
        """A connection kept until release(): a waiting dequeue's."""
        conn = self.pool.getconn()
        try:
            self._held[id(conn)] = _autocommit(conn)
            # The session waits as long as `wait` says: a role's statement_timeout must
            # not cut it short (reset on release).
            conn.execute("SET statement_timeout = 0")
        except BaseException:
            self._held.pop(id(conn), None)
            self.pool.putconn(conn)
            raise
        return conn

    def release(self, conn: psycopg.Connection[Any]) -> None:
        before = self._held.pop(id(conn), True)
        if not conn.closed and not conn.broken:
            try:
                conn.execute("RESET statement_timeout")
            except psycopg.Error:
                pass
        _restore(conn, before)
        self.pool.putconn(conn)

    def extension(self) -> Extension:
        with self.connection() as conn:
            return _ext.extension(conn)


class AsyncConnections:
    """An AsyncWorker's connections from an AsyncConnectionPool (its own for a conninfo)."""

    def __init__(self, db: Union[str, AsyncConnectionPool], size: int) -> None:
        self.own = isinstance(db, str)
        self._conninfo = db if isinstance(db, str) else None
        self._size = max(size, 1)
        if isinstance(db, AsyncConnectionPool):
            self.pool: Optional[AsyncConnectionPool] = db
        elif isinstance(db, str):
            self.pool = None              # made in open(): it needs the running loop
        else:
            raise TypeError("db must be a conninfo string or a psycopg_pool.AsyncConnectionPool")
        self._held: Dict[int, bool] = {}

    async def open(self, queues: int) -> None:
        if self.pool is not None and not self.own:
            check_size(self.pool.max_size, queues, self._size)
        if self.own:
            self.pool = AsyncConnectionPool(self._conninfo or "", min_size=1, max_size=self._size,
                                            open=False, kwargs={"autocommit": True},
                                            name="claimqueue-worker")
            await self.pool.open()

    async def close(self) -> None:
        if self.own and self.pool is not None:
            await self.pool.close()

    def _pool(self) -> AsyncConnectionPool:
        assert self.pool is not None, "open() first"
        return self.pool

    @contextlib.asynccontextmanager
    async def connection(self, timeout: Optional[float] = None) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        async with self._pool().connection(timeout=timeout) as conn:
            before = bool(conn.autocommit)
            if not before:
                await conn.set_autocommit(True)
            try:
                yield conn
            finally:
                if not before and not conn.closed and not conn.broken:
                    try:
                        await conn.set_autocommit(False)
                    except psycopg.Error:
                        pass

    async def hold(self) -> psycopg.AsyncConnection[Any]:
        conn = await self._pool().getconn()
        before = bool(conn.autocommit)
        try:
            if not before:
                await conn.set_autocommit(True)
            await conn.execute("SET statement_timeout = 0")
        except BaseException:
            await self._pool().putconn(conn)
            raise
        self._held[id(conn)] = before
        return conn

    async def release(self, conn: psycopg.AsyncConnection[Any]) -> None:
        before = self._held.pop(id(conn), True)
        if not conn.closed and not conn.broken:
            try:
                await conn.execute("RESET statement_timeout")
                if not before:
                    await conn.set_autocommit(False)
            except psycopg.Error:
                pass
        await self._pool().putconn(conn)

    async def extension(self) -> Extension:
        async with self.connection() as conn:
            return await _ext.extension_async(conn)
