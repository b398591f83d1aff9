"""claimqueue's SQLSTATEs (class QC, see src/errors.h in the extension) as exception classes,
and the exceptions a handler raises to say what becomes of its job."""
from __future__ import annotations

from typing import Any, Optional


class SqlState:
    """The SQLSTATEs claimqueue raises itself, by name."""

    QUEUE_NOT_FOUND = "QC001"
    JOB_NOT_FOUND = "QC002"
    STALE_CLAIM = "QC003"
    JOB_STATE_CONFLICT = "QC004"
    ISOLATION_NOT_SUPPORTED = "QC005"
    SCHEDULE_NOT_FOUND = "QC006"
    QUEUE_ELSEWHERE = "QC007"
    LOCK_NAMESPACE_NOT_FOUND = "QCL01"
    LOCK_KEY_MODE_MISMATCH = "QCL02"
    LOCK_KEY_NOT_FOUND = "QCL03"


class ClaimQueueError(Exception):
    """An error raised by claimqueue (SQLSTATE class QC); ``__cause__`` is psycopg's error."""

    def __init__(self, message: str, sqlstate: Optional[str], detail: Optional[str] = None,
                 hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint


class ExtensionNotFoundError(ClaimQueueError):
    """The database has no claimqueue extension (``CREATE EXTENSION claimqueue``); no SQLSTATE."""


class UnsupportedVersionError(ClaimQueueError):
    """The database's claimqueue extension is at a version this client does not support
    (see ``claimqueue.SUPPORTED_EXTENSION_VERSIONS``); no SQLSTATE."""


class QueueNotFoundError(ClaimQueueError):
    """QC001: the named queue does not exist."""


class JobNotFoundError(ClaimQueueError):
    """QC002: no job has that id."""


class StaleClaimError(ClaimQueueError):
    """QC003: the job is no longer running under that attempt.

    Its lease expired and it was handed to another worker, it was cancelled, or it was
    handed back. Not a failure of the job: this attempt lost it, and whatever it wrote in
    the completing transaction was rolled back.
    """


class JobStateConflictError(ClaimQueueError):
    """QC004: retry of a job that is not failed or cancelled, cancel of a finished job."""


class IsolationNotSupportedError(ClaimQueueError):
    """QC005: a claim, reap, purge or drop_queue under REPEATABLE READ or SERIALIZABLE."""


class ScheduleNotFoundError(ClaimQueueError):
    """QC006: unschedule, pause_schedule or resume_schedule of a schedule that does not exist."""


class QueueElsewhereError(ClaimQueueError):
    """QC007: under Citus, a call made on a worker for a queue (or a job) whose shard another
    node holds. Call through the coordinator or on the node that holds it."""


class LockNamespaceNotFoundError(ClaimQueueError):
    """QCL01: a lock namespace that is not registered."""


class LockKeyModeMismatchError(ClaimQueueError):
    """QCL02: a text key in an integer namespace or the reverse."""


class LockKeyNotFoundError(ClaimQueueError):
    """QCL03: a key not registered in a registered namespace."""


_CLASS_BY_SQLSTATE = {
    SqlState.QUEUE_NOT_FOUND: QueueNotFoundError,
    SqlState.JOB_NOT_FOUND: JobNotFoundError,
    SqlState.STALE_CLAIM: StaleClaimError,
    SqlState.JOB_STATE_CONFLICT: JobStateConflictError,
    SqlState.ISOLATION_NOT_SUPPORTED: IsolationNotSupportedError,
    SqlState.SCHEDULE_NOT_FOUND: ScheduleNotFoundError,
    SqlState.QUEUE_ELSEWHERE: QueueElsewhereError,
    SqlState.LOCK_NAMESPACE_NOT_FOUND: LockNamespaceNotFoundError,
    SqlState.LOCK_KEY_MODE_MISMATCH: LockKeyModeMismatchError,
    SqlState.LOCK_KEY_NOT_FOUND: LockKeyNotFoundError,
}


def to_claimqueue_error(err: BaseException) -> BaseException:
    """The claimqueue exception for a psycopg error with a QC SQLSTATE; anything else as it is.

    The original error becomes the new one's ``__cause__``.
    """
    if isinstance(err, ClaimQueueError):
        return err
    sqlstate = getattr(err, "sqlstate", None)
    if not isinstance(sqlstate, str) or not sqlstate.startswith("QC"):
        return err
    diag = getattr(err, "diag", None)
    message = (getattr(diag, "message_primary", None) or str(err)).strip()
    error_class = _CLASS_BY_SQLSTATE.get(sqlstate, ClaimQueueError)
    mapped = error_class(message, sqlstate,
                         getattr(diag, "message_detail", None), getattr(diag, "message_hint", None))
    mapped.__cause__ = err
    return mapped


def is_stale_claim(err: BaseException) -> bool:
    """True for a stale claim (QC003), mapped or still psycopg's error."""
    return getattr(err, "sqlstate", None) == SqlState.STALE_CLAIM


# --- what a handler raises --------------------------------------------------


class Snooze(Exception):
    """Raised by a handler: the job goes back to ready in ``seconds`` without spending an
    attempt (``snooze(id, attempt, delay)``). ``job.snooze(seconds)`` raises it."""

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(f"snoozed for {seconds} s")
        self.seconds = float(seconds)


class RetryIn(Exception):
    """Raised by a handler: this attempt failed; the job is retried in ``seconds`` instead of
    after the queue's backoff (``fail(..., retry_in => ...)``), if it has attempts left."""

    def __init__(self, seconds: float, message: str = "", detail: Any = None) -> None:
        super().__init__(message or f"retry in {seconds} s")
        self.seconds = float(seconds)
        self.detail = detail


class NonRetryableError(Exception):
    """Raised by a handler (or subclassed): the job fails at once, whatever attempts it has left
    (``fail(..., retryable => false)``)."""
