"""What the blocking Worker and the AsyncWorker share: job records, events, statements,
queue settings, option checks, the handler's outcome and the structured log."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import socket
import traceback
import uuid
from dataclasses import dataclass
from typing import (Any, Callable, Dict, Generic, Literal, Mapping, Optional, Sequence, Tuple,
                    TypeVar, Union, cast)

from .errors import NonRetryableError, RetryIn, Snooze, StaleClaimError

#: A duration: seconds (int or float) or a timedelta.
Duration = Union[int, float, dt.timedelta]
#: What a worker does with a job whose handler outlived its timeout and grace: fail it
#: (retried if it has attempts left), fail it at once, or hand it back without spending an attempt.
OnTimeout = Literal["retry", "fail", "hand_back"]

P = TypeVar("P")

# Every statement a worker runs; {cq} is the extension's schema. dequeue_wait is a CALL
# alone in autocommit (it commits before it sleeps); each other statement is its own
# transaction unless a handler's complete_in_transaction() wraps it.
CLAIM = ("CALL {cq}.dequeue_wait(%s, %s, batch => %s, lease => make_interval(secs => %s), "
         "wait => make_interval(secs => %s))")
CLAIM_RELEASING = CLAIM[:-1] + ", release_on_disconnect => true)"
COMPLETE = "SELECT {cq}.complete(%s, %s)"
COMPLETE_WITH_RESULT = "SELECT {cq}.complete(%s, %s, %s::jsonb)"
FAIL = ("SELECT {cq}.fail(%s, %s, %s, retry_in => make_interval(secs => %s), retryable => %s, "
        "error_detail => %s::jsonb)")
SNOOZE = "SELECT {cq}.snooze(%s, %s, make_interval(secs => %s))"
HEARTBEAT = "SELECT {cq}.heartbeat(%s, %s, make_interval(secs => %s))"
# next_due raises the server's own error for a queue that does not exist (QC001) or that
# this role may not use (42501); then the lease is read from the settings view.
QUEUE_CHECK = "SELECT {cq}.next_due(%s)"
QUEUE_LEASE = "SELECT extract(epoch FROM lease)::float8 FROM {cq}.queue_settings WHERE queue = %s"
# Jobs running under a worker's name (unique per worker) after it stopped claiming:
# claims no handler will finish. Served by jobs_running_idx.
CLAIMS_LEFT = """SELECT id, attempt, payload, max_attempts, priority, lease_expires_at, created_at
                   FROM {cq}.queue_jobs
                  WHERE queue = %s AND worker = %s AND state = 'running'
                    AND lease_expires_at IS NOT NULL"""

# An attempt's states. SETTLING: one thread (the handler's, or the supervisor's at the end
# of a timeout) has taken the right to finish it; the others leave it alone.
RUNNING, SETTLING, COMPLETED, FAILED, LOST, HANDED_BACK, SNOOZED, TIMED_OUT = (
    "running", "settling", "completed", "failed", "lost", "handed_back", "snoozed", "timed_out")


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
    """One thing a worker did, for logging, metrics and tracing (``on_event``).

    kind: ``claimed`` (jobs), ``started`` (job), ``done`` (job, seconds), ``failed`` (job,
    error, outcome 'ready' or 'failed', seconds), ``snoozed`` (job, seconds: the delay),
    ``timed_out`` (job, outcome: what the worker did, 'ready', 'failed' or 'handed_back'),
    ``lost`` (job, error: QC003, this attempt no longer holds the job; not an error),
    ``handed_back`` (job), ``heartbeat`` (job, lease_expires_at), ``error`` (error: the
    worker's own trouble, such as a lost connection), ``stopping``, ``stopped``.
    """

    kind: str
    job: Optional[JobRecord] = None
    jobs: Sequence[JobRecord] = ()
    error: Optional[BaseException] = None
    outcome: Optional[str] = None
    seconds: Optional[float] = None
    lease_expires_at: Optional[dt.datetime] = None


@dataclass
class QueueConfig(Generic[P]):
    """One queue a worker serves: its handler and how it runs."""

    name: str
    handler: Callable[..., Any]
    concurrency: int = 1
    lease: Optional[float] = None
    timeout: Optional[float] = None
    timeout_grace: float = 5.0
    on_timeout: OnTimeout = "retry"
    payload: Optional[Callable[[Any], P]] = None


def make_queue(name: Any, handler: Any, concurrency: Any, lease: Any, timeout: Any,
               timeout_grace: Any, on_timeout: Any, payload: Any) -> QueueConfig[Any]:
    if not isinstance(name, str) or not name:
        raise ValueError("queue must be a non-empty string")
    if not callable(handler):
        raise TypeError("handler must be callable")
    if on_timeout not in ("retry", "fail", "hand_back"):
        raise ValueError("on_timeout must be 'retry', 'fail' or 'hand_back'")
    if payload is not None and not callable(payload):
        raise TypeError("payload must be callable (a dataclass, a model class, a function)")
    return QueueConfig(name=name, handler=handler, concurrency=check_concurrency(concurrency),
                       lease=seconds(lease, "lease", allow_none=True, minimum=0.001),
                       timeout=seconds(timeout, "timeout", allow_none=True, minimum=0.001),
                       timeout_grace=seconds(timeout_grace, "timeout_grace") or 0.0,
                       on_timeout=on_timeout, payload=payload)


def convert_payload(config: QueueConfig[Any], payload: Any) -> Any:
    """The payload as the queue's ``payload`` type: a dataclass gets the object's fields as
    keyword arguments, any other callable the decoded JSON."""
    convert = config.payload
    if convert is None:
        return payload
    try:
        if dataclasses.is_dataclass(convert) and isinstance(payload, Mapping):
            return cast(Any, convert)(**payload)
        return convert(payload)
    except Exception as err:  # noqa: BLE001 - a payload that does not fit never will
        raise NonRetryableError(f"the payload does not fit {getattr(convert, '__name__', convert)}: "
                                f"{error_text(err)}") from err


def record_from_json(queue: str, row: Dict[str, Any]) -> Dict[str, Any]:
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


# fail() refuses an error and error_detail over 64 kB together (54000): each part is
# clipped to a budget of UTF-8 bytes well inside it.
ERROR_BYTES, MESSAGE_BYTES, STACK_BYTES, EXTRA_BYTES = 8000, 8000, 24000, 8000


def clip(text: str, limit: int, keep_end: bool = False) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes (the end kept for a stack), marked."""
    data = text.encode()
    if len(data) <= limit:
        return text
    if keep_end:
        return "...\n" + data[-(limit - 8):].decode(errors="ignore")
    return data[:limit - 8].decode(errors="ignore") + " ..."


def error_text(err: BaseException) -> str:
    return clip(str(err) or type(err).__name__, ERROR_BYTES)


def error_detail(err: BaseException) -> str:
    """fail()'s error_detail: {"class", "message", "stack"} (the keys both clients send), and
    the exception's ``detail`` attribute when it has one, as jsonb text."""
    kind = type(err)
    stack = "".join(traceback.format_exception(kind, err, err.__traceback__))
    detail: Dict[str, Any] = {"class": f"{kind.__module__}.{kind.__qualname__}",
                              "message": clip(str(err), MESSAGE_BYTES),
                              "stack": clip(stack, STACK_BYTES, keep_end=True)}
    extra = getattr(err, "detail", None)
    if extra is not None:
        try:
            text = json.dumps(extra, ensure_ascii=False)
            detail["detail"] = extra if len(text.encode()) <= EXTRA_BYTES else clip(text, EXTRA_BYTES)
        except (TypeError, ValueError):
            detail["detail"] = clip(repr(extra), EXTRA_BYTES)
    return json.dumps(detail, ensure_ascii=False)


@dataclass(frozen=True)
class Settle:
    """What becomes of an attempt: the statement to run and how to report it."""

    kind: str                   # complete, fail, snooze, lost
    result: Optional[str] = None
    error: Optional[BaseException] = None
    message: Optional[str] = None
    retry_in: Optional[float] = None
    retryable: bool = True
    delay: float = 0.0


def timeout_settle(config: QueueConfig[Any], err: Optional[BaseException]) -> Settle:
    """What a timed-out attempt becomes, as the queue's on_timeout says."""
    message = f"timed out after {config.timeout:g} s"
    if err is None:
        message += f" (the handler had not returned {config.timeout_grace:g} s later)"
        err = TimeoutError(message)
    if config.on_timeout == "hand_back":
        return Settle("snooze", delay=0.0, error=err, message=message)
    return Settle("fail", error=err, message=message, retryable=config.on_timeout == "retry")


def settle_for(job: JobRecord, config: QueueConfig[Any], raised: Optional[BaseException],
               value: Any, timed_out: bool) -> Settle:
    """The outcome of a handler that returned ``value`` or raised ``raised``."""
    if raised is None:
        try:
            return Settle("complete", result=result_text(job, value))
        except TypeError as err:
            raised = err
    if isinstance(raised, StaleClaimError):
        return Settle("lost", error=raised)
    if isinstance(raised, Snooze):
        return Settle("snooze", delay=max(raised.seconds, 0.0), error=raised)
    if timed_out:
        return timeout_settle(config, raised)
    if isinstance(raised, RetryIn):
        return Settle("fail", error=raised, message=error_text(raised), retry_in=max(raised.seconds, 0.0))
    if isinstance(raised, NonRetryableError):
        return Settle("fail", error=raised, message=error_text(raised), retryable=False)
    return Settle("fail", error=raised, message=error_text(raised))


def fail_params(job: JobRecord, settle: Settle) -> Tuple[Any, ...]:
    err = settle.error if settle.error is not None else RuntimeError(settle.message or "failed")
    return (job.id, job.attempt, settle.message, settle.retry_in, settle.retryable, error_detail(err))


class JobLog:
    """The worker's structured log: each line carries ``extra`` fields (worker, job_id,
    queue, attempt, duration, outcome) for a JSON formatter or a log pipeline."""

    def __init__(self, logger: Optional[Union[logging.Logger, "logging.LoggerAdapter[Any]"]],
                 worker: str) -> None:
        self.logger: Any = logger if logger is not None else logging.getLogger("claimqueue")
        self.worker = worker

    def __call__(self, level: int, message: str, job: Optional[JobRecord] = None,
                 outcome: Optional[str] = None, duration: Optional[float] = None,
                 error: Optional[BaseException] = None) -> None:
        extra: Dict[str, Any] = {"worker": self.worker, "outcome": outcome}
        if job is not None:
            extra.update(job_id=job.id, queue=job.queue, attempt=job.attempt)
        if duration is not None:
            extra["duration"] = round(duration, 6)
        if error is not None:
            extra["error"] = error_text(error)
        try:
            self.logger.log(level, "claimqueue worker %s: %s", self.worker, message, extra=extra)
        except Exception:  # noqa: BLE001 - a logger must not break the worker
            pass
