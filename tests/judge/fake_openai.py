"""A scripted OpenAI chat-completions server on 127.0.0.1 (stdlib ThreadingHTTPServer).

Each test gives a ``responder(request, n) -> Reply``: ``request`` is the decoded JSON body,
``n`` the 0-based arrival number. The server counts requests, keeps bodies, headers and
arrival times, and tracks the largest number of requests in flight at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_DELAY = 5.0  # every scripted sleep is capped, so no server thread outlives a test for long


@dataclass
class Reply:
    status: int = 200
    content: Any = None  # message text; dicts/lists are JSON-encoded
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | bytes | None = None  # full body instead of a chat-completions object
    usage: dict[str, int] | bool | None = None  # False: no usage field
    trickle: float = 0.0  # seconds between the body's bytes (sent one at a time)
    chunked: bool = False  # Transfer-Encoding: chunked, no Content-Length
    echo_headers: bool = False  # an error body quoting the request's headers (a careless server)


def row_text(request: dict) -> str:
    """The row's inputs: what follows the last 'Inputs:' of the first user message."""
    content = request["messages"][0]["content"]
    return content.rsplit("Inputs:\n", 1)[-1]


def is_correction(request: dict) -> bool:
    return len(request["messages"]) > 1


def tag(request: dict, name: str, default: str | None = None) -> str | None:
    """Value of a ``name=value`` marker in the row's inputs."""
    m = re.search(rf"{name}=([\w.-]+)", row_text(request))
    return m.group(1) if m else default


class FakeOpenAI:
    def __init__(self, responder):
        self.responder = responder
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # request targets, query string included
        self.arrivals: list[float] = []
        self.inflight = 0
        self.max_inflight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if not self.path.split("?", 1)[0].endswith("/chat/completions"):
                    self._send(Reply(status=404, raw='{"error": "not found"}'))
                    return
                body = json.loads(raw)
                with server.lock:
                    n = len(server.requests)
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.paths.append(self.path)
                    server.arrivals.append(time.monotonic())
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    reply = server.responder(body, n)
                    if reply.delay:
                        time.sleep(min(reply.delay, MAX_DELAY))
                    self._send(reply, body)
                finally:
                    with server.lock:
                        server.inflight -= 1

            def _send(self, reply: Reply, request: dict | None = None) -> None:
                if reply.raw is not None:
                    payload = reply.raw
                elif reply.status == 200:
                    content = reply.content
                    if not isinstance(content, str):
                        content = json.dumps(content)
                    obj = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": (request or {}).get("model", "test"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                    }
                    if reply.usage is not False:
                        obj["usage"] = reply.usage or {"prompt_tokens": 100, "completion_tokens": 20,
                                                       "total_tokens": 120}
                    payload = json.dumps(obj)
                else:
                    message = f"status {reply.status}"
                    if reply.echo_headers:
                        message += f"; you sent {dict(self.headers.items())}"
                    payload = json.dumps({"error": {"message": message}})
                data = payload if isinstance(payload, bytes) else payload.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    if reply.chunked:
                        self.send_header("Transfer-Encoding", "chunked")
                    else:
                        self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if reply.trickle:
                        deadline = time.monotonic() + 4 * MAX_DELAY
                        for i in range(len(data)):  # until the client hangs up (or 20 s)
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle)
                            if time.monotonic() > deadline:
                                break
                    elif reply.chunked:
                        step = 1 << 16
                        for i in range(0, len(data), step):
                            part = data[i:i + step]
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default listen backlog of 5 drops bursts of connects (1 s SYN retry)

            def handle_error(self, request, client_address):
                pass  # a client that hangs up mid-reply (the hostile tests) is no news on stderr

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
