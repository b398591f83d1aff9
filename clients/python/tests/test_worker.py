"""The blocking Worker against a real server: claims, completion, failure, QC003,
heartbeats, stop() and its grace, hand-back, SIGTERM. Waits poll with deadlines."""
import os
import signal
import subprocess
import sys
import threading

import pytest

import claimqueue
from conftest import Events, job_row, until


def start(worker):
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    return thread


def stop(worker, thread):
    worker.stop()
    thread.join(30)
    assert not thread.is_alive(), "run() returned after stop()"


def make_worker(conninfo, queue, handler, **options):
    events = Events()
    options = {"wait": 60, "on_event": events, **options}
    return claimqueue.Worker(conninfo, queue, handler, **options), events


def test_constructor_refuses_bad_options(conninfo):
    for bad in ({"concurrency": 0}, {"concurrency": 1.5}, {"lease": 0}, {"grace": -1}, {"wait": "long"}):
        with pytest.raises(ValueError):
            claimqueue.Worker(conninfo, "q", lambda job: None, **bad)
    with pytest.raises(TypeError):
        claimqueue.Worker(conninfo, "q", "not callable")


def test_every_job_is_handled_once_and_completed(conninfo, db, new_queue):
    queue = new_queue()
    ids = claimqueue.enqueue_batch(db, queue, [{"n": n} for n in range(25)])
    handled, lock = [], threading.Lock()

    def handler(job):
        with lock:
            handled.append(job.payload["n"])

    worker, events = make_worker(conninfo, queue, handler, concurrency=3)
    thread = start(worker)
    until(lambda: len(events["done"]) == 25, "25 jobs done")
    stop(worker, thread)
    assert sorted(handled) == list(range(25))
    assert db.execute("SELECT count(*) FROM queue_jobs WHERE id = ANY(%s) AND state = 'done' AND attempt = 1",
                      (ids,)).fetchone()[0] == 25
    assert events["error"] == []
    assert sum(len(e.jobs) for e in events["claimed"]) == 25
    assert [e.kind for e in events["stopped"]] == ["stopped"]


def test_a_raising_on_event_breaks_neither_the_job_nor_the_worker(conninfo, db, new_queue):
    queue = new_queue()
    ids = claimqueue.enqueue_batch(db, queue, [{}, {}])
    events = Events()

    def on_event(event):
        events(event)
        if event.kind in ("started", "done"):
            raise RuntimeError("hook bug")

    worker = claimqueue.Worker(conninfo, queue, lambda job: None, wait=60, on_event=on_event)
    thread = start(worker)
    until(lambda: len(events["done"]) == 2, "both jobs done")
    stop(worker, thread)
    assert db.execute("SELECT count(*) FROM queue_jobs WHERE id = ANY(%s) AND state = 'done'",
                      (ids,)).fetchone()[0] == 2
    assert events["failed"] == []


def test_up_to_concurrency_handlers_run_at_once_never_more(conninfo, db, new_queue):
    queue = new_queue()
    claimqueue.enqueue_batch(db, queue, [{"n": n} for n in range(9)])
    lock = threading.Lock()
    counts = {"running": 0, "most": 0}
    three_at_once = threading.Barrier(3, timeout=20)

    def handler(job):
        with lock:
            counts["running"] += 1
            counts["most"] = max(counts["most"], counts["running"])
        three_at_once.wait()           # passes only while three handlers run together
        with lock:
            counts["running"] -= 1

    worker, events = make_worker(conninfo, queue, handler, concurrency=3)
    thread = start(worker)
    until(lambda: len(events["done"]) == 9, "9 jobs done")
    stop(worker, thread)
    assert counts["most"] == 3
    assert all(len(e.jobs) <= 3 for e in events["claimed"])


