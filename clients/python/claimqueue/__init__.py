"""claimqueue for psycopg 3: enqueue on your own connection, read or await jobs'
results, and workers (blocking and asyncio) that claim with dequeue_wait, heartbeat,
complete (storing the handler's result) or fail, and drain on stop or SIGTERM."""
from ._shared import JobRecord, WorkerEvent
from .aio import AsyncJob, AsyncWorker
from .enqueue import enqueue, enqueue_async, enqueue_batch, enqueue_batch_async
from .errors import (ClaimQueueError, IsolationNotSupportedError, JobNotFoundError,
                     JobStateConflictError, LockKeyModeMismatchError, LockKeyNotFoundError,
                     LockNamespaceNotFoundError, QueueNotFoundError, SqlState, StaleClaimError,
                     is_stale_claim, to_claimqueue_error)
from .results import JobStatus, await_jobs, await_jobs_async, job_status, job_status_async
from .worker import Job, Worker

__all__ = [
    "enqueue", "enqueue_batch", "enqueue_async", "enqueue_batch_async",
    "job_status", "job_status_async", "await_jobs", "await_jobs_async", "JobStatus",
    "Worker", "AsyncWorker", "Job", "AsyncJob", "JobRecord", "WorkerEvent",
    "SqlState", "ClaimQueueError", "QueueNotFoundError", "JobNotFoundError", "StaleClaimError",
    "JobStateConflictError", "IsolationNotSupportedError", "LockNamespaceNotFoundError",
    "LockKeyModeMismatchError", "LockKeyNotFoundError", "to_claimqueue_error", "is_stale_claim",
]
__version__ = "0.1.0"
