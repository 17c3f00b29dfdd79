"""Following the primary after a failover (issue 31, items 2 and 3).

Item 2: a client or saver built from a multi-host URL (``host=a,b target_session_attrs=
read-write``) reconnected only to the host it had reached (``conn.info.dsn``: psycopg tries the
hosts itself and keeps the one that answered), so after a failover it kept knocking on the old
primary. Now a lost connection is opened again through the conninfo the user gave, walking
every host. The first host here is a TCP proxy in front of the private server; the test stops
it (the "old primary" is gone: its connections drop and its port refuses), or makes the sessions
opened through it read-only and ends the client's backend (the old primary demoted), and the next
call must reach the second host.

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
import struct
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool
from waiting import wait_until

from agent_state import AsyncClient, Client, RetryPolicy
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

pytestmark = pytest.mark.session_features(
    "a TCP proxy of the test's own in front of the server; default_transaction_read_only on the test's database"
)

ROLE = "tenant_a"
POLICY = RetryPolicy(attempts=20, first_delay=0.05, max_delay=0.5)


#: The startup packet's protocol (3.0), and the requests that may come before it.
_PROTOCOL, _SSL_REQUEST, _GSS_REQUEST = 196608, 80877103, 80877104
_READ_ONLY = b"options\0-c default_transaction_read_only=on\0"


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data


class _Proxy:
    """A TCP listener on 127.0.0.1 that forwards each connection to the server (its unix socket or
    TCP address); ``stop()`` closes the listener and every forwarded connection, as a node that
    died. With ``read_only`` set, the sessions opened through it from then on are read-only (the
    startup packet gets ``options=-c default_transaction_read_only=on``), as on a demoted node."""

    def __init__(self, target: tuple[int, Any]):
        self.family, self.address = target
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.stopped = False
        self.read_only = False
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
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()
            threading.Thread(target=self._client_side, args=(client, upstream), daemon=True).start()

    def _client_side(self, client: socket.socket, upstream: socket.socket) -> None:
        """The startup packet (after an SSL or GSS request the server declines), rewritten when
        read-only; then everything as it comes."""
        try:
            while True:
                head = _recv_exactly(client, 8)
                if not head:
                    break
                length, code = struct.unpack("!ii", head)
                body = _recv_exactly(client, length - 8)
                if code == _PROTOCOL and self.read_only:
                    body = body[:-1] + _READ_ONLY + b"\0"
                    head = struct.pack("!ii", 8 + len(body), code)
                upstream.sendall(head + body)
                if code not in (_SSL_REQUEST, _GSS_REQUEST):
                    break
        except OSError:
            pass
        self._pump(client, upstream)

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
    # sslmode=disable: the proxy reads (and, read-only, rewrites) the startup packet, which TLS would
    # hide; a server with ssl on (a Citus formation's nodes) would otherwise take up the proxy's
    # SSLRequest and the proxy would wait on the handshake as a packet (one server's unix socket
    # declines SSL, so nothing changes there)
    params.update(
        host=f"127.0.0.1,{host}", port=f"{proxy.port},{port}", target_session_attrs="read-write", sslmode="disable"
    )
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


def test_a_client_reconnects_past_a_first_host_that_became_read_only(two_hosts: Any, direct_dsn: str) -> None:
    """The node the client reached is demoted (its sessions read-only) and its connections end:
    target_session_attrs=read-write refuses it on the reconnect, which goes on to the next host."""
    url, proxy, port = two_hosts
    thread_id = f"mh-{uuid.uuid4()}"
    with Client.from_conn_string(url, retry=POLICY) as client, psycopg.connect(direct_dsn, autocommit=True) as admin:
        client.create_session(thread_id)
        assert client.source.info.port == proxy.port, "the first host answered"
        proxy.read_only = True
        admin.execute("select pg_terminate_backend(%s::int)", (client.source.info.backend_pid,))
        wait_until(
            lambda: (
                not admin.execute(
                    "select 1 from pg_stat_activity where pid = %s", (client.source.info.backend_pid,)
                ).fetchone()
            ),
            "the client's backend ended",
        )
        with psycopg.connect(
            make_conninfo(url, host="127.0.0.1", port=str(proxy.port), target_session_attrs="any")
        ) as through_first:
            assert through_first.execute("show transaction_read_only").fetchone() == ("on",), (
                "the first host is read-only"
            )
        assert client.append_message(thread_id, "user", "after the demotion").inserted
        assert str(client.source.info.port) == port, "reconnected to the writable host"


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


@pytest.mark.parametrize("source", ["connection", "pool"])
def test_a_write_refused_as_read_only_reconnects_until_the_server_is_writable(direct_dsn: str, source: str) -> None:
    """Any call (record_event is never retried after an unknown outcome) is tried again after
    25006, on a connection ``target_session_attrs=read-write`` accepts only once the database is
    writable (a pool's read-only connections are closed, and it opens others); the event is
    recorded once."""
    url = dsn_as(direct_dsn, ROLE)
    read_write = make_conninfo(url, target_session_attrs="read-write")
    thread_id = f"ro-{uuid.uuid4()}"
    with Client.from_conn_string(url) as setup:
        setup.create_session(thread_id)
    pool: ConnectionPool | None = None
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        database = admin.execute("select current_database()").fetchone()[0]  # type: ignore[index]
        admin.execute(f'alter database "{database}" set default_transaction_read_only = on')
        try:
            retries = _Retries()
            if source == "pool":  # its connections are opened read-only (a URL without target_session_attrs)
                pool = ConnectionPool(url, min_size=1, max_size=2, kwargs={"autocommit": True}, open=True)
                pool.wait()
                client = Client(pool, retry=POLICY)
            else:
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
        print(
            f"\n[read-only window, {source}] first acknowledged write {outcome['at'] - writable:.3f} s after writable"
        )
        events = [e for e in client.get_events(thread_id) if e.kind == "after_failover"]
        assert len(events) == 1, "written once"
        if pool is not None:
            pool.close()
        else:
            assert read_only.closed and client.source is not read_only, "the read-only connection was dropped"
            client.source.close()  # type: ignore[union-attr]
