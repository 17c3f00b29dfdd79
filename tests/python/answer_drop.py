"""A proxy that loses an answer after the server committed: the tests of lost answers share it.

``AnswerDrop(direct_dsn)`` listens on 127.0.0.1 and forwards every connection to the server (its
Unix socket, or its TCP address). ``arm(marker)`` dooms the next statement whose text holds
``marker`` (``"ai.claim_jobs("``): the proxy forwards it, holds back everything the server
answers, and when that answer is whole (ReadyForQuery, which an autocommit statement sends only
after its commit) it closes both sides of that connection without passing a byte of it on. So
the statement committed and its caller saw the connection drop: the case a retry must survive.
``dropped`` is set then. A connection opened afterwards is forwarded as any other.

Nothing here sleeps: the caller waits on ``dropped`` (or on its own call's outcome).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

#: ReadyForQuery, idle: what the server sends once an autocommit statement has committed.
_READY_IDLE = b"Z" + struct.pack("!I", 5) + b"I"


class AnswerDrop:
    def __init__(self, direct_dsn: str) -> None:
        with psycopg.connect(direct_dsn, autocommit=True) as conn:
            host, port = conn.info.host, conn.info.port
        self._target: tuple[int, Any] = (
            (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}") if host.startswith("/") else (socket.AF_INET, (host, port))
        )
        self._dsn = direct_dsn
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._marker: bytes | None = None
        self.dropped = threading.Event()
        self._closing = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="answer-drop").start()

    def dsn(self, user: str) -> str:
        """The database of ``direct_dsn`` as ``user``, through this proxy."""
        params: dict[str, Any] = conninfo_to_dict(self._dsn)
        params.update(host="127.0.0.1", port=str(self.port), user=user, sslmode="disable")
        params.pop("hostaddr", None)
        return make_conninfo(**params)

    def arm(self, marker: str) -> None:
        """Drop the answer of the next statement whose text holds ``marker``."""
        with self._lock:
            self._marker = marker.encode()
            self.dropped.clear()

    def close(self) -> None:
        self._closing = True
        for s in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                s.close()

    def __enter__(self) -> AnswerDrop:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.socket(self._target[0], socket.SOCK_STREAM)
            server.connect(self._target[1])
            self._sockets += [client, server]
            doomed = threading.Event()
            threading.Thread(target=self._up, args=(client, server, doomed), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, doomed), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, doomed: threading.Event) -> None:
        """Client to server: everything, noting the statement to doom."""
        try:
            while data := client.recv(65536):
                with self._lock:
                    if self._marker is not None and self._marker in data:
                        self._marker = None
                        doomed.set()
                server.sendall(data)
        except OSError:
            pass
        finally:
            _shut(server)

    def _down(self, server: socket.socket, client: socket.socket, doomed: threading.Event) -> None:
        """Server to client: everything, except the doomed statement's answer, held back until
        it is whole, then the connection is closed on both sides."""
        held = b""
        try:
            while data := server.recv(65536):
                if doomed.is_set():
                    held += data
                    if held.endswith(_READY_IDLE):
                        _shut(client)
                        _shut(server)
                        self.dropped.set()
                        return
                    continue
                client.sendall(data)
        except OSError:
            pass
        finally:
            _shut(client)


def _shut(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
