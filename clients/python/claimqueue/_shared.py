"""What the blocking Worker and the AsyncWorker share: job records, events, SQL, option checks."""
from __future__ import annotations

import datetime as dt
import json
import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any, Optional, Sequence

# Every statement a worker runs. dequeue_wait is a CALL alone in autocommit (it
# commits before it sleeps); each other statement is its own transaction unless
# a handler's complete_in_transaction() wraps it.
CLAIM = ("CALL dequeue_wait(%s, %s, batch => %s, lease => make_interval(secs => %s), "
         "wait => make_interval(secs => %s))")
# release_on_disconnect is named only when asked for: a 0.4.0 server has no such argument.
CLAIM_RELEASING = CLAIM[:-1] + ", release_on_disconnect => true)"
COMPLETE = "SELECT complete(%s, %s)"
COMPLETE_WITH_RESULT = "SELECT complete(%s, %s, %s::jsonb)"
FAIL = "SELECT fail(%s, %s, %s)"
HAND_BACK = "SELECT fail(%s, %s, 'worker stopping', retry_in => interval '0')"
HEARTBEAT = "SELECT heartbeat(%s, %s, make_interval(secs => %s))"
QUEUE_LEASE = "SELECT extract(epoch FROM lease)::float8 FROM queue_settings WHERE queue = %s"
# Jobs running under a worker's name (unique per worker) after it stopped
# claiming: claims no handler will finish. Served by jobs_running_idx.
CLAIMS_LEFT = """SELECT id, attempt, payload, max_attempts, priority, lease_expires_at, created_at
                   FROM queue_jobs
                  WHERE queue = %s AND worker = %s AND state = 'running'
                    AND lease_expires_at IS NOT NULL"""

RUNNING, COMPLETED, FAILED, LOST, HANDED_BACK = "running", "completed", "failed", "lost", "handed_back"


@dataclass
class JobRecord:
    """A job as claimed: the columns dequeue() returns."""

    id: int
    queue: str
    payload: Any
    #: The fencing token: complete, fail and heartbeat act only while the job runs under it.
    attempt: int
    max_attempts: int
    priority: int
    lease_expires_at: dt.datetime
    enqueued_at: dt.datetime


@dataclass(frozen=True)
class WorkerEvent:
    """One thing a worker did, for logging and metrics (``on_event``).

    kind: ``claimed`` (jobs), ``started`` (job), ``done`` (job, seconds), ``failed`` (job,
    error, outcome 'ready' or 'failed'), ``lost`` (job, error: QC003, this attempt no longer
    holds the job; not an error), ``handed_back`` (job), ``heartbeat`` (job,
    lease_expires_at), ``error`` (error: the worker's own trouble, such as a lost
    connection), ``stopping``, ``stopped``.
    """

    kind: str
    job: Optional[JobRecord] = None
    jobs: Sequence[JobRecord] = ()
    error: Optional[BaseException] = None
    outcome: Optional[str] = None
    seconds: Optional[float] = None
    lease_expires_at: Optional[dt.datetime] = None


def record_from_json(queue: str, row: dict) -> dict:
    """The fields of a JobRecord from one element of dequeue_wait's jobs array."""
    return dict(
        id=int(row["id"]),
        queue=queue,
        payload=row["payload"],
        attempt=int(row["attempt"]),
        max_attempts=int(row["max_attempts"]),
        priority=int(row["priority"]),
        lease_expires_at=dt.datetime.fromisoformat(row["lease_expires_at"]),
        enqueued_at=dt.datetime.fromisoformat(row["enqueued_at"]),
    )


def record_from_row(queue: str, row: Sequence[Any]) -> JobRecord:
    """A JobRecord from a CLAIMS_LEFT row."""
    id_, attempt, payload, max_attempts, priority, lease_expires_at, created_at = row
    return JobRecord(id=id_, queue=queue, payload=payload, attempt=attempt,
                     max_attempts=max_attempts, priority=priority,
                     lease_expires_at=lease_expires_at, enqueued_at=created_at)


def seconds(value: Any, what: str, allow_none: bool = False, minimum: float = 0.0) -> Optional[float]:
    """A duration option as seconds: a number or a timedelta."""
    if value is None and allow_none:
        return None
    if isinstance(value, dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= minimum:
        raise ValueError(f"{what} must be a number of seconds (or a timedelta) >= {minimum}")
    return float(value)


def check_concurrency(concurrency: Any) -> int:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= 1000:
        raise ValueError("concurrency must be an integer from 1 to 1000")
    return concurrency


def default_worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def result_text(job: JobRecord, value: Any) -> Optional[str]:
    """A handler's return value as jsonb text, None for none. A value JSON cannot
    represent (a set, an object, a cycle, NaN) raises TypeError: the attempt fails."""
    if value is None:
        return None
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        raise TypeError(f"the result of job {job.id} is not JSON-serialisable: {error_text(err)}") from err


def refused_result(job: JobRecord, err: BaseException) -> Optional[ValueError]:
    """For an error of complete() with a result: the handler's error if the server refused
    the result itself (larger than claimqueue.max_payload_size: 54000, invalid: class 22)."""
    sqlstate = getattr(err, "sqlstate", None) or ""
    if sqlstate == "54000" or sqlstate.startswith("22"):
        return ValueError(f"the result of job {job.id} was refused: {error_text(err)}")
    return None


def error_text(err: BaseException) -> str:
    return str(err) or type(err).__name__
