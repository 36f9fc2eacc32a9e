"""A real PostgreSQL server (Debian's binaries) for the study tests, in a temp folder on a free port."""

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def real_postgres():
    """Yields a SQLAlchemy URL prefix (no database). initdb and postgres refuse root: as root they
    run as Debian's `postgres` user, as the TypeScript helper (test/helpers/temporal-postgres.ts) does."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if not bins:
        raise RuntimeError("PostgreSQL is not installed (Debian's postgresql): run scripts/setup.sh")
    pg = os.path.dirname(bins[-1])
    folder = tempfile.mkdtemp(prefix="ragen-search-pg-")
    data = os.path.join(folder, "data")
    os.mkdir(data)
    demote = None
    if os.getuid() == 0:
        user = pwd.getpwnam("postgres")
        for path in (folder, data):
            os.chown(path, user.pw_uid, user.pw_gid)

        def demote():
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    subprocess.run(
        [f"{pg}/initdb", "-D", data, "-U", "ragen", "-A", "trust", "--no-sync"],
        check=True,
        capture_output=True,
        preexec_fn=demote,
    )
    port = _free_port()
    log = open(os.path.join(folder, "postgres.log"), "w")
    server = subprocess.Popen(
        [f"{pg}/postgres", "-D", data, "-p", str(port), "-k", folder]
        + ["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=demote,
    )
    try:
        deadline = time.monotonic() + 60
        while subprocess.run([f"{pg}/pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not start: {open(log.name).read()[-2000:]}")
            time.sleep(0.2)
        yield f"postgresql+psycopg2://ragen@127.0.0.1:{port}"
    finally:
        # Fast shutdown (SIGINT): SQLAlchemy's pooled connections would hold a smart one (SIGTERM).
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
