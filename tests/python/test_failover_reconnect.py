"""Following the primary after a failover (issue 31, items 2 and 3).

Item 2: a client or saver built from a multi-host URL (``host=a,b target_session_attrs=
read-write``) reconnected only to the host it had reached (``conn.info.dsn``: psycopg tries the
hosts itself and keeps the one that answered), so after a failover it kept knocking on the old
primary. Now a lost connection is opened again through the conninfo the user gave, walking
every host. The first host here is a TCP proxy in front of the private server; the test stops
it (the "old primary" is gone: its connections drop and its port refuses) and the next call must
reach the second host.

Item 3: a write refused as read-only (25006: a standby, or a node the failover has not made
writable yet) is a connection-level condition: nothing was written, so the call (any call,
even one not safe to retry after an unknown outcome) is tried again on a new connection opened
through the conninfo, whose ``target_session_attrs=read-write`` refuses the read-only server
until it is writable. The read-only window is ``default_transaction_read_only`` set on the test's
own database (new sessions only), reset while the client is retrying. The time from writable to
the first acknowledged write is printed (not asserted)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from waiting import wait_until

from agent_state import AsyncClient, Client, RetryPolicy
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

pytestmark = pytest.mark.session_features(
    "a TCP proxy of the test's own in front of the server; default_transaction_read_only on the test's database"
)

ROLE = "tenant_a"
POLICY = RetryPolicy(attempts=20, first_delay=0.05, max_delay=0.5)


class _Proxy:
    """A TCP listener on 127.0.0.1 that forwards each connection to the server (its unix socket or
    TCP address); ``stop()`` closes the listener and every forwarded connection, as a node that
    died."""

    def __init__(self, target: tuple[int, Any]):
        self.family, self.address = target
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.socket(self.family, socket.SOCK_STREAM)
            upstream.connect(self.address)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self.stopped = True
        with contextlib.suppress(OSError):  # the shutdown wakes the accept (a close alone does not, on Linux)
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def _server(dsn: str) -> tuple[str, str, tuple[int, Any]]:
    params = conninfo_to_dict(dsn)
    host = str(params.get("host") or os.environ.get("PGHOST") or "/var/run/postgresql")
    port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
    if host.startswith("/"):
        return host, port, (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}")
    return host, port, (socket.AF_INET, (host, int(port)))


@pytest.fixture
def two_hosts(direct_dsn: str) -> Any:
    """(multi-host URL whose first host is the proxy, the proxy, the server's port)."""
    host, port, target = _server(direct_dsn)
    proxy = _Proxy(target)
    params = conninfo_to_dict(dsn_as(direct_dsn, ROLE))
    params.update(host=f"127.0.0.1,{host}", port=f"{proxy.port},{port}", target_session_attrs="read-write")
    yield make_conninfo(**params), proxy, port
    if not proxy.stopped:
        proxy.stop()


def test_a_client_from_a_multi_host_url_reconnects_to_the_next_host(two_hosts: Any) -> None:
    url, proxy, port = two_hosts
    thread_id = f"mh-{uuid.uuid4()}"
    with Client.from_conn_string(url, retry=POLICY) as client:
        client.create_session(thread_id)
        assert client.source.info.port == proxy.port, "the first host answered"
        proxy.stop()
        assert client.get_session(thread_id).thread_id == thread_id, "a read after the first host died"
        assert str(client.source.info.port) == port, "reconnected to the second host"
        client.append_message(thread_id, "user", "after the failover")


def test_an_async_client_and_a_client_over_a_connection_reconnect_to_the_next_host(two_hosts: Any) -> None:
    url, proxy, port = two_hosts
    thread_id = f"mh-{uuid.uuid4()}"

    async def main() -> None:
        async with AsyncClient.from_conn_string(url, retry=POLICY) as client:
            await client.create_session(thread_id)
            with psycopg.connect(url, autocommit=True) as conn:
                plain = Client(conn, retry=POLICY, conninfo=url)  # psycopg keeps only the host it reached
                assert plain.now() is not None and conn.info.port == proxy.port
                proxy.stop()
                assert (await client.get_session(thread_id)).thread_id == thread_id
                assert str(client.source.info.port) == port
                assert plain.get_session(thread_id).thread_id == thread_id
                assert isinstance(plain.source, psycopg.Connection) and str(plain.source.info.port) == port
                plain.source.close()

    asyncio.run(main())


def test_savers_from_a_multi_host_url_reconnect_to_the_next_host(two_hosts: Any) -> None:
    url, proxy, port = two_hosts
    config: Any = {"configurable": {"thread_id": f"mh-{uuid.uuid4()}", "checkpoint_ns": ""}}
    with AgentStateSaver.from_conn_string(url, retry=POLICY) as saver:

        async def main() -> None:
            async with AsyncAgentStateSaver.from_conn_string(url, retry=POLICY) as asaver:
                assert saver.get_tuple(config) is None and await asaver.aget_tuple(config) is None
                proxy.stop()
                assert saver.get_tuple(config) is None, "a read after the first host died"
                assert await asaver.aget_tuple(config) is None
                assert str(saver.conn.info.port) == port and str(asaver.conn.info.port) == port  # type: ignore[union-attr]

        asyncio.run(main())


class _Retries(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "retrying" in record.getMessage()


def test_a_write_refused_as_read_only_reconnects_until_the_server_is_writable(direct_dsn: str) -> None:
    """Any call (record_event is never retried after an unknown outcome) is tried again after
    25006, on a connection ``target_session_attrs=read-write`` accepts only once the database is
    writable; the event is recorded once."""
    url = dsn_as(direct_dsn, ROLE)
    read_write = make_conninfo(url, target_session_attrs="read-write")
    thread_id = f"ro-{uuid.uuid4()}"
    with Client.from_conn_string(url) as setup:
        setup.create_session(thread_id)
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        database = admin.execute("select current_database()").fetchone()[0]  # type: ignore[index]
        admin.execute(f'alter database "{database}" set default_transaction_read_only = on')
        try:
            retries = _Retries()
            read_only = psycopg.connect(url, autocommit=True)  # a session on a read-only node
            client = Client(read_only, retry=POLICY, conninfo=read_write)
            outcome: dict[str, Any] = {}

            def write() -> None:
                try:
                    outcome["event"] = client.record_event(thread_id, "after_failover", {"n": 1})
                    outcome["at"] = time.monotonic()
                except BaseException as error:
                    outcome["error"] = error

            logging.getLogger("agent_state.client").addHandler(retries)
            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            wait_until(
                lambda: retries.count >= 3 or "error" in outcome,
                "the write refused as read-only and the reconnects refused",
            )
        finally:
            admin.execute(f'alter database "{database}" reset default_transaction_read_only')
            logging.getLogger("agent_state.client").removeHandler(retries)
        writable = time.monotonic()
        writer.join(60)
        assert not writer.is_alive()
        assert "error" not in outcome, outcome.get("error")
        print(f"\n[read-only window] first acknowledged write {outcome['at'] - writable:.3f} s after writable")
        assert read_only.closed and client.source is not read_only, "the read-only connection was dropped"
        events = [e for e in client.get_events(thread_id) if e.kind == "after_failover"]
        assert len(events) == 1, "written once"
        client.source.close()  # type: ignore[union-attr]
