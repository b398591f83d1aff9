"""The AsyncWorker against a real server: the blocking Worker's checks that
differ in asyncio (tasks, the waiting connection's cancel, cancelling handed-back
handlers). Waits poll with deadlines."""
import asyncio
import time

import psycopg
import pytest

import claimqueue
from conftest import Events, job_row, with_schema


async def until_async(check, what, deadline=20.0):
    end = time.monotonic() + deadline
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"gave up waiting for: {what}")
        await asyncio.sleep(0.02)


def run_worker(conninfo, queue, handler, scenario, **options):
    """Runs the worker and `scenario(worker, events)` together; returns the events."""
    events = Events()

    async def main():
        options.setdefault("wait", 60)
        worker = claimqueue.AsyncWorker(conninfo, queue, handler, on_event=events, stop_signals=(),
                                        **options)
        running = asyncio.create_task(worker.run())
        try:
            await scenario(worker, events)
        finally:
            worker.stop()
            await asyncio.wait_for(running, 30)
    asyncio.run(main())
    return events


def test_constructor_refuses_bad_options(conninfo):
    async def handler(job):
        pass
    for bad in ({"concurrency": 0}, {"lease": -1}, {"grace": "soon"}):
        with pytest.raises(ValueError):
            claimqueue.AsyncWorker(conninfo, "q", handler, **bad)


def test_jobs_run_concurrently_and_complete(conninfo, db, new_queue):
    queue = new_queue()
    ids = claimqueue.enqueue_batch(db, queue, [{"n": n} for n in range(12)])
    state = {"running": 0, "most": 0}

    async def handler(job):
        state["running"] += 1
        state["most"] = max(state["most"], state["running"])
        await until_async(lambda: state["most"] >= 4 or job.payload["n"] >= 8, "four running together")
        state["running"] -= 1

    async def scenario(worker, events):
        await until_async(lambda: len(events["done"]) == 12, "12 jobs done")

    events = run_worker(conninfo, queue, handler, scenario, concurrency=4)
    assert state["most"] == 4
    assert db.execute("SELECT count(*) FROM queue_jobs WHERE id = ANY(%s) AND state = 'done'",
                      (ids,)).fetchone()[0] == 12
    assert events["error"] == []


