"""The package as a user gets it: a wheel built from pyproject.toml (Debian's python3-build,
no network), installed into a fresh virtual environment outside the tree, a worker run from
that install against the server, and ``mypy --strict`` on a typed example, which passes, and
on one that passes ``concurrency="8"``, which it must refuse. (The package's own modules pass
``mypy --strict`` against Debian 12's psycopg_pool 3.1, whose pools are not generic; from 3.2
they are, and a bare ``ConnectionPool`` annotation is then an error under --strict, so the
package itself is not checked here: the example, which uses it, is, on every major.)"""
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import claimqueue
from conftest import SCHEMA

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(HERE)
EXAMPLE = os.path.join(PACKAGE_DIR, "..", "..", "examples", "python-worker", "typed_worker.py")

pytestmark = pytest.mark.skipif(bool(SCHEMA), reason="the package does not depend on the schema: "
                                "python_client runs this test")

BAD = '''from typing import Any

import claimqueue

def handle(job: claimqueue.Job[Any]) -> None:
    pass

claimqueue.Worker("", "emails", handle, concurrency="8").run()
'''


def run(command, **options):
    return subprocess.run(command, capture_output=True, text=True, timeout=300, **options)


def test_the_wheel_installs_in_a_fresh_venv_runs_a_worker_and_type_checks(conninfo, tmp_path):
    # A copy of the package's source: building leaves build/ and *.egg-info behind.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                                       "*.egg-info"))
    built = run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                 str(tmp_path / "dist"), str(source)])
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = list((tmp_path / "dist").glob("claimqueue-1.0.0-py3-none-any.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read("claimqueue-1.0.0.dist-info/METADATA").decode()
    assert "claimqueue/py.typed" in names and "claimqueue/admin.py" in names
    assert any(n.endswith("LICENSE") for n in names)
    for line in ("Version: 1.0.0", r"Requires-Dist: psycopg ?\(?>=3\.1", r"Requires-Dist: psycopg-pool ?\(?>=3\.1",
                 "Classifier: Typing :: Typed", "Project-URL: Changelog", "License: PostgreSQL"):
        assert re.search(line, metadata), line
    assert "## Version policy" in metadata, "the README is the long description"

    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    assert made.returncode == 0, made.stderr
    python = str(venv / "bin" / "python")
    installed = run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", str(wheel)])
    assert installed.returncode == 0, installed.stdout + installed.stderr

    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(EXAMPLE, app / "typed_worker.py")
    (app / "bad.py").write_text(BAD)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PGDATABASE"] = conninfo.split("=", 1)[1]
    where = run([python, "-c", "import claimqueue; print(claimqueue.__file__, claimqueue.__version__)"],
                cwd=app, env=env)
    assert str(venv) in where.stdout and where.stdout.split()[1] == "1.0.0", where.stdout + where.stderr

    worker = run([python, "typed_worker.py"], cwd=app, env=env)
    assert worker.returncode == 0, worker.stdout + worker.stderr
    assert "typed worker: 2 done, 0 failed" in worker.stdout

    mypy = shutil.which("mypy")
    assert mypy, "mypy (Debian's package) is installed by scripts/deps.sh"
    # One cache for both runs: the second checks only its own file.
    cache = ["--cache-dir", str(tmp_path / "mypy-cache")]
    checked = run([mypy, "--strict", *cache, "--python-executable", python, "typed_worker.py"],
                  cwd=app, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    refused = run([mypy, "--strict", *cache, "--python-executable", python, "bad.py"],
                  cwd=app, env=env)
    assert refused.returncode == 1, refused.stdout
    assert 'Argument "concurrency" to "Worker" has incompatible type "str"; expected "int"' in refused.stdout
    print(checked.stdout.strip())
