"""claimqueue.admin and enqueue_batch's per-job options against a real server, called on a
connection with the default search_path (``lib``): queues, schedules, retry and cancel one
job or in bulk, dead letters page by page, a job's record, metrics and stats."""
import datetime as dt

import pytest

import claimqueue
from claimqueue import JobSpec, admin
from conftest import job_row


def test_queues_create_alter_pause_resume_drop(lib, db):
    assert admin.create_queue(lib, "adm_q", lease=dt.timedelta(seconds=45), max_attempts=3,
                              max_running=4, fair=True) is True
    assert admin.create_queue(lib, "adm_q", if_not_exists=True) is False
    with pytest.raises(Exception) as exists:
        admin.create_queue(lib, "adm_q")
    assert getattr(exists.value, "sqlstate", None) == "42710"
    [settings] = admin.queue_settings(lib, "adm_q")
    assert (settings.lease, settings.max_attempts, settings.max_running, settings.fair, settings.paused) == (
        dt.timedelta(seconds=45), 3, 4, True, False)
    admin.alter_queue(lib, "adm_q", max_attempts=7, backoff_base=2.5, max_running=0)
    [settings] = admin.queue_settings(lib, "adm_q")
    assert (settings.max_attempts, settings.backoff_base, settings.max_running, settings.lease) == (
        7, dt.timedelta(seconds=2.5), None, dt.timedelta(seconds=45))
    assert admin.pause_queue(lib, "adm_q") is True
    assert admin.pause_queue(lib, "adm_q") is False
    assert admin.queue_settings(lib, "adm_q")[0].paused is True
    assert admin.resume_queue(lib, "adm_q") is True
    claimqueue.enqueue(lib, "adm_q", {})
    with pytest.raises(Exception) as busy:
        admin.drop_queue(lib, "adm_q")
    assert getattr(busy.value, "sqlstate", None) == "55006"
    assert admin.drop_queue(lib, "adm_q", force=True) == 1
    assert admin.queue_settings(lib, "adm_q") == []
    with pytest.raises(claimqueue.QueueNotFoundError):
        admin.pause_queue(lib, "adm_q")


def test_schedules(lib, db, new_queue):
    queue = new_queue()
    next_run = admin.schedule(lib, "adm_nightly", "0 3 * * *", queue, {"report": True},
                              timezone="Europe/Paris", priority=5)
    assert isinstance(next_run, dt.datetime)
    [s] = admin.schedules(lib, queue)
    assert (s.name, s.cron, s.timezone, s.priority, s.payload, s.enabled) == (
        "adm_nightly", "0 3 * * *", "Europe/Paris", 5, {"report": True}, True)
    assert admin.run_schedules(lib, queue) == 0          # not due yet
    assert s.paused is False
    assert admin.pause_schedule(lib, "adm_nightly") is True
    assert admin.pause_schedule(lib, "adm_nightly") is False
    [p] = admin.schedules(lib, queue)
    assert (p.paused, p.next_run_at) == (True, None)
    assert admin.resume_schedule(lib, "adm_nightly") is True
    assert admin.resume_schedule(lib, "adm_nightly") is False
    [r] = admin.schedules(lib, queue)
    assert r.paused is False and r.next_run_at >= next_run   # the first slot after the resume
    with pytest.raises(claimqueue.ScheduleNotFoundError) as unknown:
        admin.pause_schedule(lib, "adm_no_such")
    assert unknown.value.sqlstate == "QC006" and '"adm_no_such"' in str(unknown.value)
    with pytest.raises(claimqueue.ClaimQueueError) as unknown:
        admin.resume_schedule(lib, "adm_no_such")
    assert unknown.value.sqlstate == "QC006"
    admin.unschedule(lib, "adm_nightly")
    assert admin.schedules(lib, queue) == []
    with pytest.raises(claimqueue.ScheduleNotFoundError) as missing:
        admin.unschedule(lib, "adm_nightly")
    assert missing.value.sqlstate == "QC006"


def fail_now(db, queue, ids):
    """Claims and fails the jobs on their last attempt: dead letters."""
    for job_id in ids:
        row = db.execute("SELECT id, attempt FROM dequeue(%s, 'admin-test')", (queue,)).fetchone()
        db.execute("SELECT fail(%s, %s, 'boom')", (row[0], row[1]))


def test_retry_and_cancel_one_job_and_in_bulk(lib, db, new_queue):
    queue = new_queue("max_attempts => 1")
    ids = claimqueue.enqueue_batch(lib, queue, [{"n": n} for n in range(5)])
    fail_now(db, queue, ids[:3])
    admin.retry(lib, ids[0])
    assert job_row(db, ids[0])[0] == "ready"
    with pytest.raises(claimqueue.JobStateConflictError):
        admin.retry(lib, ids[0])
    assert admin.retry_jobs(lib, queue) == 2
    assert [job_row(db, i)[0] for i in ids[:3]] == ["ready"] * 3
    admin.cancel(lib, ids[3])
    assert job_row(db, ids[3])[0] == "cancelled"
    with pytest.raises(claimqueue.JobNotFoundError):
        admin.cancel(lib, 10 ** 12)
    assert admin.cancel_jobs(lib, queue, max_jobs=2) == 2
    assert admin.cancel_jobs(lib, queue, states=["ready", "running"]) == 2
    assert admin.stats(lib, queue)[0].cancelled == 5


