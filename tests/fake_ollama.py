"""A fake Ollama server for tests: real HTTP on 127.0.0.1, Ollama's wire format.

It answers what the official ``ollama`` client calls for summaries and
checks: ``GET /api/version``, ``GET /api/tags``, ``POST /api/generate`` and
``POST /api/chat``, non-streamed (one JSON object) or streamed (one JSON
object a line), with the fields the real server sends. An unknown model gets
the real server's 404. Every request is recorded so tests can look at the
prompt, and answers can be delayed to provoke client time-outs.

    with FakeOllama(reply="Adds two numbers.") as fake:
        client = ollama.Client(host=fake.url)
        ...
        assert "def add" in fake.prompts()[0]
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RUNNER_CRASHED = "llama runner process has terminated: exit status 2"
DEFAULT_REPLY = "Computes order prices: applies discounts and tax, then rounds to cents."

Reply = str | Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    body: dict[str, Any] | None  # the parsed JSON body, None for GET or a body that is not JSON


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _statistics(prompt: str, answer: str) -> dict[str, Any]:
    """The timing and count fields the real server adds to a finished answer (nanoseconds)."""
    return {
        "total_duration": 1_234_567_890,
        "load_duration": 12_345_678,
        "prompt_eval_count": len(prompt.split()),
        "prompt_eval_duration": 234_567_890,
        "eval_count": len(answer.split()),
        "eval_duration": 987_654_321,
    }


class FakeOllama:
    """A threaded HTTP server on a free port of 127.0.0.1 that answers like Ollama.

    ``reply`` is the text every generation returns, or a function of the
    request body that returns it. ``delay`` seconds pass before each
    generation answers. ``error_status`` makes generations fail with that
    HTTP status; ``malformed`` makes them answer 200 with a body that is not
    JSON.
    """

    def __init__(
        self,
        models: Iterable[str] = ("llama3.2:latest",),
        reply: Reply = DEFAULT_REPLY,
        delay: float = 0.0,
        version: str = "0.6.5",
        error_status: int | None = None,
        malformed: bool = False,
    ) -> None:
        self.models = list(models)
        self.reply = reply
        self.delay = delay
        self.version = version
        self.error_status = error_status
        self.malformed = malformed
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> FakeOllama:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        # A short poll interval makes stop() quick; the default half second adds up over many tests.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-ollama", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        # Wake delayed handlers first so shutting down does not wait for them.
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake Ollama server is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- what it saw -------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def generation_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path in ("/api/generate", "/api/chat")]

    def prompts(self) -> list[str]:
        """The prompt of each generation request (a chat's messages joined), in arrival order."""
        prompts = []
        for request in self.generation_requests():
            body = request.body or {}
            if request.path == "/api/generate":
                prompts.append(str(body.get("prompt", "")))
            else:
                prompts.append("\n".join(str(m.get("content", "")) for m in body.get("messages", [])))
        return prompts

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    # -- behaviour used by the handler ---------------------------------------------------------------------

    def knows(self, model: str) -> bool:
        return model in self.models or (":" not in model and f"{model}:latest" in self.models)

    def answer_for(self, body: dict[str, Any]) -> str:
        return self.reply(body) if callable(self.reply) else self.reply

    def wait_delay(self) -> None:
        if self.delay > 0:
            self._stopping.wait(self.delay)

    def tags(self) -> dict[str, Any]:
        return {
            "models": [
                {
                    "name": name,
                    "model": name,
                    "modified_at": "2025-01-15T10:00:00.000000000Z",
                    "size": 2_019_393_189,
                    "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                    "details": {
                        "parent_model": "",
                        "format": "gguf",
                        "family": "llama",
                        "families": ["llama"],
                        "parameter_size": "3.2B",
                        "quantization_level": "Q4_K_M",
                    },
                }
                for name in self.models
            ]
        }


def _handler_for(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1 keeps connections alive the way httpx expects from the real server.
        protocol_version = "HTTP/1.1"
        server_version = "fake-ollama"

        def log_message(self, format_: str, *args: Any) -> None:
            return  # keep test output clean

        def do_GET(self) -> None:
            fake.record(RecordedRequest("GET", self.path, None))
            if self.path == "/api/version":
                self._send_json(200, {"version": fake.version})
            elif self.path == "/api/tags":
                self._send_json(200, fake.tags())
            elif self.path == "/":
                self._send_text(200, "Ollama is running")
            else:
                self._send_text(404, "404 page not found")

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError as error:
                fake.record(RecordedRequest("POST", self.path, None))
                self._send_json(400, {"error": f"invalid character in request body: {error.msg}"})
                return
            fake.record(RecordedRequest("POST", self.path, body))
            if self.path not in ("/api/generate", "/api/chat"):
                self._send_text(404, "404 page not found")
                return
            model = str(body.get("model", ""))
            if not model:
                self._send_json(400, {"error": "model is required"})
                return
            if not fake.knows(model):
                self._send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
                return
            fake.wait_delay()
            if fake.error_status is not None:
                self._send_json(fake.error_status, {"error": RUNNER_CRASHED})
                return
            if fake.malformed:
                self._send_bytes(200, b"<html>this is not JSON</html>", "application/json; charset=utf-8")
                return
            answer = fake.answer_for(body)
            chat = self.path == "/api/chat"
            if body.get("stream", True):
                self._stream(model, answer, body, chat)
            else:
                self._send_json(200, self._final(model, answer, body, chat, answer))

        # -- answers -----------------------------------------------------------------------------------

        def _final(
            self, model: str, answer: str, body: dict[str, Any], chat: bool, content: str
        ) -> dict[str, Any]:
            prompt = json.dumps(body.get("messages")) if chat else str(body.get("prompt", ""))
            message: dict[str, Any] = {"model": model, "created_at": _now()}
            if chat:
                message["message"] = {"role": "assistant", "content": content}
            else:
                message["response"] = content
            message["done"] = True
            message["done_reason"] = "stop"
            if not chat:
                message["context"] = [128006, 882, 128007, 271]
            message.update(_statistics(prompt, answer))
            return message

        def _stream(self, model: str, answer: str, body: dict[str, Any], chat: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            words = answer.split(" ")
            for position, word in enumerate(words):
                piece = word if position == 0 else " " + word
                part: dict[str, Any] = {"model": model, "created_at": _now()}
                if chat:
                    part["message"] = {"role": "assistant", "content": piece}
                else:
                    part["response"] = piece
                part["done"] = False
                self._write_chunk(json.dumps(part).encode() + b"\n")
            self._write_chunk(json.dumps(self._final(model, answer, body, chat, "")).encode() + b"\n")
            self._write_chunk(b"")

        def _write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            self._send_bytes(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

        def _send_text(self, status: int, text: str) -> None:
            self._send_bytes(status, text.encode(), "text/plain; charset=utf-8")

        def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a time-out test); nothing is listening for the answer

    return Handler
