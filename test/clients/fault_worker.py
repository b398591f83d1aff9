"""One worker process of the client fault test (run.sh), on the Python library.

    python3 fault_worker.py NAME QUEUE CONCURRENCY LEASE_MS [blocking|asyncio]

The blocking Worker (threads), or the AsyncWorker. Each job writes its effect row in the transaction that
completes it (complete_in_transaction). Payload flags: fail -> the first attempt
raises; slow -> the handler runs past the lease (heartbeats keep it). Prints one
line per event ("done 17 1", "lost 17 2 QC003", "error QC003 ..."), which run.sh
counts.
"""
import asyncio
import logging
import sys
import threading

import claimqueue

name, queue, concurrency, lease_ms = sys.argv[1:5]
flavour = sys.argv[5] if len(sys.argv) > 5 else "blocking"
lease = int(lease_ms) / 1000
say_lock = threading.Lock()
# The events below are the record; the library's own log shows only errors (on stderr).
logging.getLogger("claimqueue").setLevel(logging.ERROR)


def say(line):
    with say_lock:
        print(line, flush=True)


def handler(job):
    if job.payload.get("fail") and job.attempt == 1:
        raise RuntimeError("injected failure")
    job.aborted.wait(lease * 1.25 if job.payload.get("slow") else (5 + job.id % 10) / 1000)
    if job.aborted.is_set():
        raise RuntimeError("this attempt no longer holds the job")
    with job.complete_in_transaction() as conn:
        conn.execute("INSERT INTO fault_effects (job_id, attempt, worker) VALUES (%s, %s, %s)",
                     (job.id, job.attempt, name))


async def async_handler(job):
    if job.payload.get("fail") and job.attempt == 1:
        raise RuntimeError("injected failure")
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
    elif event.kind == "error":
        code = getattr(event.error, "sqlstate", None) or "-"
        say(f"error {code} {str(event.error)}".replace("\n", " "))
    elif event.kind == "stopping":
        say("stopping")


say("ready")
options = dict(name=name, concurrency=int(concurrency), lease=lease, grace=1.0, on_event=on_event)
if flavour == "asyncio":
    asyncio.run(claimqueue.AsyncWorker(f"application_name={name}", queue, async_handler, **options).run())
else:
    claimqueue.Worker(f"application_name={name}", queue, handler, **options).run()
say("stopped")
