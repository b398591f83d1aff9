"""A claimqueue worker on the Python library (clients/python), runnable:

    PYTHONPATH=clients/python python3 examples/python-worker/worker.py QUEUE [CONCURRENCY]

Connection settings come from the usual PG* environment variables. Each job's
effect row is written in the transaction that completes the job
(complete_in_transaction): both commit or neither does, so a job whose claim
went stale (QC003) leaves no effect. SIGTERM or SIGINT stops it: no new claims,
running jobs finish (or are handed back after the grace period).
"""
import logging
import sys

import claimqueue

queue = sys.argv[1] if len(sys.argv) > 1 else "default"
concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 4
completed = 0


def handle(job):
    with job.complete_in_transaction() as conn:
        conn.execute("INSERT INTO python_effects (job_id, attempt) VALUES (%s, %s)",
                     (job.id, job.attempt))


def count_completions(event):
    global completed
    if event.kind == "done":
        completed += 1


logging.basicConfig(level=logging.INFO, format="%(message)s")
claimqueue.Worker("", queue, handle, concurrency=concurrency, on_event=count_completions).run()
print(f"python worker completed {completed} jobs")
