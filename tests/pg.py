"""A real PostgreSQL server for the team-store tests: Debian's package, a fresh cluster in a temp folder,
listening only on a Unix socket there (no TCP), run as the unprivileged `postgres` user when the tests
run as root, and stopped by its PID."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN_DIRS = [Path(p) for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"))] if \
    Path("/usr/lib/postgresql").is_dir() else []


@dataclass(frozen=True)
class Postgres:
    socket_dir: Path
    port: int
    bin_dir: Path
    as_user: tuple[str, ...]

    def url(self, dbname: str = "lake", user: str = "postgres") -> str:
        return f"ducklake:postgres:dbname={dbname} host={self.socket_dir} port={self.port} user={user}"

    def psql(self, sql: str, dbname: str = "lake") -> str:
        out = subprocess.run([*self.as_user, str(self.bin_dir / "psql"), "-h", str(self.socket_dir), "-p",
                              str(self.port), "-U", "postgres", "-d", dbname, "-v", "ON_ERROR_STOP=1", "-qAtc", sql],
                             capture_output=True, text=True, timeout=60)
        if out.returncode:
            raise RuntimeError(out.stderr)
        return out.stdout


def _binaries() -> Path:
    for d in reversed(BIN_DIRS):
        if (d / "initdb").exists():
            return d
    pytest.fail("PostgreSQL is missing: `make test` installs it (apt-get install postgresql)")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    bin_dir = _binaries()
    # not under pytest's temp folder: that is private to this user, and the server runs as another one
    base = Path(tempfile.mkdtemp(prefix="joulebench-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    as_user: tuple[str, ...] = ()
    if os.geteuid() == 0:  # the server refuses to run as root
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
        as_user = ("runuser", "-u", "postgres", "--")
    subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
                   check=True, capture_output=True, timeout=120)
    port = 54321 + os.getpid() % 1000
    log = open(base / "server.log", "w")
    proc = subprocess.Popen([*as_user, str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(sock),
                             "-c", "listen_addresses="], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (sock / f".s.PGSQL.{port}").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {(base / 'server.log').read_text()[-2000:]}")
            time.sleep(0.1)
        server = Postgres(sock, port, bin_dir, as_user)
        for _ in range(50):  # the socket exists a moment before connections are accepted
            try:
                server.psql("SELECT 1", dbname="postgres")
                break
            except RuntimeError:
                time.sleep(0.1)
        yield server
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # fast shutdown of the server we started, by its PID
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(base, ignore_errors=True)
