"""A real OpenAI-compatible HTTP server on loopback that serves scripted answers (tests/test_llm.py starts it).

Each POST .../chat/completions takes the next step of the script:

    {"content": "text"}                           200 with a chat completion whose answer is the text
    {"status": 429, "headers": {...}, "body": ""}  that status (and headers, body) instead
    {"raw": "not json"}                            200 with a body that is not a chat completion
    {"delay": 2.0, ...}                            sleep first (for client timeouts)

When the script runs out the server answers 500, so a test that asks more often than it should
fails loudly. Every request is kept in `requests` (headers, lower-cased, and JSON body) for the test to inspect.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    def __init__(self, script: list[dict] | None = None):
        self.script = list(script or [])
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: pytest shows failures, not access logs
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with owner.lock:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    owner.requests.append({"path": self.path, "headers": headers, "json": json.loads(body or b"{}")})
                    step = owner.script.pop(0) if owner.script else {"status": 500, "body": "script exhausted"}
                if step.get("delay"):
                    time.sleep(step["delay"])
                if "content" in step:
                    payload = json.dumps(completion(step["content"], owner.requests[-1]["json"].get("model", "")))
                    self._send(200, payload, {"Content-Type": "application/json"})
                elif "raw" in step:
                    self._send(200, step["raw"], {"Content-Type": "application/json"})
                else:
                    self._send(step["status"], step.get("body", ""), {"Content-Type": "application/json",
                                                                      **step.get("headers", {})})

            def _send(self, status, text, headers):
                data = text.encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(content: str, model: str) -> dict:
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
