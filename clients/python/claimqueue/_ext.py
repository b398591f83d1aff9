"""Where the extension lives and which version it is: read from pg_extension once per
connection, checked against the versions this client supports, and used to qualify every
call (``CREATE EXTENSION claimqueue SCHEMA cq`` works as well as the default ``public``)."""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import Any, Tuple

import psycopg
from psycopg import sql

from .errors import ExtensionNotFoundError, UnsupportedVersionError

#: The extension versions this client supports: at least the first, below the second.
SUPPORTED_EXTENSION_VERSIONS: Tuple[str, str] = ("0.5.0", "0.6.0")

LOOKUP = """SELECT n.nspname, e.extversion
              FROM pg_catalog.pg_extension e
              JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
             WHERE e.extname = 'claimqueue'"""


def _version_tuple(version: str) -> Tuple[int, ...]:
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        return (-1,)
    return tuple(int(part) for part in match.groups())


@dataclass(frozen=True)
class Extension:
    """The claimqueue extension of one database: its schema and version."""

    schema: str
    version: str

    def sql(self, template: str) -> sql.Composed:
        """The statement ``template`` with ``{cq}`` replaced by the quoted schema (and
        ``{{``/``}}`` for literal braces)."""
        return sql.SQL(template).format(cq=sql.Identifier(self.schema))


def check(row: Any) -> Extension:
    """The Extension of a LOOKUP row; a clear error when none or an unsupported version."""
    low, high = SUPPORTED_EXTENSION_VERSIONS
    if row is None:
        raise ExtensionNotFoundError(
            "the claimqueue extension is not installed in this database", None,
            hint="Run CREATE EXTENSION claimqueue (optionally SCHEMA name) as a superuser; "
                 f"this client supports versions >= {low} and < {high}.")
    schema, version = row
    if not _version_tuple(low) <= _version_tuple(version) < _version_tuple(high):
        raise UnsupportedVersionError(
            f'the claimqueue extension is at version "{version}", which this client does not support',
            None, detail=f"This client supports versions >= {low} and < {high}.",
            hint="Upgrade the extension (ALTER EXTENSION claimqueue UPDATE) or install a client "
                 "version that supports it (see the client's README, version policy).")
    return Extension(schema=schema, version=version)


# One lookup per connection object (a pool's connections included); a connection that is
# closed and garbage-collected drops out.
_cache: "weakref.WeakKeyDictionary[Any, Extension]" = weakref.WeakKeyDictionary()


def extension(conn: psycopg.Connection[Any]) -> Extension:
    """The extension of ``conn``'s database (looked up once per connection)."""
    found = _cache.get(conn)
    if found is None:
        found = check(conn.execute(LOOKUP).fetchone())
        _cache[conn] = found
    return found


async def extension_async(conn: psycopg.AsyncConnection[Any]) -> Extension:
    """extension() on an AsyncConnection."""
    found = _cache.get(conn)
    if found is None:
        cursor = await conn.execute(LOOKUP)
        found = check(await cursor.fetchone())
        _cache[conn] = found
    return found


def forget(conn: Any) -> None:
    """Drops the cached lookup of ``conn`` (after the extension moved or was updated)."""
    _cache.pop(conn, None)
