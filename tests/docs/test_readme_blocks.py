"""Every code block of the README runs as the docs' blocks do (`snippets.py` says how).

The provider snippets cannot work offline: their URLs point at a local server that refuses
every request as a wrong key would (401), and each must then fail saying so
(`<!-- offline-error: auth_error -->`), never print an empty line and exit 0.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .snippets import ROOT, blocks
from .test_snippets import run_blocks

README = ROOT / "README.md"


class _Refuse(BaseHTTPRequestHandler):
    """Answers every request as OpenAI, Anthropic or Ollama do a wrong key: 401."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"type": "error", "error": {
            "type": "authentication_error", "code": "invalid_api_key",
            "message": "Incorrect API key provided."}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_every_block_of_the_readme_runs_or_says_why_not(
        tmp_path: Path, refusing_server: str) -> None:
    found = blocks(README, ROOT)
    assert sum(1 for b in found if b.error == "auth_error") == 3   # OpenAI, Anthropic, Ollama
    run_blocks(found, tmp_path, {
        "OPENAI_BASE_URL": f"{refusing_server}/v1", "OPENAI_API_KEY": "sk-wrong",
        "ANTHROPIC_BASE_URL": refusing_server, "ANTHROPIC_API_KEY": "sk-ant-wrong",
        "OLLAMA_BASE_URL": f"{refusing_server}/v1"})


def test_every_block_not_run_says_why() -> None:
    for b in blocks(README, ROOT):
        assert b.skip is None or len(b.skip) > 10, f"README.md:{b.line}: say why not"
