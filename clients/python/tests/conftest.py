"""Shared by the tests: a database of its own per test module (the extension
installed), a queue of its own per test, and polling with a deadline instead of
sleeps. Connection settings come from the PG* variables (pg_virtualenv sets them).

CLAIMQUEUE_TEST_SCHEMA=cq installs the extension in that schema instead of public
(the python_schema suite): the workers' connections (from conninfo) and the ``lib``
connection keep the default search_path, so every call the library makes must be
qualified; only the tests' own SQL (``db``) has the schema on its search_path."""
import itertools
import os
import sys
import threading
import time

import psycopg
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

_queue_numbers = itertools.count(1)
SCHEMA = os.environ.get("CLAIMQUEUE_TEST_SCHEMA") or None


@pytest.fixture(scope="module")
def conninfo(request):
    name = "cq_py_" + request.module.__name__.rsplit(".", 1)[-1]
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    with psycopg.connect(dbname=name, autocommit=True) as conn:
        conn.execute("SET client_min_messages = error")
        if SCHEMA:
            conn.execute(f"CREATE SCHEMA {SCHEMA}")
            conn.execute(f"CREATE EXTENSION claimqueue SCHEMA {SCHEMA}")
        else:
            conn.execute("CREATE EXTENSION claimqueue")
    yield f"dbname={name}"
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def db(conninfo):
    """An autocommit connection for the test's own checks (and the library's calls in
    tests written before the python_schema suite: those are qualified all the same)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        if SCHEMA:
            conn.execute(f"SET search_path = public, {SCHEMA}")   # tables the tests make: public
        yield conn


@pytest.fixture
def lib(conninfo):
    """An autocommit connection with the default search_path, for the library's calls."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        yield conn


@pytest.fixture
def new_queue(db):
    """Creates a queue of its own for the test: new_queue("lease => '1 second'")."""
    def create(settings="lease => '30 seconds'"):
        name = f"q{next(_queue_numbers)}"
        db.execute(f"SELECT create_queue('{name}', {settings}, backoff_base => '0', backoff_cap => '0')")
        return name
    return create


def with_schema(conninfo):
    """conninfo for a connection that runs the tests' own SQL (the schema on its search_path)."""
    return f"{conninfo} options='-c search_path=public,{SCHEMA}'" if SCHEMA else conninfo


def until(check, what, deadline=20.0):
    """Returns check()'s first truthy value; fails the test after `deadline` seconds."""
    end = time.monotonic() + deadline
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"gave up waiting for: {what}")
        time.sleep(0.02)


class Events:
    """Collects a worker's events by kind (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.by_kind = {}

    def __call__(self, event):
        with self._lock:
            self.by_kind.setdefault(event.kind, []).append(event)

    def __getitem__(self, kind):
        with self._lock:
            return list(self.by_kind.get(kind, []))


def job_row(db, job_id):
    return db.execute("SELECT state, attempt, last_error, worker FROM queue_jobs WHERE id = %s",
                      (job_id,)).fetchone()
