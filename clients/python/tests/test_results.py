"""Results against a real server: a handler's return value stored by the Worker and
the AsyncWorker, job_status() and await_jobs() (blocking and async), and results
that cannot be stored. Waits poll with deadlines."""
import asyncio
import datetime as dt
import decimal
import threading

import psycopg
import pytest

import claimqueue
from claimqueue import JobStatus
from conftest import Events, job_row, until


def run_blocking(conninfo, queue, handler, done, **options):
    """Runs a Worker until done(events) holds; returns the events."""
    events = Events()
    worker = claimqueue.Worker(conninfo, queue, handler, wait=60, on_event=events, stop_signals=(),
                               **options)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        until(lambda: done(events), "the worker's jobs handled")
    finally:
        worker.stop()
        thread.join(30)
    assert not thread.is_alive()
    return events


def awaiting_sessions(db):
    """Sessions sleeping in CALL await_jobs (waiters() lists them with a NULL queue)."""
    return db.execute("SELECT count(*) FROM claimqueue.waiters() WHERE queue IS NULL").fetchone()[0]


def test_job_status_one_per_id_in_their_order(db, new_queue):
    queue = new_queue()
    a, b = claimqueue.enqueue_batch(db, queue, [{}, {}])
    assert claimqueue.job_status(db, [b, 999_999_999, a]) == [
        JobStatus(b, "ready", 0, None, None),
        JobStatus(999_999_999, None, None, None, None),
        JobStatus(a, "ready", 0, None, None),
    ]
    assert claimqueue.job_status(db, []) == []


def test_the_worker_stores_the_handlers_return_value_none_stores_nothing(conninfo, db, new_queue):
    queue = new_queue()
    ids = claimqueue.enqueue_batch(db, queue, [{"n": n} for n in range(4)])
    values = [{"doubled": 2, "list": [1, "a", None]}, "plain string", None, 0]

    events = run_blocking(conninfo, queue, lambda job: values[job.payload["n"]],
                          lambda ev: len(ev["done"]) == 4, concurrency=2)
    assert [(s.state, s.attempt, s.result) for s in claimqueue.job_status(db, ids)] == [
        ("done", 1, {"doubled": 2, "list": [1, "a", None]}), ("done", 1, "plain string"),
        ("done", 1, None), ("done", 1, 0)]
    assert db.execute("SELECT result IS NULL FROM claimqueue.jobs WHERE id = %s",
                      (ids[2],)).fetchone()[0], "None: complete(id, attempt), no result"
    assert events["error"] == []


