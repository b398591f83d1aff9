"""The blocking worker: a thread claims with CALL dequeue_wait on one waiting
connection, ``concurrency`` threads run handlers (a connection each), a thread
heartbeats every running job, and stop() or SIGTERM drains without leaving a
claimed job behind."""
from __future__ import annotations

import contextlib
import logging
import queue as queue_module
import signal
import threading
import time
from typing import Any, Callable, Iterator, Optional, Sequence

import psycopg

from . import _shared as shared
from ._shared import JobRecord, WorkerEvent
from .errors import ClaimQueueError, StaleClaimError, to_claimqueue_error

log = logging.getLogger("claimqueue")


class Job(JobRecord):
    """A claimed job as a handler gets it: the record and what this attempt may do with it."""

    #: Set when this attempt no longer holds the job: it was lost (QC003: lease expired,
    #: cancelled) or handed back because the worker is stopping. Long work should stop then.
    aborted: threading.Event

    def __init__(self, owner: "_Attempt", **fields: Any) -> None:
        super().__init__(**fields)
        self.aborted = threading.Event()
        self._attempt = owner

    @contextlib.contextmanager
    def complete_in_transaction(self) -> Iterator[psycopg.Connection]:
        """Yields a connection inside a transaction that completes the job when the block ends.

        The rows written in the block commit together with the completion, or not at all.
        If the claim went stale the transaction rolls back and StaleClaimError is raised.
        Afterwards the job is done; the worker does not complete it again.
        """
        attempt = self._attempt
        if attempt.state != shared.RUNNING:
            raise StaleClaimError(f"job {self.id} attempt {self.attempt} is no longer held by this "
                                  f"worker ({attempt.state})", "QC003")
        conn = attempt.connection
        try:
            with conn.transaction():
                yield conn
                conn.execute(shared.COMPLETE, (self.id, self.attempt))
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                attempt.worker._mark_lost(attempt, mapped)
            if mapped is err:
                raise
            raise mapped from err
        attempt.worker._transition(attempt, shared.RUNNING, shared.COMPLETED)


class _Attempt:
    """One claim of one job by this worker, from dispatch to its end."""

    def __init__(self, worker: "Worker", fields: dict, beat_every: float) -> None:
        self.worker = worker
        self.state = shared.RUNNING
        self.job = Job(self, **fields)
        self.next_heartbeat = time.monotonic() + beat_every
        self.connection: Optional[psycopg.Connection] = None


Handler = Callable[[Job], Any]