def test_a_raising_handler_fails_the_attempt_and_the_retry_completes_it(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 2")
    job_id = claimqueue.enqueue(db, queue, {})

    def handler(job):
        if job.attempt == 1:
            raise RuntimeError("smtp timeout")

    worker, events = make_worker(conninfo, queue, handler)
    thread = start(worker)
    until(lambda: len(events["done"]) == 1, "the retry done")
    stop(worker, thread)
    [failed] = events["failed"]
    assert (failed.job.id, str(failed.error), failed.outcome) == (job_id, "smtp timeout", "ready")
    assert job_row(db, job_id) == ("done", 2, "smtp timeout", worker.name)


def test_the_last_attempts_raise_leaves_the_job_failed(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 1")
    job_id = claimqueue.enqueue(db, queue, {})

    def handler(job):
        raise ValueError("bad payload")

    worker, events = make_worker(conninfo, queue, handler)
    thread = start(worker)
    until(lambda: len(events["failed"]) == 1, "the failure recorded")
    stop(worker, thread)
    assert events["failed"][0].outcome == "failed"
    assert job_row(db, job_id)[0] == "failed"


def test_complete_in_transaction_commits_the_effects_with_the_completion(conninfo, db, new_queue):
    queue = new_queue()
    db.execute("CREATE TABLE effects_ok (job_id bigint, attempt int)")
    ids = claimqueue.enqueue_batch(db, queue, [{}, {}, {}])

    def handler(job):
        with job.complete_in_transaction() as conn:
            conn.execute("INSERT INTO effects_ok VALUES (%s, %s)", (job.id, job.attempt))

    worker, events = make_worker(conninfo, queue, handler, concurrency=2)
    thread = start(worker)
    until(lambda: len(events["done"]) == 3, "3 jobs done")
    stop(worker, thread)
    assert db.execute("""SELECT count(*) FROM effects_ok e JOIN queue_jobs j ON j.id = e.job_id
                         WHERE j.state = 'done' AND j.attempt = e.attempt AND j.id = ANY(%s)""",
                      (ids,)).fetchone()[0] == 3
    assert events["error"] == []


def test_a_raise_inside_complete_in_transaction_rolls_back_and_fails(conninfo, db, new_queue):
    queue = new_queue("lease => '30 seconds', max_attempts => 1")
    db.execute("CREATE TABLE effects_rolled_back (job_id bigint)")
    job_id = claimqueue.enqueue(db, queue, {})

    def handler(job):
        with job.complete_in_transaction() as conn:
            conn.execute("INSERT INTO effects_rolled_back VALUES (%s)", (job.id,))
            raise RuntimeError("half way")

    worker, events = make_worker(conninfo, queue, handler)
    thread = start(worker)
    until(lambda: len(events["failed"]) == 1, "the failure recorded")
    stop(worker, thread)
    assert db.execute("SELECT count(*) FROM effects_rolled_back").fetchone()[0] == 0
    assert job_row(db, job_id)[:3] == ("failed", 1, "half way")


def test_qc003_is_a_lost_attempt_not_an_error(conninfo, db, new_queue):
    queue = new_queue()
    db.execute("CREATE TABLE effects_lost (job_id bigint)")
    job_id = claimqueue.enqueue(db, queue, {})
    raised = []

    def handler(job):
        db.execute("SELECT cancel(%s)", (job.id,))     # the job is cancelled under the handler
        try:
            with job.complete_in_transaction() as conn:
                conn.execute("INSERT INTO effects_lost VALUES (%s)", (job.id,))
        except claimqueue.StaleClaimError as err:
            raised.append(err)
            raise

    worker, events = make_worker(conninfo, queue, handler)
    thread = start(worker)
    until(lambda: len(events["lost"]) == 1, "the lost attempt reported")
    stop(worker, thread)
    assert raised and raised[0].sqlstate == "QC003"
    assert events["lost"][0].job.aborted.is_set()
    assert events["failed"] == [] and events["error"] == [] and events["done"] == []
    assert db.execute("SELECT count(*) FROM effects_lost").fetchone()[0] == 0
    assert job_row(db, job_id)[0] == "cancelled"


def test_a_heartbeat_that_finds_the_claim_stale_sets_aborted(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})

    def handler(job):
        db.execute("SELECT cancel(%s)", (job.id,))
        assert job.aborted.wait(20), "the heartbeat noticed"

    worker, events = make_worker(conninfo, queue, handler, lease=0.3)
    thread = start(worker)
    until(lambda: len(events["lost"]) == 1 and worker.running == 0, "the heartbeat found the claim stale")
    stop(worker, thread)
    assert len(events["lost"]) == 1
    assert events["error"] == [] and events["failed"] == [] and events["done"] == []
    assert job_row(db, job_id)[0] == "cancelled"


def test_heartbeats_keep_a_job_past_the_queues_lease(conninfo, db, new_queue):
    queue = new_queue("lease => '600 milliseconds'")
    job_id = claimqueue.enqueue(db, queue, {})
    first_expiry = []

    def handler(job):
        first_expiry.append(job.lease_expires_at)
        until(lambda: len(events["heartbeat"]) >= 4, "four heartbeats")

    worker, events = make_worker(conninfo, queue, handler)
    thread = start(worker)
    until(lambda: len(events["done"]) == 1, "the job done")
    stop(worker, thread)
    assert job_row(db, job_id)[:2] == ("done", 1)       # attempt 1: never reaped
    assert events["heartbeat"][-1].lease_expires_at > first_expiry[0]


def test_stop_interrupts_a_sleeping_dequeue_wait(conninfo, db, new_queue):
    queue = new_queue()
    worker, events = make_worker(conninfo, queue, lambda job: None, wait=600)
    thread = start(worker)

    def waiting():
        return db.execute("SELECT count(*) FROM claimqueue.waiters() WHERE queue = %s", (queue,)).fetchone()[0]

    until(lambda: waiting() == 1, "the worker sleeps in dequeue_wait")
    stop(worker, thread)                 # within the deadline, long before the 10-minute wait
    assert waiting() == 0
    assert events["error"] == []


def test_a_roles_statement_timeout_does_not_cut_the_wait_short(conninfo, db, new_queue):
    queue = new_queue()
    worker, events = make_worker(conninfo + " options='-c statement_timeout=200'", queue,
                                 lambda job: None, wait=10)
    thread = start(worker)
    # With the timeout in force the CALL would end at 200 ms and every wait would be young.
    until(lambda: db.execute("SELECT count(*) FROM claimqueue.waiters() WHERE queue = %s "
                             "AND now() - since > interval '600 ms'", (queue,)).fetchone()[0] == 1,
          "a wait older than the statement timeout")
    claimqueue.enqueue(db, queue, {})
    until(lambda: events["done"], "the job done")
    stop(worker, thread)
    assert events["error"] == []


def test_a_terminated_waiting_connection_is_reported_and_replaced(conninfo, db, new_queue):
    queue = new_queue()
    worker, events = make_worker(conninfo, queue, lambda job: None, retry_delay=0.05)
    thread = start(worker)

    def waiter_pid():
        row = db.execute("SELECT pid FROM claimqueue.waiters() WHERE queue = %s", (queue,)).fetchone()
        return row and row[0]

    first = until(waiter_pid, "the worker waits")
    db.execute("SELECT pg_terminate_backend(%s)", (first,))
    until(lambda: waiter_pid() not in (None, first), "a new waiting connection")
    claimqueue.enqueue(db, queue, {})
    until(lambda: events["done"], "the job done through the new connection")
    stop(worker, thread)
    assert len(events["error"]) >= 1, "the lost connection was reported"
    assert all(getattr(e.error, "sqlstate", None) != "QC003" for e in events["error"])


def test_stop_lets_running_handlers_finish_within_the_grace_period(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    finish = threading.Event()
    worker, events = make_worker(conninfo, queue, lambda job: finish.wait(30), grace=60)
    thread = start(worker)
    until(lambda: events["started"], "the handler runs")
    worker.stop()
    until(lambda: events["stopping"], "stopping")
    finish.set()
    thread.join(30)
    assert not thread.is_alive()
    assert job_row(db, job_id)[0] == "done"
    assert events["handed_back"] == []


def test_after_the_grace_period_a_running_job_is_handed_back(conninfo, db, new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    release = threading.Event()
    worker, events = make_worker(conninfo, queue, lambda job: release.wait(30), grace=0.1)
    thread = start(worker)
    until(lambda: events["started"], "the handler runs")
    stop(worker, thread)
    job = events["started"][0].job
    assert [e.job.id for e in events["handed_back"]] == [job_id]
    assert job.aborted.is_set()
    assert job_row(db, job_id)[0] == "ready"
    assert db.execute("SELECT run_at <= now() FROM queue_jobs WHERE id = %s", (job_id,)).fetchone()[0]
    # Handed back with snooze: the attempt is not spent (max_attempts grows by one).
    assert db.execute("SELECT attempt, max_attempts FROM queue_jobs WHERE id = %s",
                      (job_id,)).fetchone() == (1, 6)
    with pytest.raises(claimqueue.StaleClaimError):
        with job.complete_in_transaction():
            pass
    release.set()


def test_stop_hands_back_a_claim_under_its_name_that_no_handler_got(conninfo, db, new_queue):
    queue = new_queue()
    busy = claimqueue.enqueue(db, queue, {})
    finish = threading.Event()
    worker, events = make_worker(conninfo, queue, lambda job: finish.wait(30), concurrency=1)
    thread = start(worker)
    until(lambda: events["started"], "the only slot is busy, so the worker claims nothing")
    # What a claim committing just as its CALL is cancelled leaves behind.
    orphan = claimqueue.enqueue(db, queue, {})
    assert db.execute("SELECT id FROM dequeue(%s, %s)", (queue, worker.name)).fetchone()[0] == orphan
    worker.stop()
    finish.set()
    thread.join(30)
    assert [e.job.id for e in events["handed_back"]] == [orphan]
    assert job_row(db, busy)[0] == "done"
    assert job_row(db, orphan)[0] == "ready"


@pytest.mark.parametrize("flavour", ["blocking", "asyncio"])
def test_sigterm_drains_and_the_process_exits_0(conninfo, db, new_queue, flavour):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    script = os.path.join(os.path.dirname(__file__), "fixtures", "sigterm_worker.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    child = subprocess.Popen([sys.executable, script, conninfo, queue, flavour], env=env,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGTERM)
        output = child.stdout.read()
        assert child.wait(30) == 0
    finally:
        if child.poll() is None:
            child.kill()
    assert "stopping" in output and f"done {job_id}" in output
    assert job_row(db, job_id)[0] == "done"


def owner_session(db, job_id):
    return db.execute("SELECT owner_session FROM claimqueue.jobs WHERE id = %s", (job_id,)).fetchone()[0]


def test_release_on_disconnect_reaches_the_server_and_is_off_by_default(conninfo, db, new_queue):
    queue = new_queue()
    tied = claimqueue.enqueue(db, queue, {})
    finish = threading.Event()
    worker, events = make_worker(conninfo, queue, lambda job: finish.wait(30), release_on_disconnect=True)
    thread = start(worker)
    until(lambda: events["started"], "the handler runs")
    assert owner_session(db, tied) is not None, "claimed with release_on_disconnect"
    finish.set()
    until(lambda: events["done"], "the job done")
    stop(worker, thread)
    assert owner_session(db, tied) is None, "complete clears the owner"

    plain = claimqueue.enqueue(db, queue, {})
    owners = []
    worker, events = make_worker(conninfo, queue, lambda job: owners.append(owner_session(db, job.id)))
    thread = start(worker)
    until(lambda: events["done"], "the second job done")
    stop(worker, thread)
    assert owners == [None], "a plain claim has no owner"
    assert job_row(db, plain)[0] == "done"


def test_release_on_disconnect_the_claiming_session_outlives_stop_until_the_grace_ends(conninfo, db,
                                                                                         new_queue):
    queue = new_queue()
    job_id = claimqueue.enqueue(db, queue, {})
    finish = threading.Event()
    worker, events = make_worker(conninfo, queue, lambda job: finish.wait(60), release_on_disconnect=True,
                                 grace=120, concurrency=2)
    thread = start(worker)
    until(lambda: events["started"], "the handler runs")
    waiter_pid = lambda: (db.execute("SELECT pid FROM claimqueue.waiters() WHERE queue = %s",  # noqa: E731
                                     (queue,)).fetchone() or [None])[0]
    pid = until(waiter_pid, "the worker waits for more")
    worker.stop()
    # The waiting CALL is cancelled; its session, which owns the running claim, stays.
    until(lambda: waiter_pid() is None, "the wait cancelled")
    assert db.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0] == 1
    assert db.execute("SELECT reap(%s)", (queue,)).fetchone()[0] == 0
    finish.set()
    thread.join(30)
    assert not thread.is_alive()
    assert job_row(db, job_id)[:2] == ("done", 1)
    assert events["lost"] == [] and events["handed_back"] == [] and events["error"] == []
