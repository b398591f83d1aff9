"""What a handler can say and what surrounds it, against a real server: snooze, retry-in,
non-retryable errors, error detail per attempt, per-job timeouts (a handler that stops
when told and one that ignores it), typed payloads, middleware, structured log records,
and drain() for tests. Blocking Worker and AsyncWorker."""
import asyncio
import dataclasses
import logging
import threading

import pytest

import claimqueue
from conftest import Events, job_row, until


def drain(conninfo, queue, handler, **options):
    events = Events()
    worker = claimqueue.Worker(conninfo, queue, handler, on_event=events, **options)
    result = worker.drain(timeout=60)
    return result, events


def adrain(conninfo, queue, handler, **options):
    events = Events()

    async def main():
        worker = claimqueue.AsyncWorker(conninfo, queue, handler, on_event=events, **options)
        return await worker.drain(timeout=60)
    return asyncio.run(main()), events


def run_at_delay(db, job_id):
    return db.execute("SELECT extract(epoch FROM run_at - now()) FROM queue_jobs WHERE id = %s",
                      (job_id,)).fetchone()[0]


def test_snooze_puts_the_job_back_later_without_spending_an_attempt(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 1")
    job_id = claimqueue.enqueue(db, queue, {})
    result, events = drain(conninfo, queue, lambda job: job.snooze(600))
    assert (result.snoozed, result.done, result.failed) == (1, 0, 0)
    assert events["snoozed"][0].seconds == 600
    state, attempt, _, _ = job_row(db, job_id)
    assert state == "ready"
    assert run_at_delay(db, job_id) > 500, "not claimable again for about 600 s"


def test_snooze_of_zero_runs_again_at_once_without_spending_attempts(conninfo, db, new_queue):
    """max_attempts 1: two snoozes and a third run that completes."""
    queue = new_queue("max_attempts => 1")
    job_id = claimqueue.enqueue(db, queue, {})
    runs = []

    def handler(job):
        runs.append(job.attempt)
        if len(runs) < 3:
            job.snooze(0)
        return "done at last"

    result, _ = drain(conninfo, queue, handler)
    assert (result.snoozed, result.done, result.failed) == (2, 1, 0)
    assert job_row(db, job_id)[0] == "done" and len(runs) == 3


def test_async_snooze(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 1")
    job_id = claimqueue.enqueue(db, queue, {})
    seen = []

    async def handler(job):
        seen.append(job.attempt)
        if len(seen) < 3:
            raise claimqueue.Snooze(0)
        return "third time"

    result, events = adrain(conninfo, queue, handler)
    assert (result.snoozed, result.done) == (2, 1)
    assert job_row(db, job_id)[0] == "done"
    assert claimqueue.job_status(db, [job_id])[0].result == "third time"


def test_retry_in_fails_the_attempt_and_sets_when_it_runs_again(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 3")
    job_id = claimqueue.enqueue(db, queue, {})

    def handler(job):
        raise claimqueue.RetryIn(900, "rate limited")

    result, events = drain(conninfo, queue, handler)
    assert (result.retried, result.failed) == (1, 0)
    assert job_row(db, job_id)[:3] == ("ready", 1, "rate limited")
    assert 800 < run_at_delay(db, job_id) <= 900


def test_a_non_retryable_error_fails_the_job_at_once(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 5")
    job_id = claimqueue.enqueue(db, queue, {})

    class BadInput(claimqueue.NonRetryableError):
        pass

    def handler(job):
        raise BadInput("no such customer")

    result, events = drain(conninfo, queue, handler)
    assert (result.failed, result.retried) == (1, 0)
    assert events["failed"][0].outcome == "failed"
    assert job_row(db, job_id)[:3] == ("failed", 1, "no such customer")


def test_each_attempts_error_keeps_its_class_message_and_traceback(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 2")
    job_id = claimqueue.enqueue(db, queue, {})

    def deep_down(attempt):
        raise KeyError(f"missing on attempt {attempt}") if attempt == 1 else ValueError("then this")

    def handler(job):
        deep_down(job.attempt)

    result, _ = drain(conninfo, queue, handler)
    assert (result.retried, result.failed) == (1, 1)
    errors = claimqueue.job_errors(db, job_id)
    assert [e.attempt for e in errors] == [1, 2]
    assert errors[0].detail["class"] == "builtins.KeyError"
    assert "missing on attempt 1" in errors[0].detail["message"]
    assert "deep_down" in errors[0].detail["stack"] and "Traceback" in errors[0].detail["stack"]
    assert errors[1].detail["class"] == "builtins.ValueError" and errors[1].error == "then this"


def test_an_error_too_large_for_the_server_is_clipped_not_lost(conninfo, db, new_queue):
    """fail() refuses error and detail over 64 kB together: a 300 kB message still fails the
    attempt, clipped, with its detail (a job left running would wait for its lease)."""
    queue = new_queue("max_attempts => 1")
    job_id = claimqueue.enqueue(db, queue, {})

    def handler(job):
        raise claimqueue.NonRetryableError("é" * 150_000)

    result, events = drain(conninfo, queue, handler)
    assert result.failed == 1 and events["error"] == []
    [error] = claimqueue.job_errors(db, job_id)
    assert error.error.startswith("éé") and error.error.endswith(" ...")
    assert len(error.error.encode()) <= 8000 and error.detail["class"].endswith("NonRetryableError")


def test_a_timeout_sets_aborted_and_a_handler_that_stops_fails_its_attempt(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 2")
    job_id = claimqueue.enqueue(db, queue, {})
    reasons = []

    def handler(job):
        if job.attempt == 2:
            return "quick the second time"
        assert job.aborted.wait(30), "the timeout set aborted"
        reasons.append(job.abort_reason)
        raise RuntimeError("gave up as asked")

    result, events = drain(conninfo, queue, handler, timeout=0.2, timeout_grace=30)
    assert reasons == ["timeout"]
    assert (result.timed_out, result.done) == (1, 1)
    assert events["timed_out"][0].outcome == "ready"
    errors = claimqueue.job_errors(db, job_id)
    assert errors[0].error.startswith("timed out after 0.2 s")
    assert errors[0].detail["message"] == "gave up as asked"
    assert job_row(db, job_id)[:2] == ("done", 2)


@pytest.mark.parametrize("on_timeout,state", [("fail", "failed"), ("hand_back", "ready")])
def test_a_handler_that_ignores_its_timeout_is_given_up_and_its_slot_freed(conninfo, db, new_queue,
                                                                            on_timeout, state):
    queue = new_queue("max_attempts => 5")
    stuck_id = claimqueue.enqueue(db, queue, {"stuck": True})
    release = threading.Event()
    ran = []

    def handler(job):
        ran.append(job.id)
        if job.payload.get("stuck"):
            release.wait(60)           # ignores job.aborted
            return "too late"

    events = Events()
    worker = claimqueue.Worker(conninfo, queue, handler, concurrency=1, timeout=0.2, timeout_grace=0.2,
                               on_timeout=on_timeout, on_event=events, wait=60, stop_signals=())
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    until(lambda: events["timed_out"], "the stuck job given up")
    # The only slot is free again although the stuck thread still runs.
    other = claimqueue.enqueue(db, queue, {})
    until(lambda: events["done"], "a second job ran in the freed slot")
    release.set()
    worker.stop()
    thread.join(30)
    assert not thread.is_alive()
    assert events["timed_out"][0].outcome == ("handed_back" if on_timeout == "hand_back" else "failed")
    assert job_row(db, other)[0] == "done"
    if on_timeout == "fail":
        assert job_row(db, stuck_id)[0] == "failed"
    else:
        assert job_row(db, stuck_id)[0] in ("ready", "running", "done")  # handed back: runs again
        assert stuck_id in ran


def test_async_timeout_cancels_the_task_and_a_task_that_swallows_it_is_given_up(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 1")
    polite = claimqueue.enqueue(db, queue, {"kind": "polite"})
    stubborn = claimqueue.enqueue(db, queue, {"kind": "stubborn"})
    cancelled = []

    async def handler(job):
        if job.payload["kind"] == "polite":
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(job.id)
                raise
        for _ in range(2):             # swallows the timeout's cancellation, and the stop's
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(job.id)

    result, events = adrain(conninfo, queue, handler, concurrency=2, timeout=0.2, timeout_grace=0.3,
                            on_timeout="fail")
    assert result.timed_out == 2
    assert sorted(cancelled) == sorted([polite, stubborn, stubborn])
    assert job_row(db, polite)[0] == "failed" and job_row(db, stubborn)[0] == "failed"


@dataclasses.dataclass
class Email:
    to: str
    subject: str = ""


def test_typed_payloads_and_a_payload_that_does_not_fit_fails_at_once(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 5")
    good = claimqueue.enqueue(db, queue, {"to": "a@example.com", "subject": "hi"})
    bad = claimqueue.enqueue(db, queue, {"too": "typo"})
    got = []

    def handler(job: claimqueue.Job[Email]):
        got.append(job.payload)

    result, events = drain(conninfo, queue, handler, payload=Email)
    assert got == [Email(to="a@example.com", subject="hi")]
    assert job_row(db, good)[0] == "done"
    state, attempt, error, _ = job_row(db, bad)
    assert (state, attempt) == ("failed", 1) and "does not fit Email" in error


def test_middleware_wraps_every_handler_in_order_and_sees_outcomes(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 1")
    claimqueue.enqueue_batch(db, queue, [{"ok": True}, {"ok": False}])
    trail = []

    def outer(job, call_next):
        trail.append(("outer in", job.payload["ok"]))
        try:
            return call_next(job)
        except Exception as err:
            trail.append(("outer saw", type(err).__name__))
            raise

    def inner(job, call_next):
        trail.append(("inner in", job.payload["ok"]))
        return {"wrapped": call_next(job)}

    def handler(job):
        if not job.payload["ok"]:
            raise ValueError("no")
        return 7

    events = Events()
    worker = claimqueue.Worker(conninfo, queue, handler, middleware=[outer, inner], on_event=events)
    result = worker.drain()
    assert (result.done, result.failed) == (1, 1)
    assert trail == [("outer in", True), ("inner in", True),
                     ("outer in", False), ("inner in", False), ("outer saw", "ValueError")]
    done_id = events["done"][0].job.id
    assert claimqueue.job_status(db, [done_id])[0].result == {"wrapped": 7}


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_log_records_carry_job_id_queue_attempt_duration_and_outcome(conninfo, db, new_queue):
    queue = new_queue("max_attempts => 1")
    ok, bad = claimqueue.enqueue_batch(db, queue, [{"ok": True}, {"ok": False}])
    logger = logging.getLogger("claimqueue.test")
    logger.setLevel(logging.DEBUG)
    records = Records()
    logger.addHandler(records)

    def handler(job):
        if not job.payload["ok"]:
            raise ValueError("nope")

    claimqueue.Worker(conninfo, queue, handler, logger=logger).drain()
    logger.removeHandler(records)
    by_job = {(r.job_id, r.outcome): r for r in records.records if hasattr(r, "job_id")}
    done = by_job[(ok, "done")]
    assert (done.queue, done.attempt) == (queue, 1) and done.duration >= 0
    failed = by_job[(bad, "failed:failed")]
    assert failed.levelno == logging.WARNING and failed.error == "nope"
    assert all(r.worker for r in records.records)


def test_hooks_for_tracing_see_start_and_end_of_every_job(conninfo, db, new_queue):
    """What an OpenTelemetry wiring needs (docs/clients.md): a span opened around the handler
    by middleware, ended with the outcome the worker's event reports."""
    queue = new_queue("max_attempts => 1")
    claimqueue.enqueue_batch(db, queue, [{"n": 1}, {"n": 2}, {"fail": True}])
    spans = {}

    def tracing(job, call_next):
        spans[job.id] = {"name": f"claimqueue {job.queue}", "attempt": job.attempt}
        try:
            return call_next(job)
        except Exception as err:
            spans[job.id]["exception"] = type(err).__name__
            raise

    def on_event(event):
        if event.kind in ("done", "failed", "snoozed", "timed_out") and event.job is not None:
            spans[event.job.id]["outcome"] = event.kind

    def handler(job):
        if job.payload.get("fail"):
            raise RuntimeError("boom")

    claimqueue.Worker(conninfo, queue, handler, middleware=[tracing], on_event=on_event).drain()
    assert sorted(s["outcome"] for s in spans.values()) == ["done", "done", "failed"]
    assert [s.get("exception") for s in spans.values() if s["outcome"] == "failed"] == ["RuntimeError"]


def test_drain_runs_what_handlers_enqueue_and_leaves_what_is_due_later(conninfo, db, new_queue):
    first, second = new_queue(), new_queue()
    claimqueue.enqueue(db, first, {"fan_out": 3})
    claimqueue.enqueue(db, second, {"later": True}, run_at=db.execute("SELECT now() + interval '1 hour'").fetchone()[0])

    def fan_out(job):
        with job.complete_in_transaction() as conn:
            claimqueue.enqueue_batch(conn, second, [{"n": n} for n in range(job.payload["fan_out"])])

    worker = claimqueue.Worker(conninfo, first, fan_out)
    worker.add_queue(second, lambda job: None, concurrency=2)
    result = worker.drain()
    assert result.done == 4
    assert db.execute("SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'ready') "
                      "FROM queue_jobs WHERE queue = %s", (second,)).fetchone() == (3, 1)