def test_await_jobs_returns_when_the_jobs_finish(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 1")
    ids = claimqueue.enqueue_batch(db, queue, [{"n": 1}, {"n": 2}, {"fail": True}])
    answer = {}

    def requester():
        with psycopg.connect(conninfo, autocommit=True) as conn:
            answer["statuses"] = claimqueue.await_jobs(conn, ids, timeout=dt.timedelta(minutes=2))

    waiting = threading.Thread(target=requester, daemon=True)
    waiting.start()
    until(lambda: awaiting_sessions(db) == 1, "await_jobs sleeps in the server")
    assert "statuses" not in answer, "nothing is finished yet"

    def handler(job):
        if job.payload.get("fail"):
            raise RuntimeError("no thumbnail")
        return {"n": job.payload["n"] * 10}

    run_blocking(conninfo, queue, handler, lambda ev: len(ev["done"]) == 2 and len(ev["failed"]) == 1)
    waiting.join(120)
    assert answer["statuses"] == [
        JobStatus(ids[0], "done", 1, {"n": 10}, None),
        JobStatus(ids[1], "done", 1, {"n": 20}, None),
        JobStatus(ids[2], "failed", 1, None, "no thumbnail"),
    ]


def test_await_jobs_timeout_is_no_error_and_needs_autocommit_to_wait(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    assert claimqueue.await_jobs(db, [job_id], timeout=0) == [JobStatus(job_id, "ready", 0, None, None)]
    assert [s.state for s in claimqueue.await_jobs(db, [job_id], timeout=0.05)] == ["ready"]
    with pytest.raises(ValueError):
        claimqueue.await_jobs(db, [job_id], timeout=-1)
    with psycopg.connect(conninfo) as conn:            # not autocommit: a transaction
        with pytest.raises(ValueError, match="autocommit"):
            claimqueue.await_jobs(conn, [job_id], timeout=1)
        assert claimqueue.await_jobs(conn, [job_id], timeout=0)[0].state == "ready"


def test_a_result_json_cannot_hold_fails_the_attempt_and_the_worker_goes_on(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 1")
    kinds = ["set", "decimal", "cycle", "nan"]
    ids = claimqueue.enqueue_batch(db, queue, [{"kind": k} for k in kinds])
    later = {}

    def handler(job):
        kind = job.payload["kind"]
        if kind == "set":
            return {1, 2}
        if kind == "decimal":
            return {"price": decimal.Decimal("1.5")}
        if kind == "cycle":
            cycle = []
            cycle.append(cycle)
            return cycle
        if kind == "nan":
            return float("nan")
        return {"fine": True}

    def done(events):
        if len(events["failed"]) == 4 and "id" not in later:
            later["id"] = claimqueue.enqueue(db, queue, {"kind": "plain"})
        return len(events["done"]) == 1

    events = run_blocking(conninfo, queue, handler, done)
    for job_id in ids:
        state, _, last_error, _ = job_row(db, job_id)
        assert state == "failed"
        assert last_error.startswith(f"the result of job {job_id} is not JSON-serialisable: ")
    assert all(isinstance(e.error, TypeError) and e.outcome == "failed" for e in events["failed"])
    assert claimqueue.job_status(db, [later["id"]])[0].result == {"fine": True}
    assert events["error"] == []


def test_a_result_the_server_refuses_fails_the_attempt(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 1")
    job_id = claimqueue.enqueue(db, queue, {})
    small = conninfo + " options='-c claimqueue.max_payload_size=100'"
    events = run_blocking(small, queue, lambda job: {"text": "x" * 500}, lambda ev: ev["failed"])
    state, _, last_error, _ = job_row(db, job_id)
    assert state == "failed"
    assert last_error.startswith(f"the result of job {job_id} was refused: ")
    assert isinstance(events["failed"][0].error, ValueError)
    assert events["error"] == []


def test_async_worker_results_and_the_async_twins(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 1")
    ids = claimqueue.enqueue_batch(db, queue, [{"n": 1}, {"n": 2}, {"bad": True}])

    async def handler(job):
        if job.payload.get("bad"):
            return {"when": dt.datetime.now()}          # a datetime is not JSON
        return [job.payload["n"]]

    async def main():
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            assert [s.state for s in await claimqueue.job_status_async(conn, ids)] == ["ready"] * 3
            waiting = asyncio.create_task(claimqueue.await_jobs_async(conn, ids, timeout=120))
            end = asyncio.get_running_loop().time() + 20
            while awaiting_sessions(db) != 1:
                assert asyncio.get_running_loop().time() < end, "await_jobs_async never waited"
                await asyncio.sleep(0.02)
            events = Events()
            worker = claimqueue.AsyncWorker(conninfo, queue, handler, wait=60, on_event=events,
                                            stop_signals=())
            running = asyncio.create_task(worker.run())
            statuses = await waiting
            worker.stop()
            await asyncio.wait_for(running, 30)
            return statuses, events

    statuses, events = asyncio.run(main())
    assert statuses[:2] == [JobStatus(ids[0], "done", 1, [1], None), JobStatus(ids[1], "done", 1, [2], None)]
    assert statuses[2].state == "failed"
    assert statuses[2].last_error.startswith(f"the result of job {ids[2]} is not JSON-serialisable: ")
    assert events["error"] == []
