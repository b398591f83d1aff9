"""Shared by the tests: a database of its own per test module (the extension
installed), a queue of its own per test, and polling with a deadline instead of
sleeps. Connection settings come from the PG* variables (pg_virtualenv sets them)."""
import itertools
import os
import sys
import threading
import time

import psycopg
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

_queue_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def conninfo(request):
    name = "cq_py_" + request.module.__name__.rsplit(".", 1)[-1]
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    with psycopg.connect(dbname=name, autocommit=True) as conn:
        conn.execute("SET client_min_messages = error")
        conn.execute("CREATE EXTENSION claimqueue")
    yield f"dbname={name}"
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def db(conninfo):
    """An autocommit connection for the test's own checks."""
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
