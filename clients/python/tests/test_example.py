"""examples/python-worker, for real: it drains a queue, writing each job's effect
in the transaction that completes it, and SIGTERM stops it cleanly."""
import os
import signal
import subprocess
import sys

import claimqueue
from conftest import until

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python-worker", "worker.py")


def test_the_example_worker_drains_the_queue_and_stops_on_sigterm(conninfo, db):
    db.execute("SELECT create_queue('example')")
    db.execute("CREATE TABLE python_effects (job_id bigint, attempt int)")
    ids = claimqueue.enqueue_batch(db, "example", [{"n": n} for n in range(300)])
    env = dict(os.environ, PGDATABASE=conninfo.split("=", 1)[1],
               PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    child = subprocess.Popen([sys.executable, EXAMPLE, "example", "3"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        until(lambda: db.execute("SELECT count(*) FROM queue_jobs WHERE queue = 'example' "
                                 "AND state IN ('ready', 'running')").fetchone()[0] == 0,
              "the queue drained", deadline=120)
        child.send_signal(signal.SIGTERM)
        output, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, output
    assert "python worker completed 300 jobs" in output
    assert db.execute("SELECT count(*), count(DISTINCT job_id) FROM python_effects").fetchone() == (300, 300)
    assert db.execute("""SELECT count(*) FROM queue_jobs j JOIN python_effects e ON e.job_id = j.id
                         WHERE j.state = 'done' AND j.attempt = e.attempt AND j.id = ANY(%s)""",
                      (ids,)).fetchone()[0] == 300
