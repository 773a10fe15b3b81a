"""A TCP proxy in front of the test node that holds each request for ``delay`` seconds: a node
that is slow to answer, for the server's deadline and admission tests (the node itself cannot
be made slow on demand)."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit


class SlowProxy:
    """``url`` forwards to ``upstream``; set ``delay`` (seconds) at any time."""

    def __init__(self, upstream: str, delay: float = 0.0) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.delay = delay
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._pipe(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        with socket.create_connection(self.upstream) as node:
            back = threading.Thread(target=_copy, args=(node, client, lambda: 0.0), daemon=True)
            back.start()
            _copy(client, node, lambda: self.delay)
            back.join(timeout=1)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _copy(source: socket.socket, target: socket.socket, delay: Callable[[], float]) -> None:
    """Bytes from ``source`` to ``target``, each chunk held ``delay()`` seconds first."""
    try:
        while chunk := source.recv(65536):
            time.sleep(delay())
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
