"""enqueue() and enqueue_batch(), blocking and async, in the caller's transaction."""
import asyncio
import datetime as dt

import psycopg
import pytest

import claimqueue


@pytest.fixture(scope="module", autouse=True)
def mail_queue(conninfo):
    with psycopg.connect(conninfo, autocommit=True) as conn:
        claimqueue.admin.create_queue(conn, "mail", max_attempts=3)


def test_enqueue_returns_the_id_of_a_ready_job_with_the_payload(db):
    job_id = claimqueue.enqueue(db, "mail", {"to": "a@example.com", "n": [1, 2]})
    assert isinstance(job_id, int)
    row = db.execute("SELECT state, payload, priority, max_attempts FROM queue_jobs WHERE id = %s",
                     (job_id,)).fetchone()
    assert row == ("ready", {"to": "a@example.com", "n": [1, 2]}, 0, 3)


def test_options_reach_the_server(db):
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)
    job_id = claimqueue.enqueue(db, "mail", {}, run_at=later, priority=7, max_attempts=9, dedup_key="k1")
    row = db.execute("SELECT priority, max_attempts, dedup_key, run_at FROM queue_jobs WHERE id = %s",
                     (job_id,)).fetchone()
    assert row == (7, 9, "k1", later)
    assert claimqueue.enqueue(db, "mail", {"other": True}, dedup_key="k1") == job_id


def test_the_job_commits_and_rolls_back_with_the_callers_transaction(conninfo, db):
    with psycopg.connect(conninfo) as conn:          # not autocommit: enqueue opens a transaction
        kept = claimqueue.enqueue(conn, "mail", {"kept": True})
        conn.commit()
        dropped = claimqueue.enqueue(conn, "mail", {"dropped": True})
        conn.rollback()
    found = db.execute("SELECT id FROM queue_jobs WHERE id IN (%s, %s)", (kept, dropped)).fetchall()
    assert found == [(kept,)]


def test_enqueue_batch_returns_ids_in_payload_order(db):
    ids = claimqueue.enqueue_batch(db, "mail", [{"n": 1}, {"n": 2}, {"n": 3}], priority=-1)
    rows = db.execute("SELECT id, payload->>'n', priority FROM queue_jobs WHERE id = ANY(%s) ORDER BY id",
                      (ids,)).fetchall()
    assert rows == [(ids[0], "1", -1), (ids[1], "2", -1), (ids[2], "3", -1)]


def test_unknown_queue_raises_queue_not_found(db):
    with pytest.raises(claimqueue.QueueNotFoundError) as raised:
        claimqueue.enqueue(db, "nope", {})
    assert raised.value.sqlstate == "QC001"
    assert isinstance(raised.value.__cause__, psycopg.Error)


def test_async_twins(conninfo, db):
    async def main():
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            one = await claimqueue.enqueue_async(conn, "mail", [1, "two"], priority=3)
            many = await claimqueue.enqueue_batch_async(conn, "mail", [{"a": 1}, {"b": 2}])
            with pytest.raises(claimqueue.QueueNotFoundError):
                await claimqueue.enqueue_async(conn, "nope")
            return one, many
    one, many = asyncio.run(main())
    assert db.execute("SELECT payload, priority FROM queue_jobs WHERE id = %s", (one,)).fetchone() == ([1, "two"], 3)
    assert len(many) == 2 and many[0] < many[1]


def test_concurrency_key_reaches_the_server_for_one_job_and_a_batch(conninfo, db):
    one = claimqueue.enqueue(db, "mail", {}, concurrency_key="tenant-7")
    batch = claimqueue.enqueue_batch(db, "mail", [{}, {}], concurrency_key="tenant-8")
    plain = claimqueue.enqueue(db, "mail", {})

    async def twins():
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            return (await claimqueue.enqueue_async(conn, "mail", {}, concurrency_key="tenant-9"),
                    await claimqueue.enqueue_batch_async(conn, "mail", [{}], concurrency_key="tenant-9"))
    async_one, async_batch = asyncio.run(twins())
    ids = [one, *batch, plain, async_one, *async_batch]
    keys = dict(db.execute("SELECT id, concurrency_key FROM queue_jobs WHERE id = ANY(%s)", (ids,)).fetchall())
    assert [keys[i] for i in ids] == ["tenant-7", "tenant-8", "tenant-8", None, "tenant-9", "tenant-9"]
