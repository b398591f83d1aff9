"""claimqueue for psycopg 3: enqueue on your own connection, workers (blocking and asyncio)
that serve many queues over one pool, the admin API, job results and errors.

Every call is qualified with the extension's schema, read from pg_extension once per
connection, and this version supports the extension versions in
SUPPORTED_EXTENSION_VERSIONS (checked at connect, with a clear error)."""
from . import admin, admin_async
from ._ext import SUPPORTED_EXTENSION_VERSIONS, Extension, extension, extension_async
from ._shared import Duration, JobRecord, OnTimeout, WorkerEvent
from .aio import AsyncJob, AsyncMiddleware, AsyncWorker
from .enqueue import JobSpec, enqueue, enqueue_async, enqueue_batch, enqueue_batch_async
from .errors import (ClaimQueueError, ExtensionNotFoundError, IsolationNotSupportedError,
                     JobNotFoundError, JobStateConflictError, LockKeyModeMismatchError,
                     LockKeyNotFoundError, LockNamespaceNotFoundError, NonRetryableError,
                     QueueElsewhereError, QueueNotFoundError, RetryIn, ScheduleNotFoundError,
                     Snooze, SqlState, StaleClaimError,
                     UnsupportedVersionError, is_stale_claim, to_claimqueue_error)
from .results import (JobError, JobStatus, await_jobs, await_jobs_async, job_errors,
                      job_errors_async, job_status, job_status_async)
from .worker import DrainResult, Job, Middleware, Worker

__all__ = [
    "admin", "admin_async", "SUPPORTED_EXTENSION_VERSIONS", "Extension", "extension", "extension_async",
    "enqueue", "enqueue_batch", "enqueue_async", "enqueue_batch_async", "JobSpec",
    "job_status", "job_status_async", "await_jobs", "await_jobs_async", "JobStatus",
    "job_errors", "job_errors_async", "JobError",
    "Worker", "AsyncWorker", "Job", "AsyncJob", "JobRecord", "WorkerEvent", "DrainResult",
    "Middleware", "AsyncMiddleware", "Duration", "OnTimeout",
    "Snooze", "RetryIn", "NonRetryableError",
    "SqlState", "ClaimQueueError", "ExtensionNotFoundError", "UnsupportedVersionError",
    "QueueNotFoundError", "JobNotFoundError", "StaleClaimError", "ScheduleNotFoundError",
    "QueueElsewhereError",
    "JobStateConflictError", "IsolationNotSupportedError", "LockNamespaceNotFoundError",
    "LockKeyModeMismatchError", "LockKeyNotFoundError", "to_claimqueue_error", "is_stale_claim",
]
__version__ = "1.0.0"