def test_a_raising_handler_fails_the_attempt(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 2")
    job_id = claimqueue.enqueue(db, queue, {})

    async def handler(job):
        if job.attempt == 1:
            raise RuntimeError("smtp timeout")

    async def scenario(worker, events):
        await until_async(lambda: events["done"], "the retry done")

    events = run_worker(conninfo, queue, handler, scenario)
    [failed] = events["failed"]
    assert (str(failed.error), failed.outcome) == ("smtp timeout", "ready")
    assert job_row(db, job_id)[:3] == ("done", 2, "smtp timeout")


def test_complete_in_transaction_and_qc003(conninfo, db, new_queue):
    queue = new_queue()
    db.execute("CREATE TABLE async_effects (job_id bigint, attempt int)")
    kept, cancelled = claimqueue.enqueue_batch(db, queue, [{"cancel": False}, {"cancel": True}])

    async def handler(job):
        if job.payload["cancel"]:
            db.execute("SELECT cancel(%s)", (job.id,))
        async with job.complete_in_transaction() as conn:
            await conn.execute("INSERT INTO async_effects VALUES (%s, %s)", (job.id, job.attempt))

    async def scenario(worker, events):
        await until_async(lambda: events["done"] and events["lost"], "one done, one lost")

    events = run_worker(conninfo, queue, handler, scenario)
    assert [e.job.id for e in events["done"]] == [kept]
    assert [e.job.id for e in events["lost"]] == [cancelled]
    assert isinstance(events["lost"][0].error, claimqueue.StaleClaimError)
    assert events["lost"][0].job.aborted.is_set()
    assert events["error"] == [] and events["failed"] == []
    assert db.execute("SELECT job_id FROM async_effects").fetchall() == [(kept,)]


def test_heartbeats_keep_a_job_past_its_lease(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    seen = {}

    async def handler(job):
        await until_async(lambda: len(seen["events"]["heartbeat"]) >= 4, "four heartbeats")

    async def scenario(worker, events):
        seen["events"] = events
        await until_async(lambda: events["done"], "the job done")

    events = run_worker(conninfo, queue, handler, scenario, lease=0.6)
    assert job_row(db, job_id)[:2] == ("done", 1)
    assert len(events["heartbeat"]) >= 4


def test_stop_interrupts_the_wait_and_hands_back_after_the_grace_period(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    cancelled = []

    async def handler(job):
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            cancelled.append(job.aborted.is_set())
            raise

    async def scenario(worker, events):
        await until_async(lambda: events["started"], "the handler runs")
        await until_async(lambda: db.execute("SELECT count(*) FROM claimqueue.waiters() WHERE queue = %s",
                                             (queue,)).fetchone()[0] == 1, "the worker waits for more")

    events = run_worker(conninfo, queue, handler, scenario, wait=600, grace=0.1, concurrency=2)
    assert [e.job.id for e in events["handed_back"]] == [job_id]
    assert cancelled == [True], "the handed-back handler's task was cancelled after aborted was set"
    assert job_row(db, job_id)[0] == "ready"
    # Handed back with snooze: the attempt is not spent (max_attempts grows by one).
    assert db.execute("SELECT attempt, max_attempts FROM queue_jobs WHERE id = %s",
                      (job_id,)).fetchone() == (1, 6)
    assert db.execute("SELECT count(*) FROM claimqueue.waiters()").fetchone()[0] == 0


def test_stop_hands_back_a_claim_under_its_name_that_no_handler_got(conninfo, db, new_queue):
    queue = new_queue()
    busy = claimqueue.enqueue(db, queue, {})
    gate = {}

    async def handler(job):
        gate["finish"] = asyncio.Event()
        await gate["finish"].wait()

    async def scenario(worker, events):
        await until_async(lambda: events["started"], "the only slot is busy")
        orphan = claimqueue.enqueue(db, queue, {})
        assert db.execute("SELECT id FROM dequeue(%s, %s)", (queue, worker.name)).fetchone()[0] == orphan
        gate["orphan"] = orphan
        worker.stop()
        gate["finish"].set()

    events = run_worker(conninfo, queue, handler, scenario, concurrency=1)
    assert [e.job.id for e in events["handed_back"]] == [gate["orphan"]]
    assert job_row(db, busy)[0] == "done"
    assert job_row(db, gate["orphan"])[0] == "ready"


def test_psycopg_async_connection_cancel_is_what_stop_uses(conninfo):
    # The drain relies on cancel() ending a CALL that sleeps: check it directly.
    async def main():
        async with await psycopg.AsyncConnection.connect(with_schema(conninfo), autocommit=True) as conn:
            await conn.execute("SELECT create_queue('cancel_check', if_not_exists => true)")
            call = asyncio.create_task(conn.execute("CALL dequeue_wait('cancel_check', 'w', wait => '10 minutes')"))
            async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as other:
                while (await (await other.execute(
                        "SELECT count(*) FROM claimqueue.waiters() WHERE queue = 'cancel_check'")).fetchone())[0] == 0:
                    await asyncio.sleep(0.02)
            conn.cancel()
            with pytest.raises(psycopg.errors.QueryCanceled):
                await asyncio.wait_for(call, 30)
    asyncio.run(main())


def test_release_on_disconnect_reaches_the_server_and_the_session_outlives_stop(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    gate = {}

    async def handler(job):
        gate["owner"] = db.execute("SELECT owner_session FROM claimqueue.jobs WHERE id = %s",
                                   (job.id,)).fetchone()[0]
        gate["finish"] = asyncio.Event()
        await gate["finish"].wait()

    def waiter_pid():
        return (db.execute("SELECT pid FROM claimqueue.waiters() WHERE queue = %s",
                           (queue,)).fetchone() or [None])[0]

    async def scenario(worker, events):
        await until_async(lambda: events["started"], "the handler runs")
        pid = await until_async(waiter_pid, "the worker waits for more")
        worker.stop()
        # The waiting CALL is cancelled; its session, which owns the running claim, stays.
        await until_async(lambda: waiter_pid() is None, "the wait cancelled")
        gate["session_open"] = db.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                                          (pid,)).fetchone()[0]
        gate["reaped"] = db.execute("SELECT reap(%s)", (queue,)).fetchone()[0]
        gate["finish"].set()

    events = run_worker(conninfo, queue, handler, scenario, release_on_disconnect=True, grace=120,
                        concurrency=2)
    assert gate["owner"] is not None, "claimed with release_on_disconnect"
    assert (gate["session_open"], gate["reaped"]) == (1, 0)
    assert job_row(db, job_id)[:2] == ("done", 1)
    assert db.execute("SELECT owner_session FROM claimqueue.jobs WHERE id = %s", (job_id,)).fetchone()[0] is None
    assert events["lost"] == [] and events["handed_back"] == [] and events["error"] == []
