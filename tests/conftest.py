"""Real local HTTP servers that stand in for model APIs: scripted replies, recorded requests.

`protocol_server` speaks HTTP/1.1 with keep-alive on 127.0.0.1, so a provider talks to it
exactly as to a remote API. Script the replies per path, point a provider (or a pytester run,
with `--replio-base-url=<url>`) at `server.url`, then read `server.requests`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# httpx imports httpcore on first use and maps its exceptions by class. Imported before any
# in-process pytester run, whose sys.modules cleanup would otherwise unload it and leave later
# runs with timeouts and refused connections that httpx no longer recognises.
import httpcore  # noqa: F401
import pytest


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict or list: JSON; str: text; None: empty
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering, to provoke client timeouts


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # the JSON sent, or the text when it was not JSON
    client_port: int  # the same port on two requests means one reused connection


class ProtocolServer:
    """A threaded HTTP server replaying scripted replies in order, per path."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._replies: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        # A short poll interval: shutdown() waits for the next poll, at every test's teardown.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def reply(
        self,
        path: str,
        body: Any = None,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        times: int = 1,
    ) -> None:
        """Queue a reply for the next `times` requests to `path`."""
        with self._lock:
            reply = Reply(status, body, dict(headers or {}), delay)
            self._replies[path].extend(reply for _ in range(times))

    def requests_to(self, path: str) -> list[Recorded]:
        with self._lock:
            return [request for request in self.requests if request.path == path]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            queue = self._replies.get(request.path)
            if queue:
                return queue.popleft()
        return Reply(404, {"error": f"no scripted reply for {request.method} {request.path}"})


def _handler(server: ProtocolServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real APIs
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = Recorded(self.command, self.path, headers, body, self.client_address[1])
            reply = server._answer(request)
            if reply.delay:
                time.sleep(reply.delay)
            if isinstance(reply.body, str):
                data, kind = reply.body.encode(), "text/plain; charset=utf-8"
            elif reply.body is None:
                data, kind = b"", "text/plain"
            else:
                data, kind = json.dumps(reply.body).encode(), "application/json"
            self.send_response(reply.status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@pytest.fixture
def protocol_server() -> Iterator[ProtocolServer]:
    server = ProtocolServer()
    yield server
    server.close()


@pytest.fixture
def refused_url() -> str:
    """A local URL nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
