"""A typed claimqueue worker: two queues over one psycopg_pool pool, a dataclass payload,
middleware, a timeout, and the exceptions that snooze or fail a job at once. It passes
``mypy --strict`` (the python_client suite checks it against the installed wheel):

    PGDATABASE=... python3 examples/python-worker/typed_worker.py
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, Dict

from psycopg_pool import ConnectionPool

import claimqueue
from claimqueue import Job, NonRetryableError, Worker


@dataclasses.dataclass
class Email:
    to: str
    subject: str = ""


def send(job: Job[Email]) -> Dict[str, str]:
    if "@" not in job.payload.to:
        raise NonRetryableError(f"not an address: {job.payload.to}")
    if job.aborted.is_set():
        job.snooze(60)
    return {"sent_to": job.payload.to}


def report(job: Job[Any]) -> None:
    logging.getLogger("reports").info("report %s", job.payload)


def timed(job: Job[Any], call_next: Callable[[Job[Any]], Any]) -> Any:
    logging.getLogger("timing").debug("job %s starts", job.id)
    return call_next(job)


def main() -> None:
    with ConnectionPool("", min_size=1, max_size=6, open=True) as pool:
        with pool.connection() as conn:
            claimqueue.admin.create_queue(conn, "typed_emails", if_not_exists=True)
            claimqueue.admin.create_queue(conn, "typed_reports", if_not_exists=True)
            claimqueue.enqueue_batch(conn, "typed_emails", [{"to": "a@example.com"}, {"to": "b@example.com"}])
        worker = Worker(pool, middleware=[timed], grace=10)
        worker.add_queue("typed_emails", send, payload=Email, concurrency=2, timeout=30)
        worker.add_queue("typed_reports", report, concurrency=1)
        result = worker.drain(timeout=60)
        print(f"typed worker: {result.done} done, {result.failed} failed")


if __name__ == "__main__":
    main()
