"""The asyncio worker: the blocking Worker's twin on psycopg's AsyncConnection and
psycopg_pool's AsyncConnectionPool.

A task per queue claims with CALL dequeue_wait on a connection it holds, a task per claimed
job runs its handler, a supervisor task heartbeats every running job and enforces the
queues' timeouts (cancelling the handler's task at the timeout), and stop() or SIGTERM
drains without leaving a claimed job behind. After the grace period a handler's task is
cancelled.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from typing import (Any, AsyncIterator, Awaitable, Callable, Dict, Generic, List, NoReturn,
                    Optional, Sequence, Set, TypeVar, Union)

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from . import _ext
from . import _shared as shared
from ._ext import Extension
from ._pool import AsyncConnections
from ._shared import Duration, JobRecord, OnTimeout, QueueConfig, Settle, WorkerEvent
from .errors import Snooze, StaleClaimError, to_claimqueue_error
from .worker import DrainResult

P = TypeVar("P")


class AsyncJob(JobRecord, Generic[P]):
    """A claimed job as an async handler gets it: the record and what this attempt may do."""

    payload: P
    #: Set when this attempt should stop: timeout, lost (QC003) or stopping (abort_reason).
    #: At a timeout the handler's task is also cancelled (asyncio.CancelledError).
    aborted: asyncio.Event
    abort_reason: Optional[str]

    def __init__(self, owner: "_AsyncAttempt", **fields: Any) -> None:
        super().__init__(**fields)
        self.aborted = asyncio.Event()
        self.abort_reason = None
        self._attempt = owner

    def snooze(self, seconds: Duration = 0.0) -> NoReturn:
        """Ends the handler: the job is ready again in ``seconds`` without spending an attempt."""
        raise Snooze(shared.seconds(seconds, "seconds") or 0.0)

    @contextlib.asynccontextmanager
    async def complete_in_transaction(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """Yields a connection inside a transaction that completes the job when the block ends.

        The rows written in the block commit together with the completion, or not at all.
        If the claim went stale the transaction rolls back and StaleClaimError is raised.
        """
        attempt = self._attempt
        if attempt.state != shared.RUNNING:
            raise StaleClaimError(f"job {self.id} attempt {self.attempt} is no longer held by this "
                                  f"worker ({attempt.state})", "QC003")
        worker = attempt.worker
        async with worker._connections.connection() as conn:
            try:
                async with conn.transaction():
                    yield conn
                    await conn.execute(worker._sql(shared.COMPLETE), (self.id, self.attempt))
            except psycopg.Error as err:
                mapped = to_claimqueue_error(err)
                if isinstance(mapped, StaleClaimError):
                    worker._mark_lost(attempt, mapped)
                if mapped is err:
                    raise
                raise mapped from err
        attempt.state = shared.COMPLETED
        attempt.completed_in_transaction = True


class _AsyncAttempt:
    def __init__(self, worker: "AsyncWorker", config: QueueConfig[Any], fields: Dict[str, Any],
                 lease: float) -> None:
        self.worker = worker
        self.config = config
        self.state = shared.RUNNING
        self.job: AsyncJob[Any] = AsyncJob(self, **fields)
        self.started = time.monotonic()
        self.beat_every = lease / 3
        self.next_heartbeat = self.started + self.beat_every
        self.deadline = None if config.timeout is None else self.started + config.timeout
        self.timed_out = False
        self.completed_in_transaction = False
        self.task: Optional["asyncio.Task[Any]"] = None          # _run_attempt
        self.handler_task: Optional["asyncio.Task[Any]"] = None  # the handler itself


AsyncHandler = Callable[[AsyncJob[Any]], Awaitable[Any]]
#: Async middleware: ``await middleware(job, call_next)`` around the handler.
AsyncMiddleware = Callable[[AsyncJob[Any], Callable[[AsyncJob[Any]], Awaitable[Any]]], Awaitable[Any]]


class _AsyncQueue:
    def __init__(self, config: QueueConfig[Any], call: Callable[[AsyncJob[Any]], Awaitable[Any]]) -> None:
        self.config = config
        self.call = call
        self.lease = 30.0
        self.running: Set[_AsyncAttempt] = set()
        self.waiter: Optional[psycopg.AsyncConnection[Any]] = None
        self.wait_in_flight = False
        self.idle_mark = -1


class AsyncWorker:
    """Runs ``await handler(job)`` for the jobs of one or more queues; ``await run()`` until
    stopped.

    The options are the blocking Worker's (db: a conninfo or the application's
    ``psycopg_pool.AsyncConnectionPool``), and so is what becomes of what the handler returns
    or raises. At a job's ``timeout`` its handler's task is cancelled and ``job.aborted`` set;
    a handler that swallows the cancellation and has not returned ``timeout_grace`` later is
    given up as the Worker's is (its task runs on; the slot is freed). stop() must be called
    from the event loop's thread (from another: ``loop.call_soon_threadsafe(worker.stop)``).
    """

    def __init__(self, db: Union[str, AsyncConnectionPool], queue: Optional[str] = None,
                 handler: Optional[Callable[[AsyncJob[Any]], Awaitable[Any]]] = None, *,
                 concurrency: int = 1, lease: Optional[Duration] = None,
                 timeout: Optional[Duration] = None, timeout_grace: Duration = 5.0,
                 on_timeout: OnTimeout = "retry", payload: Optional[Callable[[Any], Any]] = None,
                 name: Optional[str] = None, wait: Duration = 30.0, grace: Duration = 30.0,
                 stop_signals: Sequence[int] = (signal.SIGTERM, signal.SIGINT),
                 on_event: Optional[Callable[[WorkerEvent], None]] = None,
                 logger: Optional[Union[logging.Logger, logging.LoggerAdapter]] = None,  # type: ignore[type-arg]
                 middleware: Sequence[AsyncMiddleware] = (),
                 retry_delay: Duration = 1.0, release_on_disconnect: bool = False) -> None:
        if not isinstance(db, (str, AsyncConnectionPool)):
            raise TypeError("db must be a conninfo string or a psycopg_pool.AsyncConnectionPool")
        self._db = db
        self.name = name or shared.default_worker_name()
        self._wait = shared.seconds(wait, "wait") or 0.0
        self._grace = shared.seconds(grace, "grace") or 0.0
        self._retry_delay = shared.seconds(retry_delay, "retry_delay") or 0.0
        self._stop_signals = tuple(stop_signals)
        self._on_event = on_event
        self._log = shared.JobLog(logger, self.name)
        self._middleware = tuple(middleware)
        for m in self._middleware:
            if not callable(m):
                raise TypeError("each middleware must be callable")
        self._release_on_disconnect = bool(release_on_disconnect)
        self._queues: Dict[str, _AsyncQueue] = {}
        self._started = False
        if queue is not None or handler is not None:
            self.add_queue(queue, handler, concurrency=concurrency, lease=lease,  # type: ignore[arg-type]
                           timeout=timeout, timeout_grace=timeout_grace, on_timeout=on_timeout,
                           payload=payload)
        self._settled = 0
        self._abandoned: Set[_AsyncAttempt] = set()
        self._stop_requested = False
        self._stop_event: Optional[asyncio.Event] = None
        self._changed: Optional[asyncio.Condition] = None
        self._draining: Optional[DrainResult] = None
        self._connections: AsyncConnections
        self._ext: Optional[Extension] = None

    def add_queue(self, queue: str, handler: Callable[[AsyncJob[P]], Awaitable[Any]], *,
                  concurrency: int = 1, lease: Optional[Duration] = None,
                  timeout: Optional[Duration] = None, timeout_grace: Duration = 5.0,
                  on_timeout: OnTimeout = "retry",
                  payload: Optional[Callable[[Any], P]] = None) -> "AsyncWorker":
        """Serves one more queue with its own handler and options."""
        if self._started:
            raise RuntimeError("add queues before run()")
        config = shared.make_queue(queue, handler, concurrency, lease, timeout, timeout_grace,
                                   on_timeout, payload)
        if config.name in self._queues:
            raise ValueError(f'queue "{config.name}" is served twice')
        call: Callable[[AsyncJob[Any]], Awaitable[Any]] = config.handler
        for m in reversed(self._middleware):
            call = (lambda m, after: lambda job: m(job, after))(m, call)
        self._queues[config.name] = _AsyncQueue(config, call)
        return self

    def handles(self, queue: str, *, concurrency: int = 1, lease: Optional[Duration] = None,
                timeout: Optional[Duration] = None, timeout_grace: Duration = 5.0,
                on_timeout: OnTimeout = "retry", payload: Optional[Callable[[Any], P]] = None,
                ) -> Callable[[Callable[[AsyncJob[P]], Awaitable[Any]]],
                              Callable[[AsyncJob[P]], Awaitable[Any]]]:
        """A decorator: ``@worker.handles("emails", concurrency=4)`` above an async handler."""
        def register(handler: Callable[[AsyncJob[P]], Awaitable[Any]]) -> Callable[[AsyncJob[P]], Awaitable[Any]]:
            self.add_queue(queue, handler, concurrency=concurrency, lease=lease, timeout=timeout,
                           timeout_grace=timeout_grace, on_timeout=on_timeout, payload=payload)
            return handler
        return register

    @property
    def queues(self) -> List[str]:
        return list(self._queues)

    @property
    def concurrency(self) -> int:
        return sum(q.config.concurrency for q in self._queues.values())

    @property
    def running(self) -> int:
        """Jobs whose handlers are running now."""
        return sum(len(q.running) for q in self._queues.values())

    def stop(self) -> None:
        """Asks run() to stop: it stops claiming, gives running handlers the grace period,
        hands the rest back, cancels their tasks and returns."""
        self._stop_requested = True
        if self._stop_event is not None:
            self._stop_event.set()

    async def run(self) -> None:
        """Claims and runs jobs until stop() or a stop signal; returns when drained. Raises at
        once for a missing extension, an unsupported version or a queue the server refuses."""
        await self._run(drain=False)

    async def drain(self, timeout: Duration = 60.0) -> DrainResult:
        """For tests: Worker.drain() in asyncio."""
        limit = shared.seconds(timeout, "timeout") or 0.0
        self._draining = DrainResult()
        loop = asyncio.get_running_loop()
        timer = loop.call_later(limit, self.stop)
        try:
            await self._run(drain=True)
        finally:
            timer.cancel()
        return self._draining

    async def _run(self, drain: bool) -> None:
        if self._started:
            raise RuntimeError("an AsyncWorker runs once")
        if not self._queues:
            raise ValueError("the worker serves no queue: pass queue and handler, or add_queue()")
        self._started = True
        loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        if self._stop_requested:
            self._stop_event.set()
        self._changed = asyncio.Condition()
        self._connections = AsyncConnections(self._db, len(self._queues) + self.concurrency + 1)
        await self._connections.open(len(self._queues))
        installed = []
        if not drain:
            for signum in self._stop_signals:
                try:
                    loop.add_signal_handler(signum, self.stop)
                    installed.append(signum)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass                             # not the main thread, or no signals here
        supervisor = None
        try:
            await self._prepare()
            supervisor = asyncio.create_task(self._supervise())
            claimers = [asyncio.create_task(self._claim_loop(q, drain)) for q in self._queues.values()]
            stop_requested = asyncio.create_task(self._stop_event.wait())
            pending: Set["asyncio.Task[Any]"] = {*claimers, stop_requested}
            while not self._stop_requested and not all(c.done() for c in claimers):
                _, pending = await asyncio.wait(pending, timeout=0.05 if drain else None,
                                                return_when=asyncio.FIRST_COMPLETED)
                if drain and self._drained():
                    break
            stop_requested.cancel()
            await self._drain(claimers)
            self._log(logging.INFO, "stopped", outcome="stopped")
            self._emit(WorkerEvent("stopped"))
        finally:
            if supervisor is not None:
                supervisor.cancel()
                await asyncio.gather(supervisor, return_exceptions=True)
            for signum in installed:
                loop.remove_signal_handler(signum)
            await self._connections.close()

    async def _prepare(self) -> None:
        while True:
            try:
                async with self._connections.connection() as conn:
                    self._ext = await _ext.extension_async(conn)
                    for q in self._queues.values():
                        try:
                            await conn.execute(self._sql(shared.QUEUE_CHECK), (q.config.name,))
                            cursor = await conn.execute(self._sql(shared.QUEUE_LEASE), (q.config.name,))
                            row = await cursor.fetchone()
                        except psycopg.Error as err:
                            raise to_claimqueue_error(err) from err
                        q.lease = q.config.lease or (row[0] if row else 30.0)
                return
            except (psycopg.OperationalError, PoolTimeout) as err:
                if self._stop_requested:
                    raise
                self._report(err, "connecting")
                await self._pause(self._retry_delay)

    def _sql(self, template: str) -> Any:
        assert self._ext is not None
        return self._ext.sql(template)

    def _drained(self) -> bool:
        return all(not q.running and q.idle_mark == self._settled for q in self._queues.values())

    async def _pause(self, seconds: float) -> None:
        assert self._stop_event is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop_event.wait(), seconds)

    # --- claiming -----------------------------------------------------------

    async def _claim_loop(self, q: _AsyncQueue, drain: bool) -> None:
        assert self._changed is not None
        while not self._stop_requested:
            async with self._changed:
                await self._changed.wait_for(
                    lambda: len(q.running) < q.config.concurrency or self._stop_requested)
            if self._stop_requested:
                break
            mark = self._settled
            idle_before = not q.running
            if drain and q.idle_mark == mark and idle_before:
                await self._pause(0.05)
                continue
            try:
                attempts = await self._claim(q, q.config.concurrency - len(q.running),
                                             0.0 if drain else self._wait)
            except Exception as err:  # noqa: BLE001
                # Cancelled by stop(): the claim rolled back. _drain gives the connection back.
                if self._stop_requested:
                    break
                self._report(err, f"dequeue_wait on queue {q.config.name}")
                if not (self._release_on_disconnect and q.waiter is not None
                        and not q.waiter.closed and not q.waiter.broken):
                    await self._release_waiter(q)
                await self._pause(self._retry_delay)
                continue
            if drain and not attempts and idle_before and mark == self._settled:
                q.idle_mark = mark
            # A claim that committed is run even when stop() came meanwhile.
            if attempts:
                self._emit(WorkerEvent("claimed", jobs=[a.job for a in attempts]))
            for attempt in attempts:
                attempt.task = asyncio.create_task(self._run_attempt(q, attempt))

    async def _claim(self, q: _AsyncQueue, batch: int, wait: float) -> List[_AsyncAttempt]:
        if q.waiter is None or q.waiter.closed:
            q.waiter = await self._connections.hold()
        if self._stop_requested:
            return []
        q.wait_in_flight = True
        try:
            cursor = await q.waiter.execute(self._sql(shared.CLAIM_RELEASING if self._release_on_disconnect
                                                      else shared.CLAIM),
                                            (q.config.name, self.name, batch, q.config.lease, wait))
            row = await cursor.fetchone()
        except psycopg.Error as err:
            raise to_claimqueue_error(err) from err
        finally:
            q.wait_in_flight = False
        attempts = [_AsyncAttempt(self, q.config, shared.record_from_json(q.config.name, job), q.lease)
                    for job in (row[0] if row else None) or []]
        q.running.update(attempts)
        return attempts

    async def _release_waiter(self, q: _AsyncQueue) -> None:
        if q.waiter is not None:
            waiter, q.waiter = q.waiter, None
            try:
                await self._connections.release(waiter)
            except Exception as err:  # noqa: BLE001
                self._report(err, "giving the waiting connection back")

    # --- running jobs -------------------------------------------------------

    async def _call(self, q: _AsyncQueue, job: AsyncJob[Any]) -> Any:
        job.payload = shared.convert_payload(q.config, job.payload)
        return await q.call(job)

    async def _run_attempt(self, q: _AsyncQueue, attempt: _AsyncAttempt) -> None:
        job = attempt.job
        try:
            self._log(logging.DEBUG, f"job {job.id} started", job=job, outcome="started")
            self._emit(WorkerEvent("started", job=job))
            attempt.handler_task = asyncio.create_task(self._call(q, job))
            raised: Optional[BaseException] = None
            value: Any = None
            try:
                # The handler runs in a task of its own: a timeout cancels that task, not this one.
                value = await asyncio.shield(attempt.handler_task)
            except asyncio.CancelledError:
                if not attempt.handler_task.cancelled():
                    raise                       # this task itself was cancelled (stop)
                raised = asyncio.CancelledError("the handler's task was cancelled")
            except Exception as err:  # noqa: BLE001 - the handler's failure is the job's
                raised = to_claimqueue_error(err)
            mine = attempt.state == shared.RUNNING
            if mine:
                attempt.state = shared.SETTLING
            if attempt.completed_in_transaction:
                if raised is not None:
                    self._report(raised, f"job {job.id}: the handler raised after its transaction "
                                         "completed the job")
                self._finished(attempt, "done", shared.COMPLETED)
                return
            if not mine:
                if attempt.state == shared.TIMED_OUT:
                    self._log(logging.WARNING, f"job {job.id}: its handler returned after the worker "
                              "had given the job up (timed out); what it returned is ignored",
                              job=job, outcome="abandoned_returned")
                elif isinstance(raised, StaleClaimError):
                    self._mark_lost(attempt, raised)
                return
            await self._settle(attempt, shared.settle_for(job, q.config, raised, value, attempt.timed_out))
        finally:
            await self._free(q, attempt)

    async def _settle(self, attempt: _AsyncAttempt, settle: Settle, timed_out: bool = False) -> None:
        job = attempt.job
        try:
            async with self._connections.connection() as conn:
                if settle.kind == "complete":
                    try:
                        if settle.result is None:
                            await conn.execute(self._sql(shared.COMPLETE), (job.id, job.attempt))
                        else:
                            await conn.execute(self._sql(shared.COMPLETE_WITH_RESULT),
                                               (job.id, job.attempt, settle.result))
                    except psycopg.Error as err:
                        refused = shared.refused_result(job, err) if settle.result is not None else None
                        if refused is None:
                            raise
                        settle = Settle("fail", error=refused, message=shared.error_text(refused))
                    else:
                        self._finished(attempt, "done", shared.COMPLETED)
                        return
                if settle.kind == "lost":
                    assert isinstance(settle.error, StaleClaimError)
                    self._mark_lost(attempt, settle.error)
                    return
                if settle.kind == "snooze":
                    await conn.execute(self._sql(shared.SNOOZE), (job.id, job.attempt, settle.delay))
                    if timed_out or attempt.timed_out:
                        self._finished(attempt, "timed_out", shared.TIMED_OUT, outcome="handed_back",
                                       error=settle.error)
                    else:
                        self._finished(attempt, "snoozed", shared.SNOOZED, seconds=settle.delay)
                    return
                cursor = await conn.execute(self._sql(shared.FAIL), shared.fail_params(job, settle))
                row = await cursor.fetchone()
                outcome = row[0] if row else None
                if timed_out or attempt.timed_out:
                    self._finished(attempt, "timed_out", shared.TIMED_OUT, outcome=outcome, error=settle.error)
                else:
                    self._finished(attempt, "failed", shared.FAILED, outcome=outcome, error=settle.error)
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                self._mark_lost(attempt, mapped)
            else:
                self._report(mapped, f"job {job.id} attempt {job.attempt}")

    def _finished(self, attempt: _AsyncAttempt, kind: str, state: str, outcome: Optional[str] = None,
                  error: Optional[BaseException] = None, seconds: Optional[float] = None) -> None:
        job = attempt.job
        duration = time.monotonic() - attempt.started
        attempt.state = state
        if kind == "done":
            self._log(logging.INFO, f"job {job.id} done", job=job, outcome="done", duration=duration)
            self._emit(WorkerEvent("done", job=job, seconds=duration))
            self._count("done")
        elif kind == "snoozed":
            self._log(logging.INFO, f"job {job.id} snoozed for {seconds:g} s", job=job,
                      outcome="snoozed", duration=duration)
            self._emit(WorkerEvent("snoozed", job=job, seconds=seconds))
            self._count("snoozed")
        elif kind == "timed_out":
            self._log(logging.WARNING, f"job {job.id} attempt {job.attempt} timed out ({outcome})",
                      job=job, outcome=f"timed_out:{outcome}", duration=duration, error=error)
            self._emit(WorkerEvent("timed_out", job=job, outcome=outcome, error=error, seconds=duration))
            self._count("timed_out")
        else:
            self._log(logging.WARNING, f"job {job.id} attempt {job.attempt} failed "
                      f"({'will be retried' if outcome == 'ready' else 'no attempts left'}): "
                      f"{shared.error_text(error) if error else ''}", job=job,
                      outcome=f"failed:{outcome}", duration=duration, error=error)
            self._emit(WorkerEvent("failed", job=job, error=error, outcome=outcome, seconds=duration))
            self._count("retried" if outcome == "ready" else "failed")

    def _count(self, what: str) -> None:
        if self._draining is not None:
            setattr(self._draining, what, getattr(self._draining, what) + 1)

    async def _free(self, q: _AsyncQueue, attempt: _AsyncAttempt) -> None:
        assert self._changed is not None
        if attempt in q.running:
            q.running.discard(attempt)
            self._settled += 1
        async with self._changed:
            self._changed.notify_all()

    def _mark_lost(self, attempt: _AsyncAttempt, err: StaleClaimError) -> None:
        """QC003: this attempt lost the job. Logged and announced once, never as an error."""
        if attempt.state not in (shared.RUNNING, shared.SETTLING, shared.TIMED_OUT):
            return
        attempt.state = shared.LOST
        attempt.job.abort_reason = attempt.job.abort_reason or "lost"
        attempt.job.aborted.set()
        self._report_lost(attempt.job, err)
        self._count("lost")

    def _report_lost(self, job: JobRecord, err: StaleClaimError) -> None:
        self._log(logging.WARNING, f"job {job.id} attempt {job.attempt} was lost (stale claim: lease "
                  "expired or job cancelled); another attempt owns it", job=job, outcome="lost")
        self._emit(WorkerEvent("lost", job=job, error=err))

    # --- the supervisor: heartbeats and timeouts ----------------------------

    async def _supervise(self) -> None:
        while True:
            now = time.monotonic()
            running = [(q, a) for q in self._queues.values() for a in list(q.running)
                       if a.state == shared.RUNNING]
            for q, attempt in running:
                await self._check_timeout(q, attempt, now)
                if attempt.next_heartbeat <= now and attempt.state == shared.RUNNING:
                    await self._heartbeat(q, attempt, now)
            due = [min(a.next_heartbeat, a.deadline or a.next_heartbeat)
                   for q in self._queues.values() for a in q.running if a.state == shared.RUNNING]
            pause = min(due, default=now + 0.5) - time.monotonic()
            await asyncio.sleep(min(max(pause, 0.01), 0.5))

    async def _check_timeout(self, q: _AsyncQueue, attempt: _AsyncAttempt, now: float) -> None:
        config = q.config
        if attempt.deadline is None or now < attempt.deadline:
            return
        job = attempt.job
        if not attempt.timed_out:
            attempt.timed_out = True
            job.abort_reason = "timeout"
            job.aborted.set()
            if attempt.handler_task is not None:
                attempt.handler_task.cancel()
            self._log(logging.WARNING, f"job {job.id} attempt {job.attempt} passed its timeout of "
                      f"{config.timeout:g} s; its task is cancelled and has {config.timeout_grace:g} s "
                      "to end", job=job, outcome="timeout")
            attempt.deadline = attempt.deadline + config.timeout_grace
            return
        if attempt.state != shared.RUNNING:
            return
        attempt.state = shared.TIMED_OUT
        await self._settle(attempt, shared.timeout_settle(config, None), timed_out=True)
        self._log(logging.WARNING, f"job {job.id}: its handler did not end within the grace; the "
                  "slot is freed and the task left to run on", job=job, outcome="abandoned")
        self._abandoned.add(attempt)
        await self._free(q, attempt)

    async def _heartbeat(self, q: _AsyncQueue, attempt: _AsyncAttempt, now: float) -> None:
        attempt.next_heartbeat = now + attempt.beat_every
        job = attempt.job
        try:
            async with self._connections.connection(timeout=attempt.beat_every) as conn:
                cursor = await conn.execute(self._sql(shared.HEARTBEAT), (job.id, job.attempt, q.lease))
                row = await cursor.fetchone()
            self._emit(WorkerEvent("heartbeat", job=job, lease_expires_at=row[0] if row else None))
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                self._mark_lost(attempt, mapped)
            else:
                self._report(mapped, f"heartbeat of job {job.id}")
        except Exception as err:  # noqa: BLE001 - a pool timeout: the next beat tries again
            self._report(err, f"heartbeat of job {job.id}")

    # --- stopping -----------------------------------------------------------

    async def _drain(self, claimers: List["asyncio.Task[None]"]) -> None:
        assert self._stop_event is not None and self._changed is not None
        self._log(logging.INFO, "stopping", outcome="stopping")
        self._emit(WorkerEvent("stopping"))
        self._stop_requested = True
        self._stop_event.set()
        async with self._changed:
            self._changed.notify_all()
        # Cancel the waiting CALLs until the claim tasks have ended (see Worker._drain): the
        # server-side cancel, not task.cancel(), so a claim in flight rolls back.
        while not all(c.done() for c in claimers):
            for q in self._queues.values():
                if q.wait_in_flight and q.waiter is not None:
                    try:
                        await asyncio.to_thread(q.waiter.cancel)
                    except psycopg.Error as err:
                        self._report(err, "cancelling the waiting dequeue")
            await asyncio.wait(claimers, timeout=0.25)
        if not self._release_on_disconnect:
            for q in self._queues.values():
                await self._release_waiter(q)

        tasks = [a.task for q in self._queues.values() for a in q.running if a.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self._grace)
        left = [a for q in self._queues.values() for a in q.running if a.state == shared.RUNNING]
        for attempt in left:
            attempt.state = shared.HANDED_BACK
            attempt.job.abort_reason = "stopping"
            attempt.job.aborted.set()
        try:
            async with self._connections.connection(timeout=10) as conn:
                for attempt in left:
                    stale = await self._hand_back(conn, attempt.job)
                    if stale is not None:      # the attempt had lost the job before the hand-back
                        self._report_lost(attempt.job, stale)
                # Jobs still running under this worker's name: claims no handler will finish.
                for q in self._queues.values():
                    try:
                        cursor = await conn.execute(self._sql(shared.CLAIMS_LEFT), (q.config.name, self.name))
                        rows = await cursor.fetchall()
                    except psycopg.Error as err:
                        self._report(err, "looking for claims left behind")
                        continue
                    for row in rows:
                        # QC003 here: the job finished meanwhile; nothing to hand back.
                        await self._hand_back(conn, shared.record_from_row(q.config.name, row))
        except Exception as err:  # noqa: BLE001
            self._report(err, "connecting to hand jobs back")
        finally:
            for q in self._queues.values():
                await self._release_waiter(q)
        # The handed-back handlers, and those given up after a timeout, are cancelled: their
        # jobs belong to others now. (A task that swallows this too outlives run(); asyncio.run
        # cancels it once more when it ends, and waits for it.)
        stuck = [t for a in [*(a for q in self._queues.values() for a in q.running), *self._abandoned]
                 for t in (a.handler_task, a.task) if t is not None and not t.done()]
        for task in stuck:
            task.cancel()
        if stuck:
            await asyncio.wait(stuck, timeout=5)

    async def _hand_back(self, conn: psycopg.AsyncConnection[Any], job: JobRecord) -> Optional[StaleClaimError]:
        """snooze(id, attempt): ready again at once, no attempt spent; QC003 is returned."""
        try:
            await conn.execute(self._sql(shared.SNOOZE), (job.id, job.attempt, 0.0))
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                return mapped
            self._report(err, f"handing job {job.id} back")
            return None
        self._log(logging.INFO, f"handed job {job.id} back (worker stopping)", job=job, outcome="handed_back")
        self._emit(WorkerEvent("handed_back", job=job))
        return None

    # --- reporting ----------------------------------------------------------

    def _report(self, err: BaseException, context: str) -> None:
        self._log(logging.ERROR, f"{context}: {shared.error_text(err)}", outcome="error", error=err)
        self._emit(WorkerEvent("error", error=err))

    def _emit(self, event: WorkerEvent) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:  # noqa: BLE001 - a hook must not break the worker
            logging.getLogger("claimqueue").exception("claimqueue worker %s: on_event raised", self.name)
