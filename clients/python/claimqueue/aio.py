"""The asyncio worker: the blocking Worker's twin on psycopg's AsyncConnection.

One task claims with CALL dequeue_wait on one waiting connection, a task per
claimed job runs the handler (on one of ``concurrency`` connections), a task
heartbeats every running job, and stop() or SIGTERM drains without leaving a
claimed job behind. After the grace period a handler's task is cancelled.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Optional, Sequence

import psycopg

from . import _shared as shared
from ._shared import JobRecord, WorkerEvent
from .errors import ClaimQueueError, StaleClaimError, to_claimqueue_error

log = logging.getLogger("claimqueue")


class AsyncJob(JobRecord):
    """A claimed job as an async handler gets it: the record and what this attempt may do."""

    #: Set when this attempt no longer holds the job: it was lost (QC003) or handed back.
    aborted: asyncio.Event

    def __init__(self, owner: "_AsyncAttempt", **fields: Any) -> None:
        super().__init__(**fields)
        self.aborted = asyncio.Event()
        self._attempt = owner

    @contextlib.asynccontextmanager
    async def complete_in_transaction(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """Yields a connection inside a transaction that completes the job when the block ends.

        The rows written in the block commit together with the completion, or not at all.
        If the claim went stale the transaction rolls back and StaleClaimError is raised.
        """
        attempt = self._attempt
        if attempt.state != shared.RUNNING:
            raise StaleClaimError(f"job {self.id} attempt {self.attempt} is no longer held by this "
                                  f"worker ({attempt.state})", "QC003")
        conn = attempt.connection
        try:
            async with conn.transaction():
                yield conn
                await conn.execute(shared.COMPLETE, (self.id, self.attempt))
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                attempt.worker._mark_lost(attempt, mapped)
            if mapped is err:
                raise
            raise mapped from err
        attempt.worker._transition(attempt, shared.RUNNING, shared.COMPLETED)


class _AsyncAttempt:
    def __init__(self, worker: "AsyncWorker", fields: dict, beat_every: float) -> None:
        self.worker = worker
        self.state = shared.RUNNING
        self.job = AsyncJob(self, **fields)
        self.next_heartbeat = time.monotonic() + beat_every
        self.connection: Optional[psycopg.AsyncConnection] = None
        self.task: Optional[asyncio.Task] = None


AsyncHandler = Callable[[AsyncJob], Awaitable[Any]]


class AsyncWorker:
    """Runs ``await handler(job)`` for the jobs of ``queue``; ``await run()`` until stopped.

    The options are the blocking Worker's, and so is what becomes of the value the handler
    returns (stored as the job's result). stop() must be called from the event loop's
    thread (from another thread: ``loop.call_soon_threadsafe(worker.stop)``).
    """

    def __init__(self, conninfo: str, queue: str, handler: AsyncHandler, *, concurrency: int = 1,
                 lease: Any = None, name: Optional[str] = None, wait: Any = 30.0, grace: Any = 30.0,
                 stop_signals: Sequence[int] = (signal.SIGTERM, signal.SIGINT),
                 on_event: Optional[Callable[[WorkerEvent], None]] = None,
                 retry_delay: Any = 1.0, release_on_disconnect: bool = False) -> None:
        if not callable(handler):
            raise TypeError("handler must be callable")
        self.conninfo = conninfo
        self.queue = queue
        self.handler = handler
        self.concurrency = shared.check_concurrency(concurrency)
        self.name = name or shared.default_worker_name()
        self._lease_given = shared.seconds(lease, "lease", allow_none=True, minimum=0.001)
        self._lease = self._lease_given
        self._wait = shared.seconds(wait, "wait")
        self._grace = shared.seconds(grace, "grace")
        self._retry_delay = shared.seconds(retry_delay, "retry_delay")
        self._stop_signals = tuple(stop_signals)
        self._on_event = on_event
        self._release_on_disconnect = bool(release_on_disconnect)

        self._attempts: set = set()
        self._stop_requested = False
        self._stop_event: Optional[asyncio.Event] = None
        self._changed: Optional[asyncio.Condition] = None
        self._connections: Optional[asyncio.Queue] = None
        self._waiter: Optional[psycopg.AsyncConnection] = None
        self._wait_in_flight = False
        self._started = False

    @property
    def running(self) -> int:
        """Jobs whose handlers are running now."""
        return len(self._attempts)

    def stop(self) -> None:
        """Asks run() to stop: it stops claiming, gives running handlers the grace period,
        hands the rest back, cancels their tasks and returns."""
        self._stop_requested = True
        if self._stop_event is not None:
            self._stop_event.set()

    async def run(self) -> None:
        """Claims and runs jobs until stop() or a stop signal; returns when drained."""
        if self._started:
            raise RuntimeError("an AsyncWorker runs once")
        self._started = True
        loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        if self._stop_requested:
            self._stop_event.set()
        self._changed = asyncio.Condition()
        self._connections = asyncio.Queue()
        for _ in range(self.concurrency):
            self._connections.put_nowait(None)      # opened on first use
        installed = []
        for signum in self._stop_signals:
            try:
                loop.add_signal_handler(signum, self.stop)
                installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass                                 # not the main thread, or no signals here
        heartbeats = None
        try:
            self._lease = self._lease_given or await self._read_queue_lease()
            if self._lease is None:
                return
            heartbeats = asyncio.create_task(self._heartbeat_loop())
            claimer = asyncio.create_task(self._claim_loop())
            stop_requested = asyncio.create_task(self._stop_event.wait())
            await asyncio.wait({claimer, stop_requested}, return_when=asyncio.FIRST_COMPLETED)
            stop_requested.cancel()
            await self._drain(claimer)
        finally:
            if heartbeats is not None:
                heartbeats.cancel()
                await asyncio.gather(heartbeats, return_exceptions=True)
            await self._close_connections()
            for signum in installed:
                loop.remove_signal_handler(signum)
            log.info("claimqueue worker %s: stopped", self.name)
            self._emit(WorkerEvent("stopped"))

    # --- claiming -----------------------------------------------------------

    async def _read_queue_lease(self) -> Optional[float]:
        while not self._stop_requested:
            try:
                async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as conn:
                    row = await (await conn.execute(shared.QUEUE_LEASE, (self.queue,))).fetchone()
                if row is None:
                    raise ClaimQueueError(f'queue "{self.queue}" does not exist or this role holds '
                                          "no privilege on it", "QC001")
                return row[0]
            except Exception as err:  # noqa: BLE001 - reported, then retried
                self._report(err, f"reading the lease of queue {self.queue}")
                await self._pause(self._retry_delay)
        return None

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop_event.wait(), seconds)

    async def _claim_loop(self) -> None:
        while not self._stop_requested:
            async with self._changed:
                await self._changed.wait_for(
                    lambda: len(self._attempts) < self.concurrency or self._stop_requested)
            if self._stop_requested:
                break
            try:
                records = await self._claim(self.concurrency - len(self._attempts))
            except Exception as err:  # noqa: BLE001
                # Cancelled by stop(): the claim rolled back. _drain closes the connection.
                if self._stop_requested:
                    break
                self._report(err, "dequeue_wait")
                # Claims made with release_on_disconnect die with the waiting session, so a
                # connection that only saw a statement fail is kept for the running jobs.
                if not (self._release_on_disconnect and self._waiter is not None
                        and not self._waiter.closed and not self._waiter.broken):
                    await self._close_waiter()
                await self._pause(self._retry_delay)
                continue
            # A claim that committed is run even when stop() came meanwhile.
            if records:
                self._emit(WorkerEvent("claimed", jobs=[a.job for a in records]))
            for attempt in records:
                attempt.task = asyncio.create_task(self._run_attempt(attempt))

    async def _claim(self, batch: int) -> list:
        if self._waiter is None or self._waiter.closed:
            self._waiter = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
            # The session is the worker's alone: a role's statement_timeout must not
            # cut a wait short (`wait` bounds it).
            await self._waiter.execute("SET statement_timeout = 0")
        if self._stop_requested:
            return []
        self._wait_in_flight = True
        try:
            cursor = await self._waiter.execute(shared.CLAIM_RELEASING if self._release_on_disconnect else shared.CLAIM, (
                self.queue, self.name, batch, self._lease_given, self._wait))
            row = await cursor.fetchone()
        except psycopg.Error as err:
            raise to_claimqueue_error(err) from err
        finally:
            self._wait_in_flight = False
        attempts = [_AsyncAttempt(self, shared.record_from_json(self.queue, job), self._lease / 3)
                    for job in row[0] or []]
        self._attempts.update(attempts)
        return attempts

    async def _close_waiter(self) -> None:
        if self._waiter is not None:
            await self._waiter.close()
            self._waiter = None

    # --- running jobs -------------------------------------------------------

    async def _connection(self) -> psycopg.AsyncConnection:
        conn = await self._connections.get()
        try:
            if conn is None or conn.closed or conn.broken:
                conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
            return conn
        except BaseException:
            self._connections.put_nowait(None)
            raise

    async def _run_attempt(self, attempt: _AsyncAttempt) -> None:
        conn = None
        try:
            while conn is None and attempt.state == shared.RUNNING:
                try:
                    conn = await self._connection()
                except psycopg.Error as err:
                    # No connection, no completion: wait for one, or the drain hands it back.
                    self._report(err, "connecting a handler")
                    await asyncio.sleep(self._retry_delay)
            if conn is not None:
                attempt.connection = conn
                await self._run_handler(attempt, conn)
        finally:
            if conn is not None:
                if attempt.state == shared.HANDED_BACK:
                    await conn.close()              # its task may be cancelled mid-statement
                    conn = None
                self._connections.put_nowait(conn)  # the slot's connection, or None to reopen
            self._attempts.discard(attempt)
            async with self._changed:
                self._changed.notify_all()

    async def _run_handler(self, attempt: _AsyncAttempt, conn: psycopg.AsyncConnection) -> None:
        job = attempt.job
        started = time.monotonic()
        self._emit(WorkerEvent("started", job=job))
        raised: Optional[BaseException] = None
        result: Optional[str] = None
        try:
            value = await self.handler(job)
            # A job completed by complete_in_transaction() is done already: its value is not kept.
            if attempt.state == shared.RUNNING:
                result = shared.result_text(job, value)
        except Exception as err:  # noqa: BLE001 - the handler's failure is the job's
            raised = to_claimqueue_error(err)
        try:
            if raised is None and attempt.state == shared.RUNNING:
                try:
                    if result is None:
                        await conn.execute(shared.COMPLETE, (job.id, job.attempt))
                    else:
                        await conn.execute(shared.COMPLETE_WITH_RESULT, (job.id, job.attempt, result))
                    self._transition(attempt, shared.RUNNING, shared.COMPLETED)
                except psycopg.Error as err:
                    # A result the server refused fails the attempt, as one JSON cannot hold does.
                    raised = shared.refused_result(job, err) if result is not None else None
                    if raised is None:
                        raise
            if raised is None:
                if attempt.state == shared.COMPLETED:
                    self._emit(WorkerEvent("done", job=job, seconds=time.monotonic() - started))
            elif isinstance(raised, StaleClaimError):
                self._mark_lost(attempt, raised)
            elif attempt.state == shared.RUNNING:
                cursor = await conn.execute(shared.FAIL, (job.id, job.attempt, shared.error_text(raised)))
                outcome = (await cursor.fetchone())[0]
                self._transition(attempt, shared.RUNNING, shared.FAILED)
                log.warning("claimqueue worker %s: job %s attempt %s failed (%s): %s", self.name, job.id,
                            job.attempt, "will be retried" if outcome == "ready" else "no attempts left",
                            shared.error_text(raised))
                self._emit(WorkerEvent("failed", job=job, error=raised, outcome=outcome))
            elif attempt.state == shared.COMPLETED:
                self._report(raised, f"job {job.id}: the handler raised after its transaction "
                                     "completed the job")
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                self._mark_lost(attempt, mapped)
            else:
                self._report(mapped, f"job {job.id} attempt {job.attempt}")

    def _transition(self, attempt: _AsyncAttempt, before: str, after: str) -> bool:
        if attempt.state != before:
            return False
        attempt.state = after
        return True

    def _mark_lost(self, attempt: _AsyncAttempt, err: StaleClaimError) -> None:
        """QC003: this attempt lost the job. Logged and announced once, never as an error."""
        if not self._transition(attempt, shared.RUNNING, shared.LOST):
            return
        attempt.job.aborted.set()
        self._report_lost(attempt.job, err)

    def _report_lost(self, job: JobRecord, err: StaleClaimError) -> None:
        log.warning("claimqueue worker %s: job %s attempt %s was lost (stale claim: lease expired or "
                    "job cancelled); another attempt owns it", self.name, job.id, job.attempt)
        self._emit(WorkerEvent("lost", job=job, error=err))

    async def _heartbeat_loop(self) -> None:
        conn: Optional[psycopg.AsyncConnection] = None
        beat_every = self._lease / 3
        try:
            while True:
                now = time.monotonic()
                for attempt in [a for a in self._attempts if a.state == shared.RUNNING]:
                    if attempt.next_heartbeat > now or attempt.state != shared.RUNNING:
                        continue
                    attempt.next_heartbeat = now + beat_every
                    job = attempt.job
                    try:
                        if conn is None or conn.closed or conn.broken:
                            conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
                        cursor = await conn.execute(shared.HEARTBEAT, (job.id, job.attempt, self._lease))
                        expires = (await cursor.fetchone())[0]
                        self._emit(WorkerEvent("heartbeat", job=job, lease_expires_at=expires))
                    except psycopg.Error as err:
                        mapped = to_claimqueue_error(err)
                        if isinstance(mapped, StaleClaimError):
                            self._mark_lost(attempt, mapped)
                        else:
                            self._report(mapped, f"heartbeat of job {job.id}")
                due = [a.next_heartbeat for a in self._attempts if a.state == shared.RUNNING]
                pause = min(due, default=now + 0.5) - time.monotonic()
                await asyncio.sleep(min(max(pause, 0.01), 0.5))
        finally:
            if conn is not None:
                await conn.close()

    # --- stopping -----------------------------------------------------------

    async def _drain(self, claimer: asyncio.Task) -> None:
        log.info("claimqueue worker %s: stopping", self.name)
        self._emit(WorkerEvent("stopping"))
        self._stop_requested = True
        self._stop_event.set()
        async with self._changed:
            self._changed.notify_all()
        # Cancel the waiting CALL until the claim task has ended (see Worker._drain):
        # the server-side cancel, not task.cancel(), so a claim in flight rolls back.
        while not claimer.done():
            if self._wait_in_flight and self._waiter is not None:
                try:
                    await asyncio.to_thread(self._waiter.cancel)
                except psycopg.Error as err:
                    self._report(err, "cancelling the waiting dequeue")
            await asyncio.wait({claimer}, timeout=0.25)
        # With release_on_disconnect the running claims belong to the waiting session:
        # it stays open until run() ends, after the grace period and the hand-backs.
        if not self._release_on_disconnect:
            await self._close_waiter()

        tasks = [a.task for a in self._attempts if a.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self._grace)
        left = [a for a in self._attempts if a.state == shared.RUNNING]
        try:
            conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
        except psycopg.Error as err:
            # No way to hand them back: their leases run out and the reaper returns them.
            self._report(err, "connecting to hand jobs back")
            conn = None
        for attempt in left:
            if self._transition(attempt, shared.RUNNING, shared.HANDED_BACK):
                attempt.job.aborted.set()
                stale = await self._hand_back(conn, attempt.job) if conn is not None else None
                if stale is not None:          # the attempt had lost the job before the hand-back
                    self._report_lost(attempt.job, stale)
        if conn is not None:
            async with conn:
                # Jobs still running under this worker's name: claims no handler will finish.
                try:
                    cursor = await conn.execute(shared.CLAIMS_LEFT, (self.queue, self.name))
                    rows = await cursor.fetchall()
                    for row in rows:
                        # QC003 here: the job finished meanwhile; nothing to hand back.
                        await self._hand_back(conn, shared.record_from_row(self.queue, row))
                except psycopg.Error as err:
                    self._report(err, "looking for claims left behind")
        # The handed-back handlers are cancelled: their jobs belong to others now.
        stuck = [a.task for a in left if a.task is not None and not a.task.done()]
        for task in stuck:
            task.cancel()
        if stuck:
            await asyncio.wait(stuck, timeout=5)

    async def _hand_back(self, conn: psycopg.AsyncConnection,
                         job: JobRecord) -> Optional[StaleClaimError]:
        """fail(..., retry_in => 0); a stale claim (QC003) is returned, not reported."""
        try:
            await conn.execute(shared.HAND_BACK, (job.id, job.attempt))
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                return mapped
            self._report(err, f"handing job {job.id} back")
            return None
        log.info("claimqueue worker %s: handed job %s back (worker stopping)", self.name, job.id)
        self._emit(WorkerEvent("handed_back", job=job))
        return None

    async def _close_connections(self) -> None:
        await self._close_waiter()
        while self._connections is not None and not self._connections.empty():
            conn = self._connections.get_nowait()
            if conn is not None:
                await conn.close()

    # --- reporting ----------------------------------------------------------

    def _report(self, err: BaseException, context: str) -> None:
        log.error("claimqueue worker %s: %s: %s", self.name, context, shared.error_text(err))
        self._emit(WorkerEvent("error", error=err))

    def _emit(self, event: WorkerEvent) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:  # noqa: BLE001 - a hook must not break the worker
            log.exception("claimqueue worker %s: on_event raised", self.name)
