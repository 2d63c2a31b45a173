"""Fixtures of the store's tests: a private PostgreSQL server for the session, and a fresh database per test.

The server binaries come from the system's PostgreSQL package (CI installs it); without them the tests fail
with a message saying so rather than being skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _pg_bindir() -> Path:
    """The folder with initdb and pg_ctl: on PATH, or Debian's versioned folder (newest version)."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3].split(".")[0])
    )
    if not found:
        pytest.fail(
            "PostgreSQL server binaries (initdb, pg_ctl) not found: install PostgreSQL to run the store's "
            "PostgreSQL tests (Debian/Ubuntu: apt-get install postgresql; .ci/run installs it)",
            pytrace=False,
        )
    return found[-1].parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A private PostgreSQL cluster in a temporary folder on a free loopback port; yields its base URL.

    initdb refuses to run as root, so as root the cluster belongs to the ``postgres`` system user.
    """
    bindir = _pg_bindir()
    root = Path(tempfile.mkdtemp(prefix="evalnb-pg-"))
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    prefix: list[str] = []
    if as_root:
        shutil.chown(root, user="postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    data, log, port = root / "data", root / "server.log", _free_port()

    def pg(*args: str) -> None:
        out = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120, check=False)
        if out.returncode != 0:
            log_text = log.read_text() if log.exists() else ""
            pytest.fail(f"{args[0]} failed: {out.stdout}{out.stderr}\n{log_text}", pytrace=False)

    pg(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    pg(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture()
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh, empty database on the session's server for one test."""
    from sqlalchemy import create_engine

    name = f"t_{uuid.uuid4().hex[:10]}"
    admin = create_engine(f"{pg_server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield f"{pg_server}/{name}"
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()
