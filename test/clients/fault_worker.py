"""One worker process of the client fault test (run.sh), on the Python library.

    python3 fault_worker.py NAME QUEUE CONCURRENCY LEASE_MS [blocking|asyncio]

The blocking Worker (threads), or the AsyncWorker. Each job writes its effect row in the transaction that
completes it (complete_in_transaction). Payload flags: fail -> the first attempt
raises; slow -> the handler runs past the lease (heartbeats keep it); snooze -> the
first run snoozes (fault_snoozed records it, so once per job); slowpoke -> the first
attempt runs into the queue's timeout and gives up when aborted; stubborn -> the first
attempt ignores its timeout (and, in asyncio, its cancellation) until well after the
grace, then tries to complete: the worker has given the attempt up, so the completion
is refused and its effect rolled back. Prints one line per event ("done 17 1",
"lost 17 2 QC003", "error QC003 ..."), which run.sh counts.
"""
import asyncio
import logging
import sys
import threading
import time

import psycopg

import claimqueue

name, queue, concurrency, lease_ms = sys.argv[1:5]
flavour = sys.argv[5] if len(sys.argv) > 5 else "blocking"
lease = int(lease_ms) / 1000
# Longer than a slow job (1.25 leases); a stubborn attempt outlives it and the grace.
timeout, timeout_grace = lease * 1.5, 0.5
say_lock = threading.Lock()
side = psycopg.connect(f"application_name={name}-side", autocommit=True)
side_lock = threading.Lock()
# The events below are the record; the library's own log shows only errors (on stderr).
logging.getLogger("claimqueue").setLevel(logging.ERROR)


def say(line):
    with say_lock:
        print(line, flush=True)


def first_snooze(job):
    """True the first time this job asks (whichever worker runs it)."""
    with side_lock:
        return side.execute("INSERT INTO fault_snoozed VALUES (%s) ON CONFLICT DO NOTHING RETURNING 1",
                            (job.id,)).fetchone() is not None


def handler(job):
    if job.payload.get("fail") and job.attempt == 1:
        raise RuntimeError("injected failure")
    if job.payload.get("snooze") and first_snooze(job):
        job.snooze(0.05)
    if job.payload.get("slowpoke") and job.attempt == 1:
        job.aborted.wait(timeout * 10)
        raise RuntimeError(f"gave up: {job.abort_reason}")
    if job.payload.get("stubborn") and job.attempt == 1:
        time.sleep(timeout + timeout_grace + 1.0)      # ignores job.aborted, then tries to complete
    else:
        job.aborted.wait(lease * 1.25 if job.payload.get("slow") else (5 + job.id % 10) / 1000)
        if job.aborted.is_set():
            raise RuntimeError("this attempt no longer holds the job")
    with job.complete_in_transaction() as conn:
        conn.execute("INSERT INTO fault_effects (job_id, attempt, worker) VALUES (%s, %s, %s)",
                     (job.id, job.attempt, name))


async def async_handler(job):
    if job.payload.get("fail") and job.attempt == 1:
        raise RuntimeError("injected failure")
    if job.payload.get("snooze") and await asyncio.to_thread(first_snooze, job):
        job.snooze(0.05)
    if job.payload.get("slowpoke") and job.attempt == 1:
        await asyncio.sleep(timeout * 10)              # cancelled at the timeout
    if job.payload.get("stubborn") and job.attempt == 1:
        end = time.monotonic() + timeout + timeout_grace + 1.0
        while time.monotonic() < end:                  # swallows its cancellation, then tries to complete
            try:
                await asyncio.sleep(end - time.monotonic())
            except asyncio.CancelledError:
                pass
    else:
        try:
            await asyncio.wait_for(job.aborted.wait(),
                                   lease * 1.25 if job.payload.get("slow") else (5 + job.id % 10) / 1000)
        except asyncio.TimeoutError:
            pass
        if job.aborted.is_set():
            raise RuntimeError("this attempt no longer holds the job")
    async with job.complete_in_transaction() as conn:
        await conn.execute("INSERT INTO fault_effects (job_id, attempt, worker) VALUES (%s, %s, %s)",
                           (job.id, job.attempt, name))


def on_event(event):
    job = event.job
    if event.kind == "done":
        say(f"done {job.id} {job.attempt}")
    elif event.kind == "failed":
        say(f"failed {job.id} {job.attempt} {event.outcome}")
    elif event.kind == "lost":
        say(f"lost {job.id} {job.attempt} {event.error.sqlstate}")
    elif event.kind == "handed_back":
        say(f"handed_back {job.id} {job.attempt}")
    elif event.kind == "snoozed":
        say(f"snoozed {job.id} {job.attempt}")
    elif event.kind == "timed_out":
        say(f"timed_out {job.id} {job.attempt} {event.outcome}")
    elif event.kind == "error":
        code = getattr(event.error, "sqlstate", None) or "-"
        say(f"error {code} {str(event.error)}".replace("\n", " "))
    elif event.kind == "stopping":
        say("stopping")


say("ready")
options = dict(name=name, concurrency=int(concurrency), lease=lease, grace=1.0, on_event=on_event,
               timeout=timeout, timeout_grace=timeout_grace, on_timeout="retry")
if flavour == "asyncio":
    asyncio.run(claimqueue.AsyncWorker(f"application_name={name}", queue, async_handler, **options).run())
else:
    claimqueue.Worker(f"application_name={name}", queue, handler, **options).run()
say("stopped")
