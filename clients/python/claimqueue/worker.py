"""The blocking worker: one thread per queue claims with CALL dequeue_wait on a connection
it holds, a thread per claimed job runs its handler, a supervisor thread heartbeats every
running job and enforces the queues' timeouts, and stop() or SIGTERM drains without leaving
a claimed job behind. Connections come from a psycopg_pool pool: the application's, or one
the worker makes from a conninfo."""
from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from dataclasses import dataclass
from typing import (Any, Callable, Dict, Generic, Iterator, List, NoReturn, Optional, Sequence,
                    Set, TypeVar, Union)

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from . import _ext
from . import _shared as shared
from ._ext import Extension
from ._pool import Connections
from ._shared import Duration, JobRecord, OnTimeout, QueueConfig, Settle, WorkerEvent
from .errors import Snooze, StaleClaimError, to_claimqueue_error

P = TypeVar("P")


class Job(JobRecord, Generic[P]):
    """A claimed job as a handler gets it: the record and what this attempt may do with it."""

    payload: P
    #: Set when this attempt should stop: its timeout passed (``abort_reason`` 'timeout'),
    #: it was lost (QC003: lease expired, cancelled; 'lost') or handed back because the
    #: worker is stopping ('stopping'). Long work should check it or wait on it.
    aborted: threading.Event
    abort_reason: Optional[str]

    def __init__(self, owner: "_Attempt", **fields: Any) -> None:
        super().__init__(**fields)
        self.aborted = threading.Event()
        self.abort_reason = None
        self._attempt = owner

    def snooze(self, seconds: Duration = 0.0) -> NoReturn:
        """Ends the handler: the job is ready again in ``seconds`` without spending an attempt."""
        raise Snooze(shared.seconds(seconds, "seconds") or 0.0)

    @contextlib.contextmanager
    def complete_in_transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """Yields a connection inside a transaction that completes the job when the block ends.

        The rows written in the block commit together with the completion, or not at all.
        If the claim went stale the transaction rolls back and StaleClaimError is raised.
        Afterwards the job is done; the worker does not complete it again.
        """
        attempt = self._attempt
        if attempt.state != shared.RUNNING:
            raise StaleClaimError(f"job {self.id} attempt {self.attempt} is no longer held by this "
                                  f"worker ({attempt.state})", "QC003")
        worker = attempt.worker
        with worker._connections.connection() as conn:
            try:
                with conn.transaction():
                    yield conn
                    conn.execute(worker._sql(shared.COMPLETE), (self.id, self.attempt))
            except psycopg.Error as err:
                mapped = to_claimqueue_error(err)
                if isinstance(mapped, StaleClaimError):
                    worker._mark_lost(attempt, mapped)
                if mapped is err:
                    raise
                raise mapped from err
        # Committed: the job is done by this attempt, whatever else happened meanwhile.
        with worker._lock:
            attempt.state = shared.COMPLETED
            attempt.completed_in_transaction = True


class _Attempt:
    """One claim of one job by this worker, from dispatch to its end."""

    def __init__(self, worker: "Worker", config: QueueConfig[Any], fields: Dict[str, Any],
                 lease: float) -> None:
        self.worker = worker
        self.config = config
        self.state = shared.RUNNING
        self.job: Job[Any] = Job(self, **fields)
        self.started = time.monotonic()
        self.beat_every = lease / 3
        self.next_heartbeat = self.started + self.beat_every
        self.deadline = None if config.timeout is None else self.started + config.timeout
        self.timed_out = False
        self.completed_in_transaction = False


Handler = Callable[[Job[Any]], Any]
#: Middleware: ``middleware(job, call_next)`` runs around the handler and returns what
#: ``call_next(job)`` returns (or raises).
Middleware = Callable[[Job[Any], Callable[[Job[Any]], Any]], Any]


@dataclass
class DrainResult:
    """What drain() did: attempts by outcome."""

    done: int = 0
    failed: int = 0
    retried: int = 0
    snoozed: int = 0
    timed_out: int = 0
    lost: int = 0


class _Queue:
    def __init__(self, config: QueueConfig[Any], call: Callable[[Job[Any]], Any]) -> None:
        self.config = config
        self.call = call
        self.lease = 30.0
        self.running: Set[_Attempt] = set()
        self.waiter: Optional[psycopg.Connection[Any]] = None
        self.wait_in_flight = False
        self.idle_mark = -1          # drain(): settled count when a claim last found nothing


