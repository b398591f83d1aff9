"""The extension's schema and version, found at connect: every call qualified (the
python_schema suite runs all the tests with the extension in schema cq), the versions this
client supports, and clear errors for a database without the extension or at another version."""
import asyncio
import glob
import os
import re

import psycopg
import pytest

import claimqueue
from claimqueue import _ext
from conftest import SCHEMA

PACKAGE = os.path.join(os.path.dirname(__file__), "..", "claimqueue")


def test_the_extension_is_found_where_it_is_installed(lib):
    ext = claimqueue.extension(lib)
    assert ext.schema == (SCHEMA or "public")
    assert ext.version.startswith("0.5.")
    # The lib connection resolves nothing of claimqueue's through its search_path.
    if SCHEMA:
        with pytest.raises(psycopg.errors.UndefinedFunction):
            lib.execute("SELECT next_due('x')")


def test_every_statement_of_the_library_is_qualified():
    """Each call of an extension function or view in the package's statements names {cq}."""
    checked = 0
    api = ("enqueue", "enqueue_batch", "dequeue_wait", "complete", "fail", "snooze", "heartbeat",
           "next_due", "job_status", "await_jobs", "job_errors", "create_queue", "alter_queue",
           "drop_queue", "pause_queue", "resume_queue", "schedule", "unschedule", "run_schedules",
           "retry", "cancel", "retry_jobs", "cancel_jobs", "purge", "queue_settings", "queue_jobs",
           "queue_metrics", "queue_stats", "schedules")
    unqualified = []
    for path in glob.glob(os.path.join(PACKAGE, "*.py")):
        for literal in re.findall(r'"""[\s\S]*?"""|"[^"\n]*"', open(path).read()):
            if not re.match(r"\s*(SELECT|CALL)\b", literal.strip('"')):
                continue            # not a statement (a docstring, a message)
            checked += 1
            for name in api:
                for match in re.finditer(rf"(?<![\w.}}]){name}\s*\(|(?:FROM|JOIN)\s+{name}\b", literal):
                    unqualified.append((os.path.basename(path), match.group(0)))
    assert unqualified == []
    assert checked > 30, "the statements were found"


def test_supported_versions_and_clear_errors():
    assert claimqueue.SUPPORTED_EXTENSION_VERSIONS == ("0.5.0", "0.6.0")
    assert _ext.check(("cq", "0.5.0")).schema == "cq"
    assert _ext.check(("public", "0.5.7")).version == "0.5.7"
    for too_old_or_new in ("0.4.0", "0.6.0", "1.0.0", "dev"):
        with pytest.raises(claimqueue.UnsupportedVersionError) as raised:
            _ext.check(("public", too_old_or_new))
        assert f'"{too_old_or_new}"' in str(raised.value) and ">= 0.5.0 and < 0.6.0" in raised.value.detail
    with pytest.raises(claimqueue.ExtensionNotFoundError) as missing:
        _ext.check(None)
    assert "CREATE EXTENSION claimqueue" in missing.value.hint


def test_a_database_without_the_extension_is_a_clear_error_at_connect_and_at_run(conninfo):
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS cq_py_no_extension WITH (FORCE)")
        admin.execute("CREATE DATABASE cq_py_no_extension")
    try:
        with psycopg.connect(dbname="cq_py_no_extension", autocommit=True) as conn:
            with pytest.raises(claimqueue.ExtensionNotFoundError):
                claimqueue.enqueue(conn, "q", {})
        with pytest.raises(claimqueue.ExtensionNotFoundError):
            claimqueue.Worker("dbname=cq_py_no_extension", "q", lambda job: None).run()

        async def handler(job):
            pass
        with pytest.raises(claimqueue.ExtensionNotFoundError):
            asyncio.run(claimqueue.AsyncWorker("dbname=cq_py_no_extension", "q", handler).run())
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS cq_py_no_extension WITH (FORCE)")
