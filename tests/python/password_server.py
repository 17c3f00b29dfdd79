"""A Postgres server of a test's own that asks for passwords, for the console's login tests.

The private cluster trusts its own socket (scripts/pg.sh), so a login through it proves nothing
about passwords. :class:`PasswordServer` runs initdb into a temporary directory and starts a server
on a unix socket there (no TCP address: it cannot collide with any other server), whose pg_hba.conf
lets ``postgres`` and the schema owner in by ``trust`` (the test's own set-up), lets the roles of
``trusted`` in by ``trust`` too (the pg_hba line a login must not ride on), and asks every other
role for its scram-sha-256 password. :meth:`deploy` puts the schema in (``agent_state.schema``, the
bundle) with the test roles of tests/pgtap/fixtures/setup.sql, each given ``password(role)``.

Every wait is bounded; :meth:`stop` stops the server (``-m immediate``) and removes the directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from agent_state import schema

PGBIN = Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"))
ROLES = {"tenant_a": "ai_user", "tenant_b": "ai_user", "app_service": "ai_service"}


def _as_owner(*cmd: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.getuid() == 0 else list(cmd)


def password(role: str) -> str:
    """The password a test role has on a PasswordServer."""
    return f"pw-{role}-42!"


class PasswordServer:
    def __init__(self, trusted: tuple[str, ...] = ()):
        self.trusted = trusted
        self.dir = Path(tempfile.mkdtemp(prefix="as-pw-"))  # short: a socket path has at most 107 bytes
        self.data = self.dir / "data"
        self.port = 5432

    def __enter__(self) -> PasswordServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        if not (PGBIN / "initdb").exists():
            raise FileNotFoundError(f"{PGBIN}/initdb is missing (make deps installs postgresql-15)")
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
        subprocess.run(
            _as_owner(str(PGBIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                      "-E", "UTF8", "--locale=C.UTF-8"),
            check=True, stdout=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        trusted = "".join(f"local all {role} trust\n" for role in self.trusted)
        (self.data / "pg_hba.conf").write_text(
            "# a PasswordServer of tests/python/password_server.py\n"
            "local all postgres trust\n"
            f"local all {schema.OWNER} trust\n"
            f"{trusted}"
            "local all all scram-sha-256\n"
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = ''\nunix_socket_directories = '{self.dir}'\nport = {self.port}\n"
                "max_connections = 40\nshared_buffers = 32MB\nfsync = off\nsynchronous_commit = off\n"
                "password_encryption = 'scram-sha-256'\n"
            )
        subprocess.run(
            _as_owner(str(PGBIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
                      "start"),
            check=True, stdout=subprocess.DEVNULL, timeout=90,
        )  # fmt: skip

    def start_pooler(self, roles: tuple[str, ...] = tuple(ROLES)) -> str:
        """A PgBouncer of its own in front of the server (transaction pooling, as
        scripts/pgbouncer.sh), that asks ``roles`` for their scram-sha-256 passwords and logs in to
        the server with them; its connection string (no user, no password)."""
        bouncer = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        run = self.dir / "bouncer"
        run.mkdir()
        (run / "userlist.txt").write_text("".join(f'"{role}" "{password(role)}"\n' for role in roles))
        (run / "pgbouncer.ini").write_text(
            f"[databases]\n* = host={self.dir} port={self.port}\n\n[pgbouncer]\nlisten_addr =\n"
            f"listen_port = {self.port + 1}\nunix_socket_dir = {run}\nauth_type = scram-sha-256\n"
            f"auth_file = {run}/userlist.txt\npool_mode = transaction\ndefault_pool_size = 4\n"
            f"logfile = {run}/pgbouncer.log\npidfile = {run}/pgbouncer.pid\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
        )
        if os.getuid() == 0:
            subprocess.run(["chown", "-R", "postgres:", str(run)], check=True)
        subprocess.run(_as_owner(bouncer, "-d", "-q", str(run / "pgbouncer.ini")), check=True, timeout=60)
        self.pooler_pid = run / "pgbouncer.pid"
        deadline = time.monotonic() + 30
        while not (run / f".s.PGSQL.{self.port + 1}").exists():
            if time.monotonic() > deadline:
                raise TimeoutError("the test's PgBouncer did not start")
            time.sleep(0.05)
        return make_conninfo(host=str(run), port=self.port + 1)

    def stop(self) -> None:
        pid_file = getattr(self, "pooler_pid", None)
        if pid_file is not None and pid_file.exists():
            with contextlib.suppress(OSError, ValueError):  # already gone
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                _as_owner(str(PGBIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "-t", "60", "stop"),
                check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=90,
            )  # fmt: skip
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, user: str = "postgres", dbname: str = "postgres", **more: Any) -> str:
        """A connection string to the server (no password unless given in ``more``)."""
        return make_conninfo(host=str(self.dir), port=self.port, dbname=dbname, user=user, **more)

    def superuser(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(), autocommit=True)

    def add_role(self, role: str, *, group: str | None = None, with_password: bool = True) -> None:
        with self.superuser() as conn:
            conn.execute(sql.SQL("create role {} login").format(sql.Identifier(role)))
            if with_password:
                conn.execute(sql.SQL("alter role {} password {}").format(sql.Identifier(role), password(role)))
            if group:
                conn.execute(sql.SQL("grant {} to {}").format(sql.Identifier(group), sql.Identifier(role)))

    def deploy(self, dbname: str = "agent_state") -> str:
        """The schema in a new database (as the superuser, which deploys as the owner role), the
        test roles of ROLES with their passwords; the database's name."""
        with self.superuser() as conn:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(dbname)))
        with psycopg.connect(self.url(dbname=dbname), autocommit=True) as conn:
            schema.deploy(conn)
            for role, group in ROLES.items():
                conn.execute(
                    sql.SQL("create role {} login password {} in role {}").format(
                        sql.Identifier(role), password(role), sql.Identifier(group)
                    )
                )
        return dbname