class Worker:
    """Runs handlers for the jobs of one or more queues; ``run()`` blocks until stopped.

    db: a libpq conninfo ("" takes everything from PG* variables), for which the worker
    makes a pool of its own, or the application's ``psycopg_pool.ConnectionPool``. The
    worker holds one connection per queue (its waiting dequeue) for as long as it runs and
    borrows others per statement: a pool of (queues + total concurrency + 1) never waits.
    queue, handler and the options after them: a first queue (more with add_queue()).
    concurrency: handlers of that queue running at once (threads). lease: each claim's
    lease in seconds or a timedelta (default: the queue's); heartbeats run at a third of it.
    timeout: a per-job time limit (default none): at its end ``job.aborted`` is set; if the
    handler has not returned ``timeout_grace`` later, the job is failed (on_timeout 'retry':
    retried if it has attempts left; 'fail': at once) or handed back without spending an
    attempt ('hand_back'), and the slot is freed. Python cannot kill a thread: the handler's
    thread runs on until it returns, and whatever it then returns or raises is ignored.
    payload: a type (a dataclass: built from the object's fields) or function the payload
    is passed through; a payload it refuses fails the job at once.
    name: recorded on claims; must be unique (default host:pid:random).
    wait: longest single dequeue_wait in seconds (stop() interrupts it anyway).
    grace: on stop, how long running handlers may finish before their jobs are handed back
    (with snooze: no attempt spent).
    stop_signals: signals that call stop() while run() runs (only in the main thread).
    on_event: called with a WorkerEvent for everything that happens (metrics, tracing).
    logger: a logging.Logger (default ``claimqueue``); each record has extra fields
    worker, job_id, queue, attempt, duration, outcome.
    middleware: functions ``m(job, call_next)`` around every handler, outermost first.
    retry_delay: pause after a failed claim or a connection error.
    release_on_disconnect: claims die with the worker's waiting connection (direct
    connections or a session-mode pooler only; docs/clients.md).

    What the handler returns (unless None) is stored as the job's result; it must be
    JSON-serialisable. Raising ``Snooze(s)`` (or ``job.snooze(s)``) puts the job back in s
    seconds without spending an attempt; ``RetryIn(s)`` fails the attempt and retries in s
    seconds; ``NonRetryableError`` fails the job at once; any other exception fails the
    attempt, keeping its class, message and traceback (``job_errors()``).
    """

    def __init__(self, db: Union[str, ConnectionPool], queue: Optional[str] = None,
                 handler: Optional[Callable[[Job[Any]], Any]] = None, *, concurrency: int = 1,
                 lease: Optional[Duration] = None, timeout: Optional[Duration] = None,
                 timeout_grace: Duration = 5.0, on_timeout: OnTimeout = "retry",
                 payload: Optional[Callable[[Any], Any]] = None,
                 name: Optional[str] = None, wait: Duration = 30.0, grace: Duration = 30.0,
                 stop_signals: Sequence[int] = (signal.SIGTERM, signal.SIGINT),
                 on_event: Optional[Callable[[WorkerEvent], None]] = None,
                 logger: Optional[Union[logging.Logger, logging.LoggerAdapter]] = None,  # type: ignore[type-arg]
                 middleware: Sequence[Middleware] = (),
                 retry_delay: Duration = 1.0, release_on_disconnect: bool = False) -> None:
        if not isinstance(db, (str, ConnectionPool)):
            raise TypeError("db must be a conninfo string or a psycopg_pool.ConnectionPool")
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
        self._queues: Dict[str, _Queue] = {}
        self._started = False
        if queue is not None or handler is not None:
            self.add_queue(queue, handler, concurrency=concurrency, lease=lease,  # type: ignore[arg-type]
                           timeout=timeout, timeout_grace=timeout_grace, on_timeout=on_timeout,
                           payload=payload)

        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._settled = 0
        self._stop_requested = False
        self._stop_claiming = threading.Event()
        self._supervisor_end = threading.Event()
        self._draining: Optional[DrainResult] = None
        self._connections: Connections
        self._ext: Optional[Extension] = None

    # --- configuration ----------------------------------------------------

    def add_queue(self, queue: str, handler: Callable[[Job[P]], Any], *, concurrency: int = 1,
                  lease: Optional[Duration] = None, timeout: Optional[Duration] = None,
                  timeout_grace: Duration = 5.0, on_timeout: OnTimeout = "retry",
                  payload: Optional[Callable[[Any], P]] = None) -> "Worker":
        """Serves one more queue with its own handler and options (as the constructor's)."""
        if self._started:
            raise RuntimeError("add queues before run()")
        config = shared.make_queue(queue, handler, concurrency, lease, timeout, timeout_grace,
                                   on_timeout, payload)
        if config.name in self._queues:
            raise ValueError(f'queue "{config.name}" is served twice')
        call: Callable[[Job[Any]], Any] = config.handler
        for m in reversed(self._middleware):
            call = (lambda m, after: lambda job: m(job, after))(m, call)
        self._queues[config.name] = _Queue(config, call)
        return self

    def handles(self, queue: str, *, concurrency: int = 1, lease: Optional[Duration] = None,
                timeout: Optional[Duration] = None, timeout_grace: Duration = 5.0,
                on_timeout: OnTimeout = "retry", payload: Optional[Callable[[Any], P]] = None,
                ) -> Callable[[Callable[[Job[P]], Any]], Callable[[Job[P]], Any]]:
        """A decorator: ``@worker.handles("emails", concurrency=4)`` above a handler."""
        def register(handler: Callable[[Job[P]], Any]) -> Callable[[Job[P]], Any]:
            self.add_queue(queue, handler, concurrency=concurrency, lease=lease, timeout=timeout,
                           timeout_grace=timeout_grace, on_timeout=on_timeout, payload=payload)
            return handler
        return register

    @property
    def queues(self) -> List[str]:
        return list(self._queues)

    @property
    def concurrency(self) -> int:
        """Handlers that may run at once, over all queues."""
        return sum(q.config.concurrency for q in self._queues.values())

    @property
    def running(self) -> int:
        """Jobs whose handlers are running now (a timed-out handler left behind is not counted)."""
        with self._lock:
            return sum(len(q.running) for q in self._queues.values())

    def stop(self) -> None:
        """Asks run() to stop: it stops claiming, gives running handlers the grace period,
        hands the rest back and returns. Safe from any thread and from a signal handler."""
        self._stop_requested = True

    # --- running ----------------------------------------------------------

    def run(self) -> None:
        """Claims and runs jobs until stop() or a stop signal; returns when drained.

        Raises at once, before claiming, when the extension is missing or at an unsupported
        version, or a queue does not exist or this role may not use it (the server's error).
        """
        self._run(drain=False)

    def drain(self, timeout: Duration = 60.0) -> DrainResult:
        """For tests: runs every job that is claimable now, and those they make claimable
        now (a retry with no backoff, a snooze of 0 s, a job a handler enqueued), until every
        queue has none and nothing runs; then stops as run() does and returns the counts.
        A job due later (a retry after a backoff, a delayed job) is left. ``timeout`` bounds
        the whole run (then it stops as if stop() was called)."""
        limit = shared.seconds(timeout, "timeout") or 0.0
        self._draining = DrainResult()
        timer = threading.Timer(limit, self.stop)
        timer.daemon = True
        timer.start()
        try:
            self._run(drain=True)
        finally:
            timer.cancel()
        return self._draining

    def _run(self, drain: bool) -> None:
        if self._started:
            raise RuntimeError("a Worker runs once")
        if not self._queues:
            raise ValueError("the worker serves no queue: pass queue and handler, or add_queue()")
        self._started = True
        size = len(self._queues) + self.concurrency + 1
        self._connections = Connections(self._db, size)
        self._connections.open(len(self._queues), size)
        previous = [] if drain else self._install_signal_handlers()
        try:
            self._prepare()
            supervisor = threading.Thread(target=self._supervise, name="claimqueue-supervisor",
                                          daemon=True)
            supervisor.start()
            claimers = [threading.Thread(target=self._claim_loop, args=(q, drain), daemon=True,
                                         name=f"claimqueue-claim-{q.config.name}")
                        for q in self._queues.values()]
            for thread in claimers:
                thread.start()
            # The main thread only watches: Python runs signal handlers there, and
            # join() with a timeout lets them in.
            while not self._stop_requested and any(t.is_alive() for t in claimers):
                if drain and self._drained():
                    break
                claimers[0].join(0.05 if drain else 0.1)
            self._stop_requested = True
            self._drain(claimers)
            self._supervisor_end.set()
            supervisor.join(5)
            self._log(logging.INFO, "stopped", outcome="stopped")
            self._emit(WorkerEvent("stopped"))
        finally:
            for signum, handler in previous:
                signal.signal(signum, handler)
            self._connections.close()

    def _prepare(self) -> None:
        """The extension and each queue, checked once: errors here are raised, not retried
        (a connection that cannot be made is retried until stop())."""
        while True:
            try:
                with self._connections.connection() as conn:
                    self._ext = _ext.extension(conn)
                    for q in self._queues.values():
                        try:
                            conn.execute(self._sql(shared.QUEUE_CHECK), (q.config.name,))
                            row = conn.execute(self._sql(shared.QUEUE_LEASE), (q.config.name,)).fetchone()
                        except psycopg.Error as err:
                            raise to_claimqueue_error(err) from err
                        q.lease = q.config.lease or (row[0] if row else 30.0)
                return
            except (psycopg.OperationalError, PoolTimeout) as err:
                if self._stop_requested:
                    raise
                self._report(err, "connecting")
                time.sleep(self._retry_delay)

    def _sql(self, template: str) -> Any:
        assert self._ext is not None
        return self._ext.sql(template)

    def _drained(self) -> bool:
        with self._lock:
            return all(not q.running and q.idle_mark == self._settled for q in self._queues.values())

    # --- claiming -----------------------------------------------------------

    def _claim_loop(self, q: _Queue, drain: bool) -> None:
        while not self._stop_requested:
            with self._changed:
                while len(q.running) >= q.config.concurrency and not self._stop_requested:
                    self._changed.wait(0.5)
                batch = q.config.concurrency - len(q.running)
                mark = self._settled
                idle_before = not q.running
            if self._stop_requested:
                break
            if drain and q.idle_mark == mark and idle_before:
                with self._changed:
                    self._changed.wait(0.05)
                continue
            try:
                attempts = self._claim(q, batch, 0.0 if drain else self._wait)
            except Exception as err:  # noqa: BLE001
                # Cancelled by stop(): the claim rolled back. _drain gives the connection back.
                if self._stop_requested:
                    break
                self._report(err, f"dequeue_wait on queue {q.config.name}")
                # Claims made with release_on_disconnect die with the waiting session, so a
                # connection that only saw a statement fail is kept for the running jobs.
                if not (self._release_on_disconnect and q.waiter is not None
                        and not q.waiter.closed and not q.waiter.broken):
                    self._release_waiter(q)
                self._stop_claiming.wait(self._retry_delay)
                continue
            if drain and not attempts and idle_before:
                with self._lock:
                    q.idle_mark = mark
            # A claim that committed is run even when stop() came meanwhile: the
            # drain waits for it like for any other running job.
            if attempts:
                self._emit(WorkerEvent("claimed", jobs=[a.job for a in attempts]))
            for attempt in attempts:
                threading.Thread(target=self._run_attempt, args=(q, attempt), daemon=True,
                                 name=f"claimqueue-job-{attempt.job.id}").start()

    def _claim(self, q: _Queue, batch: int, wait: float) -> List[_Attempt]:
        if q.waiter is None or q.waiter.closed:
            q.waiter = self._connections.hold()
        if self._stop_requested:
            return []
        q.wait_in_flight = True
        try:
            row = q.waiter.execute(self._sql(shared.CLAIM_RELEASING if self._release_on_disconnect
                                             else shared.CLAIM),
                                   (q.config.name, self.name, batch, q.config.lease, wait)).fetchone()
        except psycopg.Error as err:
            raise to_claimqueue_error(err) from err
        finally:
            q.wait_in_flight = False
        attempts = [_Attempt(self, q.config, shared.record_from_json(q.config.name, job), q.lease)
                    for job in (row[0] if row else None) or []]
        with self._lock:
            q.running.update(attempts)
        return attempts

    def _release_waiter(self, q: _Queue) -> None:
        if q.waiter is not None:
            waiter, q.waiter = q.waiter, None
            try:
                self._connections.release(waiter)
            except Exception as err:  # noqa: BLE001
                self._report(err, "giving the waiting connection back")

    # --- running jobs -------------------------------------------------------

    def _run_attempt(self, q: _Queue, attempt: _Attempt) -> None:
        job = attempt.job
        try:
            self._log(logging.DEBUG, f"job {job.id} started", job=job, outcome="started")
            self._emit(WorkerEvent("started", job=job))
            raised: Optional[BaseException] = None
            value: Any = None
            try:
                job.payload = shared.convert_payload(q.config, job.payload)
                value = q.call(job)
            except Exception as err:  # noqa: BLE001 - the handler's failure is the job's
                raised = to_claimqueue_error(err)
            with self._lock:
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
            self._settle(attempt, shared.settle_for(job, q.config, raised, value, attempt.timed_out))
        finally:
            self._free(q, attempt)

    def _settle(self, attempt: _Attempt, settle: Settle, timed_out: bool = False) -> None:
        """Runs what settles the attempt (the caller holds it in SETTLING or TIMED_OUT)."""
        job = attempt.job
        try:
            with self._connections.connection() as conn:
                if settle.kind == "complete":
                    try:
                        if settle.result is None:
                            conn.execute(self._sql(shared.COMPLETE), (job.id, job.attempt))
                        else:
                            conn.execute(self._sql(shared.COMPLETE_WITH_RESULT),
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
                    conn.execute(self._sql(shared.SNOOZE), (job.id, job.attempt, settle.delay))
                    if timed_out or attempt.timed_out:
                        self._finished(attempt, "timed_out", shared.TIMED_OUT, outcome="handed_back",
                                       error=settle.error)
                    else:
                        self._finished(attempt, "snoozed", shared.SNOOZED, seconds=settle.delay)
                    return
                row = conn.execute(self._sql(shared.FAIL), shared.fail_params(job, settle)).fetchone()
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
                # A lost connection, ...: the lease runs out and the job comes back.
                self._report(mapped, f"job {job.id} attempt {job.attempt}")

    def _finished(self, attempt: _Attempt, kind: str, state: str, outcome: Optional[str] = None,
                  error: Optional[BaseException] = None, seconds: Optional[float] = None) -> None:
        job = attempt.job
        duration = time.monotonic() - attempt.started
        with self._lock:
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
            with self._lock:
                setattr(self._draining, what, getattr(self._draining, what) + 1)

    def _free(self, q: _Queue, attempt: _Attempt) -> None:
        with self._changed:
            if attempt in q.running:
                q.running.discard(attempt)
                self._settled += 1
            self._changed.notify_all()

    def _mark_lost(self, attempt: _Attempt, err: StaleClaimError) -> None:
        """QC003: this attempt lost the job. Logged and announced once, never as an error."""
        with self._lock:
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

    def _supervise(self) -> None:
        while not self._supervisor_end.is_set():
            now = time.monotonic()
            with self._lock:
                running = [(q, a) for q in self._queues.values() for a in q.running
                           if a.state == shared.RUNNING]
            for q, attempt in running:
                self._check_timeout(q, attempt, now)
                if attempt.next_heartbeat <= now and attempt.state == shared.RUNNING:
                    self._heartbeat(q, attempt, now)
            with self._lock:
                due = [min(a.next_heartbeat, a.deadline or a.next_heartbeat)
                       for q in self._queues.values() for a in q.running if a.state == shared.RUNNING]
            pause = min(due, default=now + 0.5) - time.monotonic()
            self._supervisor_end.wait(min(max(pause, 0.01), 0.5))

    def _check_timeout(self, q: _Queue, attempt: _Attempt, now: float) -> None:
        config = q.config
        if attempt.deadline is None or now < attempt.deadline:
            return
        job = attempt.job
        if not attempt.timed_out:
            attempt.timed_out = True
            job.abort_reason = "timeout"
            job.aborted.set()
            self._log(logging.WARNING, f"job {job.id} attempt {job.attempt} passed its timeout of "
                      f"{config.timeout:g} s; its handler has {config.timeout_grace:g} s to return",
                      job=job, outcome="timeout")
            attempt.deadline = attempt.deadline + config.timeout_grace
            return
        with self._lock:
            if attempt.state != shared.RUNNING:
                return
            attempt.state = shared.TIMED_OUT
        self._settle(attempt, shared.timeout_settle(config, None), timed_out=True)
        self._log(logging.WARNING, f"job {job.id}: its handler did not return within the grace; "
                  "the slot is freed and the thread left to run on", job=job, outcome="abandoned")
        self._free(q, attempt)

    def _heartbeat(self, q: _Queue, attempt: _Attempt, now: float) -> None:
        attempt.next_heartbeat = now + attempt.beat_every
        job = attempt.job
        try:
            with self._connections.connection(timeout=attempt.beat_every) as conn:
                row = conn.execute(self._sql(shared.HEARTBEAT), (job.id, job.attempt, q.lease)).fetchone()
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

    def _install_signal_handlers(self) -> List[Any]:
        if threading.current_thread() is not threading.main_thread():
            return []
        previous = []
        for signum in self._stop_signals:
            previous.append((signum, signal.signal(signum, self._on_signal)))
        return previous

    def _on_signal(self, signum: int, _frame: Any) -> None:
        # Only a flag: the main thread's watch loop does the rest.
        self._stop_requested = True

    def _drain(self, claimers: List[threading.Thread]) -> None:
        self._log(logging.INFO, "stopping", outcome="stopping")
        self._emit(WorkerEvent("stopping"))
        self._stop_claiming.set()
        with self._changed:
            self._changed.notify_all()
        # Cancel each waiting CALL until its claim thread has ended: a cancel that arrives
        # before the CALL starts is lost, hence the repeat; one that arrives during the
        # claim rolls the claim back. cancel() carries the connection's secret key.
        while any(t.is_alive() for t in claimers):
            for q in self._queues.values():
                waiter = q.waiter
                if q.wait_in_flight and waiter is not None:
                    try:
                        waiter.cancel()
                    except psycopg.Error as err:
                        self._report(err, "cancelling the waiting dequeue")
            for t in claimers:
                t.join(0.25 / len(claimers))
        # With release_on_disconnect the running claims belong to the waiting sessions:
        # they are given back after the grace period and the hand-backs.
        if not self._release_on_disconnect:
            for q in self._queues.values():
                self._release_waiter(q)

        deadline = time.monotonic() + self._grace
        with self._changed:
            while any(q.running for q in self._queues.values()) and time.monotonic() < deadline:
                self._changed.wait(deadline - time.monotonic())
            left = [(q, a) for q in self._queues.values() for a in q.running]
            for _, attempt in left:
                if attempt.state == shared.RUNNING:
                    attempt.state = shared.HANDED_BACK
        try:
            with self._connections.connection(timeout=10) as conn:
                for q, attempt in left:
                    if attempt.state != shared.HANDED_BACK:
                        continue
                    attempt.job.abort_reason = "stopping"
                    attempt.job.aborted.set()
                    stale = self._hand_back(conn, attempt.job)
                    if stale is not None:      # the attempt had lost the job before the hand-back
                        self._report_lost(attempt.job, stale)
                # Every job still running under this worker's name now is one no handler will
                # finish: a claim that committed while its CALL was being cancelled, or a
                # hand-back that failed above.
                for q in self._queues.values():
                    try:
                        rows = conn.execute(self._sql(shared.CLAIMS_LEFT), (q.config.name, self.name)).fetchall()
                    except psycopg.Error as err:
                        self._report(err, "looking for claims left behind")
                        continue
                    for row in rows:
                        # QC003 here: the job finished meanwhile; nothing to hand back.
                        self._hand_back(conn, shared.record_from_row(q.config.name, row))
        except Exception as err:  # noqa: BLE001
            # No way to hand them back: their leases run out and the reaper returns them.
            self._report(err, "connecting to hand jobs back")
            for _, attempt in left:
                attempt.job.aborted.set()
        finally:
            for q in self._queues.values():
                self._release_waiter(q)

    def _hand_back(self, conn: psycopg.Connection[Any], job: JobRecord) -> Optional[StaleClaimError]:
        """snooze(id, attempt): ready again at once, no attempt spent; a stale claim (QC003)
        is returned, not reported."""
        try:
            conn.execute(self._sql(shared.SNOOZE), (job.id, job.attempt, 0.0))
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
