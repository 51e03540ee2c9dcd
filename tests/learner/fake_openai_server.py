"""A real local HTTP server speaking the OpenAI chat-completions protocol, with a script.

Tests drive :class:`relic_learner.llm.OpenAIClient` (and through it the official
``openai`` client and its HTTP stack) against this server instead of a mocked client,
so status codes, headers, timeouts and broken bodies travel over a real socket.

The server answers ``POST /v1/chat/completions`` by popping the next action of its
script. Actions are queued with the chainable methods :meth:`FakeOpenAIServer.reply`,
:meth:`~FakeOpenAIServer.slow`, :meth:`~FakeOpenAIServer.status`,
:meth:`~FakeOpenAIServer.malformed` and :meth:`~FakeOpenAIServer.empty`. Every request
it receives is recorded (path, headers, JSON body, arrival time) so a test can count retries and
inspect what was sent. When the script runs out it answers HTTP 500 with a body that
says so, and counts the request in :attr:`FakeOpenAIServer.unscripted`.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclasses.dataclass(frozen=True)
class Action:
    """One scripted answer.

    ``kind`` is ``"reply"``, ``"slow"``, ``"status"``, ``"malformed"`` or ``"empty"``.
    """

    kind: str
    text: str | None = "ok"
    seconds: float = 0.0
    code: int = 200
    retry_after: str | None = None
    prompt_tokens: int = 11
    completion_tokens: int = 7


class FakeOpenAIServer:
    """Scripted chat-completions server on ``127.0.0.1`` (an OS-chosen port).

    Use as a context manager; :attr:`base_url` is what ``OpenAIClient`` takes.
    """

    def __init__(self) -> None:
        self._script: collections.deque[Action] = collections.deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()  # wakes handlers sleeping in a slow action at shutdown
        self.requests: list[dict[str, Any]] = []
        self.unscripted = 0
        # Called with the JSON body when the script is empty: a reply that is a pure
        # function of the request, so a resumed run sees the same answers.
        self.responder: Any = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval lets shutdown() return quickly (the default waits up to 0.5 s).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    # -- lifecycle -------------------------------------------------------------------
    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- script ----------------------------------------------------------------------
    def _push(self, action: Action) -> FakeOpenAIServer:
        with self._lock:
            self._script.append(action)
        return self

    def reply(self, text: str, *, prompt_tokens: int = 11, completion_tokens: int = 7) -> FakeOpenAIServer:
        """Answer 200 with ``text`` as ``choices[0].message.content``."""
        return self._push(Action("reply", text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))

    def slow(self, seconds: float, text: str = "slow reply") -> FakeOpenAIServer:
        """Wait ``seconds`` before answering 200 with ``text`` (the client may give up first)."""
        return self._push(Action("slow", text, seconds=seconds))

    def status(self, code: int, *, retry_after: str | float | None = None) -> FakeOpenAIServer:
        """Answer HTTP ``code`` with an OpenAI-style error body and optional ``Retry-After``."""
        ra = None if retry_after is None else str(retry_after)
        return self._push(Action("status", None, code=code, retry_after=ra))

    def malformed(self) -> FakeOpenAIServer:
        """Answer 200, ``Content-Type: application/json``, with a truncated JSON body."""
        return self._push(Action("malformed", None))

    def empty(self, content: str | None = "") -> FakeOpenAIServer:
        """Answer 200 with empty (``""``) or null (``None``) message content."""
        return self._push(Action("empty", content))

    def _pop(self) -> Action | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    @property
    def pending(self) -> int:
        """Scripted actions not yet consumed."""
        with self._lock:
            return len(self._script)

    # -- HTTP --------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: avoid the 40 ms delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up: nothing left to answer

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server._lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                            "time": time.time()})  # arrival (wall clock, as the rate limiter counts)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, _error_body(f"no route {self.path}", "not_found"))
                    return
                action = server._pop()
                if action is None and server.responder is not None:
                    action = Action("reply", server.responder(body))
                if action is None:
                    with server._lock:
                        server.unscripted += 1
                    self._send(500, _error_body("fake server: script exhausted", "server_error"))
                    return
                model = (body or {}).get("model", "fake-model")
                if action.kind == "slow":
                    server._stop.wait(action.seconds)
                if action.kind in ("reply", "slow", "empty"):
                    payload = _completion_body(model, action)
                    self._send(200, json.dumps(payload).encode())
                elif action.kind == "malformed":
                    self._send(200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"mess')
                else:
                    headers = {"Retry-After": action.retry_after} if action.retry_after is not None else {}
                    self._send(action.code, _error_body(f"scripted HTTP {action.code}", "scripted"), headers)

        return Handler


def _error_body(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": kind}}).encode()


def _completion_body(model: str, action: Action) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": action.text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": action.prompt_tokens,
            "completion_tokens": action.completion_tokens,
            "total_tokens": action.prompt_tokens + action.completion_tokens,
        },
    }
