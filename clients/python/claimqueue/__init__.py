"""claimqueue for psycopg 3: enqueue on your own connection, and workers (blocking
and asyncio) that claim with dequeue_wait, heartbeat, complete or fail, and drain
on stop or SIGTERM."""
from ._shared import JobRecord, WorkerEvent
from .aio import AsyncJob, AsyncWorker
from .enqueue import enqueue, enqueue_async, enqueue_batch, enqueue_batch_async
from .errors import (ClaimQueueError, IsolationNotSupportedError, JobNotFoundError,
                     JobStateConflictError, LockKeyModeMismatchError, LockKeyNotFoundError,
                     LockNamespaceNotFoundError, QueueNotFoundError, SqlState, StaleClaimError,
                     is_stale_claim, to_claimqueue_error)
from .worker import Job, Worker

__all__ = [
    "enqueue", "enqueue_batch", "enqueue_async", "enqueue_batch_async",
    "Worker", "AsyncWorker", "Job", "AsyncJob", "JobRecord", "WorkerEvent",
    "SqlState", "ClaimQueueError", "QueueNotFoundError", "JobNotFoundError", "StaleClaimError",
    "JobStateConflictError", "IsolationNotSupportedError", "LockNamespaceNotFoundError",
    "LockKeyModeMismatchError", "LockKeyNotFoundError", "to_claimqueue_error", "is_stale_claim",
]
__version__ = "0.1.0"