class Worker:
    """Runs ``handler(job)`` for the jobs of ``queue``; ``run()`` blocks until stopped.

    conninfo: a libpq connection string or URL ("" takes everything from PG* variables).
    concurrency: handlers running at once (threads); the worker opens concurrency + 2
    connections (one waiting, one for heartbeats, one per handler thread).
    lease: each claim's lease in seconds or a timedelta (default: the queue's); heartbeats
    run at a third of it. name: recorded on claims; must be unique (default host:pid:random).
    wait: longest single dequeue_wait in seconds (stop() interrupts it anyway).
    grace: on stop, how long running handlers may finish before their jobs are handed back.
    stop_signals: signals that call stop() while run() runs (only in the main thread).
    on_event: called with a WorkerEvent for everything that happens (logging, metrics).
    retry_delay: pause after a failed claim or a connection error.
    release_on_disconnect: claim with release_on_disconnect (default False): the claims
    belong to the worker's waiting connection, and when that session ends (the process
    crashed, the connection was killed) the reaper returns its jobs at once rather than at
    the end of their leases. Direct connections or a session-mode pooler only, not a
    transaction-mode pooler (docs/workers.md, "Claims that die with their session"); a 0.5.0 server.

    What the handler returns (unless None) is stored as the job's result by complete(id,
    attempt, result), read back with job_status() or await_jobs(). It must be
    JSON-serialisable (json.dumps, no NaN): otherwise the attempt fails, as if the handler
    had raised, with a TypeError saying so.
    """

    def __init__(self, conninfo: str, queue: str, handler: Handler, *, concurrency: int = 1,
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

        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._attempts: set = set()
        self._stop_requested = False
        self._stop_claiming = threading.Event()
        self._heartbeats_end = threading.Event()
        self._work: "queue_module.Queue[Optional[_Attempt]]" = queue_module.Queue()
        self._waiter: Optional[psycopg.Connection] = None
        self._wait_in_flight = False
        self._started = False

    @property
    def running(self) -> int:
        """Jobs whose handlers are running now."""
        with self._lock:
            return len(self._attempts)

    def stop(self) -> None:
        """Asks run() to stop: it stops claiming, gives running handlers the grace period,
        hands the rest back and returns. Safe from any thread and from a signal handler."""
        self._stop_requested = True

    def run(self) -> None:
        """Claims and runs jobs until stop() or a stop signal; returns when drained."""
        if self._started:
            raise RuntimeError("a Worker runs once")
        self._started = True
        previous = self._install_signal_handlers()
        try:
            self._lease = self._lease_given or self._read_queue_lease()
            if self._lease is None:
                return self._finish([])
            threads = [threading.Thread(target=self._heartbeat_loop, name="claimqueue-heartbeat",
                                        daemon=True)]
            # Daemon threads: a handler still stuck after the grace period must not keep
            # the process alive (its job has been handed back by then).
            threads += [threading.Thread(target=self._slot_loop, name=f"claimqueue-slot-{n}",
                                         daemon=True) for n in range(self.concurrency)]
            claimer = threading.Thread(target=self._claim_loop, name="claimqueue-claim", daemon=True)
            for thread in threads + [claimer]:
                thread.start()
            # The main thread only watches: Python runs signal handlers there, and
            # join() with a timeout lets them in.
            while claimer.is_alive() and not self._stop_requested:
                claimer.join(0.1)
            try:
                self._drain(claimer)
            finally:
                self._close_waiter()
            self._finish(threads)
        finally:
            for signum, handler in previous:
                signal.signal(signum, handler)

    # --- claiming -----------------------------------------------------------

    def _read_queue_lease(self) -> Optional[float]:
        while not self._stop_requested:
            try:
                with psycopg.connect(self.conninfo, autocommit=True) as conn:
                    row = conn.execute(shared.QUEUE_LEASE, (self.queue,)).fetchone()
                if row is None:
                    raise ClaimQueueError(f'queue "{self.queue}" does not exist or this role holds '
                                          "no privilege on it", "QC001")
                return row[0]
            except Exception as err:  # noqa: BLE001 - reported, then retried
                self._report(err, f"reading the lease of queue {self.queue}")
                self._stop_claiming.wait(self._retry_delay)
        return None

    def _claim_loop(self) -> None:
        while not self._stop_requested:
            with self._changed:
                while len(self._attempts) >= self.concurrency and not self._stop_requested:
                    self._changed.wait(0.5)
                batch = self.concurrency - len(self._attempts)
            if self._stop_requested:
                break
            try:
                records = self._claim(batch)
            except Exception as err:  # noqa: BLE001
                # Cancelled by stop(): the claim rolled back. _drain closes the connection.
                if self._stop_requested:
                    break
                self._report(err, "dequeue_wait")
                # Claims made with release_on_disconnect die with the waiting session, so a
                # connection that only saw a statement fail is kept for the running jobs.
                if not (self._release_on_disconnect and self._waiter is not None
                        and not self._waiter.closed and not self._waiter.broken):
                    self._close_waiter()
                self._stop_claiming.wait(self._retry_delay)
                continue
            # A claim that committed is run even when stop() came meanwhile: the
            # drain waits for it like for any other running job.
            if records:
                self._emit(WorkerEvent("claimed", jobs=[a.job for a in records]))
            for attempt in records:
                self._work.put(attempt)

    def _claim(self, batch: int) -> list:
        if self._waiter is None or self._waiter.closed:
            self._waiter = psycopg.connect(self.conninfo, autocommit=True)
            # The session is the worker's alone: a role's statement_timeout must not
            # cut a wait short (`wait` bounds it).
            self._waiter.execute("SET statement_timeout = 0")
        if self._stop_requested:
            return []
        self._wait_in_flight = True
        try:
            row = self._waiter.execute(shared.CLAIM_RELEASING if self._release_on_disconnect else shared.CLAIM, (
                self.queue, self.name, batch, self._lease_given, self._wait)).fetchone()
        except psycopg.Error as err:
            raise to_claimqueue_error(err) from err
        finally:
            self._wait_in_flight = False
        attempts = [_Attempt(self, shared.record_from_json(self.queue, job), self._lease / 3)
                    for job in row[0] or []]
        with self._lock:
            self._attempts.update(attempts)
        return attempts

    def _close_waiter(self) -> None:
        if self._waiter is not None:
            self._waiter.close()
            self._waiter = None

    # --- running jobs -------------------------------------------------------

    def _slot_loop(self) -> None:
        conn: Optional[psycopg.Connection] = None
        while True:
            attempt = self._work.get()
            if attempt is None:
                break
            try:
                while conn is None or conn.closed or conn.broken:
                    try:
                        conn = psycopg.connect(self.conninfo, autocommit=True)
                    except psycopg.Error as err:
                        # No connection, no completion: the job waits for one, or is
                        # handed back by the drain.
                        self._report(err, "connecting a handler")
                        conn = None
                        if self._stop_requested or attempt.state != shared.RUNNING:
                            break
                        time.sleep(self._retry_delay)
                if conn is not None and attempt.state == shared.RUNNING:
                    attempt.connection = conn
                    self._run_attempt(attempt, conn)
            finally:
                with self._changed:
                    self._attempts.discard(attempt)
                    self._changed.notify_all()
        if conn is not None:
            conn.close()

    def _run_attempt(self, attempt: _Attempt, conn: psycopg.Connection) -> None:
        job = attempt.job
        started = time.monotonic()
        self._emit(WorkerEvent("started", job=job))
        raised: Optional[BaseException] = None
        result: Optional[str] = None
        try:
            value = self.handler(job)
            # A job completed by complete_in_transaction() is done already: its value is not kept.
            if attempt.state == shared.RUNNING:
                result = shared.result_text(job, value)
        except Exception as err:  # noqa: BLE001 - the handler's failure is the job's
            raised = to_claimqueue_error(err)
        try:
            if raised is None and attempt.state == shared.RUNNING:
                try:
                    if result is None:
                        conn.execute(shared.COMPLETE, (job.id, job.attempt))
                    else:
                        conn.execute(shared.COMPLETE_WITH_RESULT, (job.id, job.attempt, result))
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
                outcome = conn.execute(shared.FAIL, (job.id, job.attempt, shared.error_text(raised))
                                       ).fetchone()[0]
                self._transition(attempt, shared.RUNNING, shared.FAILED)
                log.warning("claimqueue worker %s: job %s attempt %s failed (%s): %s", self.name, job.id,
                            job.attempt, "will be retried" if outcome == "ready" else "no attempts left",
                            shared.error_text(raised))
                self._emit(WorkerEvent("failed", job=job, error=raised, outcome=outcome))
            elif attempt.state == shared.COMPLETED:
                self._report(raised, f"job {job.id}: the handler raised after its transaction "
                                     "completed the job")
            # lost or handed back: the job is not this attempt's any more.
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                self._mark_lost(attempt, mapped)
            else:
                # A lost connection, ...: the lease runs out and the job comes back.
                self._report(mapped, f"job {job.id} attempt {job.attempt}")

    def _transition(self, attempt: _Attempt, before: str, after: str) -> bool:
        with self._lock:
            if attempt.state != before:
                return False
            attempt.state = after
            return True

    def _mark_lost(self, attempt: _Attempt, err: StaleClaimError) -> None:
        """QC003: this attempt lost the job. Logged and announced once, never as an error."""
        if not self._transition(attempt, shared.RUNNING, shared.LOST):
            return
        attempt.job.aborted.set()
        self._report_lost(attempt.job, err)

    def _report_lost(self, job: JobRecord, err: StaleClaimError) -> None:
        log.warning("claimqueue worker %s: job %s attempt %s was lost (stale claim: lease expired or "
                    "job cancelled); another attempt owns it", self.name, job.id, job.attempt)
        self._emit(WorkerEvent("lost", job=job, error=err))

    def _heartbeat_loop(self) -> None:
        conn: Optional[psycopg.Connection] = None
        beat_every = self._lease / 3
        while not self._heartbeats_end.is_set():
            now = time.monotonic()
            with self._lock:
                running = [a for a in self._attempts if a.state == shared.RUNNING]
            for attempt in running:
                if attempt.next_heartbeat > now or attempt.state != shared.RUNNING:
                    continue
                attempt.next_heartbeat = now + beat_every
                job = attempt.job
                try:
                    if conn is None or conn.closed or conn.broken:
                        conn = psycopg.connect(self.conninfo, autocommit=True)
                    expires = conn.execute(shared.HEARTBEAT, (job.id, job.attempt, self._lease)
                                           ).fetchone()[0]
                    self._emit(WorkerEvent("heartbeat", job=job, lease_expires_at=expires))
                except psycopg.Error as err:
                    mapped = to_claimqueue_error(err)
                    if isinstance(mapped, StaleClaimError):
                        self._mark_lost(attempt, mapped)
                    else:
                        self._report(mapped, f"heartbeat of job {job.id}")
            with self._lock:
                due = [a.next_heartbeat for a in self._attempts if a.state == shared.RUNNING]
            pause = min(due, default=now + 0.5) - time.monotonic()
            self._heartbeats_end.wait(min(max(pause, 0.01), 0.5))
        if conn is not None:
            conn.close()

    # --- stopping -----------------------------------------------------------

    def _install_signal_handlers(self) -> list:
        if threading.current_thread() is not threading.main_thread():
            return []
        previous = []
        for signum in self._stop_signals:
            previous.append((signum, signal.signal(signum, self._on_signal)))
        return previous

    def _on_signal(self, signum: int, _frame: Any) -> None:
        # Only a flag: the main thread's watch loop does the rest.
        self._stop_requested = True

    def _drain(self, claimer: threading.Thread) -> None:
        log.info("claimqueue worker %s: stopping", self.name)
        self._emit(WorkerEvent("stopping"))
        self._stop_claiming.set()
        with self._changed:
            self._changed.notify_all()
        # Cancel the waiting CALL until the claim thread has ended: a cancel that
        # arrives before the CALL starts is lost, hence the repeat; one that
        # arrives during the claim rolls the claim back. cancel() carries the
        # connection's secret key, so it reaches that backend and no other.
        while claimer.is_alive():
            waiter = self._waiter
            if self._wait_in_flight and waiter is not None:
                try:
                    waiter.cancel()
                except psycopg.Error as err:
                    self._report(err, "cancelling the waiting dequeue")
            claimer.join(0.25)
        # With release_on_disconnect the running claims belong to the waiting session:
        # it stays open until the grace period and the hand-backs are over.
        if not self._release_on_disconnect:
            self._close_waiter()

        deadline = time.monotonic() + self._grace
        with self._changed:
            while self._attempts and time.monotonic() < deadline:
                self._changed.wait(deadline - time.monotonic())
            left = [a for a in self._attempts if a.state == shared.RUNNING]
        try:
            conn = psycopg.connect(self.conninfo, autocommit=True)
        except psycopg.Error as err:
            # No way to hand them back: their leases run out and the reaper returns them.
            self._report(err, "connecting to hand jobs back")
            for attempt in left:
                if self._transition(attempt, shared.RUNNING, shared.HANDED_BACK):
                    attempt.job.aborted.set()
            return
        with conn:
            for attempt in left:
                if self._transition(attempt, shared.RUNNING, shared.HANDED_BACK):
                    attempt.job.aborted.set()
                    stale = self._hand_back(conn, attempt.job)
                    if stale is not None:      # the attempt had lost the job before the hand-back
                        self._report_lost(attempt.job, stale)
            # Every job still running under this worker's name now is one no handler
            # will finish: a claim that committed while its CALL was being cancelled,
            # or a hand-back that failed above.
            try:
                for row in conn.execute(shared.CLAIMS_LEFT, (self.queue, self.name)).fetchall():
                    # QC003 here: the job finished meanwhile; nothing to hand back.
                    self._hand_back(conn, shared.record_from_row(self.queue, row))
            except psycopg.Error as err:
                self._report(err, "looking for claims left behind")

    def _hand_back(self, conn: psycopg.Connection, job: JobRecord) -> Optional[StaleClaimError]:
        """fail(..., retry_in => 0); a stale claim (QC003) is returned, not reported."""
        try:
            conn.execute(shared.HAND_BACK, (job.id, job.attempt))
        except psycopg.Error as err:
            mapped = to_claimqueue_error(err)
            if isinstance(mapped, StaleClaimError):
                return mapped
            self._report(err, f"handing job {job.id} back")
            return None
        log.info("claimqueue worker %s: handed job %s back (worker stopping)", self.name, job.id)
        self._emit(WorkerEvent("handed_back", job=job))
        return None

    def _finish(self, threads: list) -> None:
        self._heartbeats_end.set()
        for _ in range(self.concurrency):
            self._work.put(None)
        # Idle slots end at once; a handler still running after its hand-back is
        # left to finish on its daemon thread.
        deadline = time.monotonic() + 1.0
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0))
        log.info("claimqueue worker %s: stopped", self.name)
        self._emit(WorkerEvent("stopped"))

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
