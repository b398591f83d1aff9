"""The application's own pool and one worker serving many queues, against a real server:
ConnectionPool and AsyncConnectionPool, each queue its own handler and concurrency, the
pool's connections given back as they came, and a queue the server refuses failing run()
at once with the server's error."""
import asyncio
import threading

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

import claimqueue
from conftest import Events, until


def lent(pool):
    stats = pool.get_stats()
    return stats["pool_size"] - stats["pool_available"]


def test_one_worker_serves_many_queues_over_the_applications_pool(conninfo, db, new_queue):
    emails, reports = new_queue(), new_queue()
    claimqueue.enqueue_batch(db, emails, [{"n": n} for n in range(6)])
    claimqueue.enqueue_batch(db, reports, [{"n": n} for n in range(4)])
    lock = threading.Lock()
    seen = {"emails": [], "reports": []}
    most = {"emails": 0, "reports": 0}
    running = {"emails": 0, "reports": 0}
    two_emails = threading.Barrier(2, timeout=20)

    def handler_for(kind):
        def handle(job):
            with lock:
                running[kind] += 1
                most[kind] = max(most[kind], running[kind])
                seen[kind].append(job.payload["n"])
            if kind == "emails":
                two_emails.wait()      # passes only while two email handlers run together
            with lock:
                running[kind] -= 1
        return handle

    # A pool of the application's: not in autocommit, as applications use them.
    # Its sessions have a statement_timeout, which the waiting connection lifts while it waits.
    with ConnectionPool(conninfo, min_size=1, max_size=5, open=True,
                        kwargs={"options": "-c statement_timeout=5000"}) as pool:
        events = Events()
        worker = claimqueue.Worker(pool, on_event=events, wait=60)
        worker.add_queue(emails, handler_for("emails"), concurrency=2)

        @worker.handles(reports, concurrency=1)
        def report(job):
            handler_for("reports")(job)

        assert worker.queues == [emails, reports] and worker.concurrency == 3
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        until(lambda: len(events["done"]) == 10, "10 jobs done")
        worker.stop()
        thread.join(30)
        assert not thread.is_alive()
        assert sorted(seen["emails"]) == list(range(6)) and sorted(seen["reports"]) == list(range(4))
        assert most == {"emails": 2, "reports": 1}
        assert events["error"] == []
        # Every connection came back to the pool as it was lent: not in autocommit, idle. (The
        # pool counts a connection it is still opening as not available: polled.)
        until(lambda: lent(pool) == 0, "every connection back in the pool")
        with pool.connection() as conn:
            assert conn.autocommit is False
            assert conn.execute("SHOW statement_timeout").fetchone()[0] == "5s"


def test_async_worker_on_an_async_pool_with_two_queues(conninfo, db, new_queue):
    first, second = new_queue(), new_queue()
    claimqueue.enqueue_batch(db, first, [{} for _ in range(5)])
    claimqueue.enqueue_batch(db, second, [{} for _ in range(3)])
    handled = {first: 0, second: 0}

    async def handle(job):
        handled[job.queue] += 1
        return job.queue

    async def main():
        async with AsyncConnectionPool(conninfo, min_size=1, max_size=5, open=False) as pool:
            worker = claimqueue.AsyncWorker(pool)
            worker.add_queue(first, handle, concurrency=3)
            worker.add_queue(second, handle, concurrency=1)
            result = await worker.drain()
            for _ in range(1000):          # a connection the pool is still opening counts as lent
                if lent(pool) == 0:
                    break
                await asyncio.sleep(0.02)
            return result, lent(pool)

    result, still_lent = asyncio.run(main())
    assert result.done == 8 and handled == {first: 5, second: 3}
    assert still_lent == 0


def test_an_unknown_queue_fails_run_at_once_with_the_servers_error(conninfo, new_queue):
    known = new_queue()
    worker = claimqueue.Worker(conninfo, known, lambda job: None)
    worker.add_queue("emials", lambda job: None)
    with pytest.raises(claimqueue.QueueNotFoundError) as raised:
        worker.run()
    assert raised.value.sqlstate == "QC001" and "emials" in str(raised.value)

    async def handler(job):
        pass

    with pytest.raises(claimqueue.QueueNotFoundError):
        asyncio.run(claimqueue.AsyncWorker(conninfo, "emials", handler).run())


def test_a_queue_twice_or_no_queue_is_refused(conninfo):
    worker = claimqueue.Worker(conninfo, "a", lambda job: None)
    with pytest.raises(ValueError):
        worker.add_queue("a", lambda job: None)
    with pytest.raises(ValueError):
        claimqueue.Worker(conninfo).run()
    with pytest.raises(TypeError):
        claimqueue.Worker(psycopg, "a", lambda job: None)


def test_a_pool_too_small_for_the_waiting_connections_is_refused_at_run(conninfo, new_queue):
    first, second = new_queue(), new_queue()
    with ConnectionPool(conninfo, min_size=1, max_size=2, open=True) as pool:
        worker = claimqueue.Worker(pool, first, lambda job: None)
        worker.add_queue(second, lambda job: None)
        with pytest.raises(ValueError) as raised:
            worker.run()
        assert "max_size (2) is too small for 2 queue(s)" in str(raised.value)

    async def handler(job):
        pass

    async def main():
        async with AsyncConnectionPool(conninfo, min_size=1, max_size=1, open=False) as pool:
            await claimqueue.AsyncWorker(pool, first, handler).run()
    with pytest.raises(ValueError):
        asyncio.run(main())
