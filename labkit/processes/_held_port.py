"""A port the host holds for its HTTP server: bound by the host, served by the server, never free while in use."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import ThreadingMixIn
from typing import Any

from mcp_types import CONNECTION_CLOSED, ErrorData, JSONRPCError

from .._i18n import _
from .._time_limits import scaled
from ._start_errors import exit_status

__all__ = ["HeldPort"]

_MAX_BODY = 1 << 20
_REQUEST_READ_S = 5.0
"""How long the ended server's answer waits for a request's bytes (a connection that sends nothing is closed)."""


class HeldPort:
    """A listening socket on 127.0.0.1 that the host binds and keeps, and its server inherits: how `http_server`
    (notebook 02) starts a lab server.

    A port a server bound itself is free again the moment that server dies: on a machine shared by a room, another
    learner's process could bind it and receive what this host sends to the URL (its secret included), then answer
    in the dead server's name. Held by the host, the port is never free while its URL may be used: a server started
    again serves the same socket, and between the two the host answers on it itself (`answer_ended`) that the
    server has ended. No other socket can share it: it listens all the while it is held, and no socket may bind a
    listening one's port but with SO_REUSEPORT, which it does not set (its SO_REUSEADDR only lets the port be bound
    again at once once it is released, its closed connections waiting out TIME_WAIT).
    """

    def __init__(self, port: int = 0) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind(("127.0.0.1", port))
            self.socket.listen(socket.SOMAXCONN)
        except OSError:
            self.socket.close()
            raise
        self.port: int = self.socket.getsockname()[1]
        self._answering: _EndedServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def fd(self) -> int:
        """The descriptor a server is given (`--fd`): it serves this very socket."""
        return self.socket.fileno()

    def answer_ended(self, server: str, returncode: int | None) -> None:
        """Answer every request on the port, until `stop_answering`, with an error saying `server` has ended.

        A client that reaches the URL gets that account at once (a JSON-RPC error any MCP client shows), not a
        connection left waiting for a server that is gone, nor another process's answers.
        """
        if self._answering is not None:
            return
        status = exit_status(returncode) if returncode is not None else _("exit status ?")
        message = _(
            "The {server!r} server this URL reached has ended ({status}); its host holds the port, "
            "and nothing else answers on it."
        ).format(server=server, status=status)
        self._answering = _EndedServer(self.socket, message)
        self._thread = threading.Thread(
            target=self._answering.serve_forever, args=(0.1,), name=f"labkit-ended-{server}", daemon=True
        )
        self._thread.start()

    def stop_answering(self) -> None:
        """Stop answering on the port (a server is about to serve it again); the socket stays open and listening."""
        if self._answering is not None and self._thread is not None:
            self._answering.shutdown()
            self._thread.join()
        self._answering = self._thread = None

    def close(self) -> None:
        """Release the port: its URL is no longer used."""
        self.stop_answering()
        self.socket.close()


class _EndedServer(ThreadingMixIn, HTTPServer):
    """The standard library's HTTP server on the held socket, answering each request with one JSON-RPC error.

    Each connection is answered in a thread of its own and none is waited for when answering stops: a connection
    that sends nothing (anyone's, on a shared machine) can neither hold up the answers to others nor the server's
    restart, which stops this answering first.
    """

    daemon_threads = True
    block_on_close = False

    def __init__(self, held: socket.socket, message: str) -> None:
        super().__init__(held.getsockname(), _Ended, bind_and_activate=False)
        self.socket.close()
        self.socket = held
        error = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=CONNECTION_CLOSED, message=message))
        self.body = json.dumps(error.model_dump(by_alias=True, mode="json")).encode()

    def server_close(self) -> None:
        """The socket is the held port's, not ours to close."""


class _Ended(BaseHTTPRequestHandler):
    server: _EndedServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(scaled(_REQUEST_READ_S))

    def _read_body(self) -> None:
        with contextlib.suppress(ValueError):  # the body is read, so that the answer is not lost to a reset
            self.rfile.read(min(int(self.headers.get("Content-Length") or 0), _MAX_BODY))

    def _answer(self) -> None:
        self._read_body()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(self.server.body)

    def do_DELETE(self) -> None:
        """A session's end (a client closing it): done, since its server has ended with it. An error here only made
        the SDK's client print "Session termination failed: 503" under the cell of a host that was restarting it."""
        self._read_body()
        self.send_response(204)
        self.send_header("Connection", "close")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the host's own error says what happened."""