def test_dead_letters_page_by_page_newest_first(lib, db, new_queue):
    queue = new_queue("max_attempts => 1")
    ids = claimqueue.enqueue_batch(lib, queue, [{"n": n} for n in range(7)])
    fail_now(db, queue, ids)
    pages, before = [], None
    while True:
        page = admin.dead_letters(lib, queue, before=before, limit=3)
        if not page:
            break
        pages.append([j.id for j in page])
        before = page[-1].id
    assert pages == [sorted(ids, reverse=True)[i:i + 3] for i in (0, 3, 6)]
    letter = admin.dead_letters(lib, queue, limit=1)[0]
    assert (letter.state, letter.last_error, letter.queue) == ("failed", "boom", queue)
    with pytest.raises(ValueError):
        admin.dead_letters(lib, queue, limit=0)


def test_job_record_status_await_and_metrics(lib, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(lib, queue, {"x": 1}, priority=9, concurrency_key="k1")
    info = admin.job(lib, job_id)
    assert (info.state, info.priority, info.payload, info.concurrency_key) == ("ready", 9, {"x": 1}, "k1")
    assert admin.job(lib, 10 ** 12) is None
    row = db.execute("SELECT id, attempt FROM dequeue(%s, 'admin-test')", (queue,)).fetchone()
    db.execute("SELECT complete(%s, %s, '{\"ok\": true}')", row)
    [status] = claimqueue.await_jobs(lib, [job_id], timeout=5)
    assert (status.state, status.result) == ("done", {"ok": True})
    [m] = admin.metrics(lib, queue)
    assert (m.queue, m.enqueued, m.completed) == (queue, 1, 1)
    [s] = admin.stats(lib, queue)
    assert (s.done, s.ready) == (1, 0)
    assert queue in [q.queue for q in admin.metrics(lib)]


def test_enqueue_batch_with_options_per_job_and_dedup_keys(lib, db, new_queue):
    queue = new_queue()
    later = db.execute("SELECT now() + interval '1 hour'").fetchone()[0]
    live = claimqueue.enqueue(lib, queue, {"first": True}, dedup_key="user-1")
    ids = claimqueue.enqueue_batch(lib, queue, [
        JobSpec({"a": 1}, priority=50, dedup_key="user-1"),       # the live job's id
        JobSpec({"b": 2}, run_at=later, max_attempts=9),
        {"c": 3},                                                  # a bare payload: the batch's options
        JobSpec({"d": 4}, dedup_key="user-2"),
        JobSpec({"e": 5}, dedup_key="user-2"),                     # the job two lines up
    ], priority=-5, concurrency_key="tenant-a")
    assert ids[0] == live and ids[3] == ids[4] and len(set(ids)) == 4
    rows = {r[0]: r[1:] for r in db.execute(
        "SELECT id, priority, max_attempts, run_at > now(), concurrency_key, dedup_key FROM queue_jobs "
        "WHERE id = ANY(%s)", (ids,)).fetchall()}
    assert rows[ids[1]][:4] == (-5, 9, True, "tenant-a")
    assert rows[ids[2]][0] == -5 and rows[ids[2]][2] is False
    assert rows[ids[3]][4] == "user-2"
    # Without per-job options the server's enqueue_batch runs: same answers.
    plain = claimqueue.enqueue_batch(lib, queue, [{"p": 1}, {"p": 2}], priority=3)
    assert [r[0] for r in db.execute("SELECT priority FROM queue_jobs WHERE id = ANY(%s) ORDER BY id",
                                     (plain,)).fetchall()] == [3, 3]


def test_the_async_twins_on_an_async_connection(conninfo, db, new_queue):
    import asyncio

    import psycopg
    from claimqueue import admin_async

    async def main():
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            assert await admin_async.create_queue(conn, "adm_async", max_attempts=1) is True
            assert await admin_async.pause_queue(conn, "adm_async") is True
            assert (await admin_async.queue_settings(conn, "adm_async"))[0].paused is True
            assert await admin_async.resume_queue(conn, "adm_async") is True
            await admin_async.schedule(conn, "adm_async_tick", "@daily", "adm_async")
            assert await admin_async.pause_schedule(conn, "adm_async_tick") is True
            assert (await admin_async.schedules(conn, "adm_async"))[0].paused is True
            assert await admin_async.resume_schedule(conn, "adm_async_tick") is True
            await admin_async.unschedule(conn, "adm_async_tick")
            ids = await claimqueue.enqueue_batch_async(conn, "adm_async", [{"n": 1}, {"n": 2}])
            info = await admin_async.job(conn, ids[0])
            assert (info.state, info.payload) == ("ready", {"n": 1})
            await admin_async.cancel(conn, ids[0])
            assert await admin_async.cancel_jobs(conn, "adm_async") == 1
            letters = await admin_async.dead_letters(conn, "adm_async", states=["cancelled"])
            assert [j.id for j in letters] == sorted(ids, reverse=True)
            assert await admin_async.retry_jobs(conn, "adm_async", states=["cancelled"]) == 2
            [m] = await admin_async.metrics(conn, "adm_async")
            assert (m.enqueued, m.cancelled) == (2, 2)
            assert await admin_async.drop_queue(conn, "adm_async", force=True) == 2
    asyncio.run(main())
