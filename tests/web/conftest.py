"""Browser tests: Debian's Chromium, driven by Playwright for Python, against a real
`handoffs serve` process (through a TCP proxy that a test can cut, to drop connections).

No browser is ever downloaded: the tests use the system Chromium (`HANDOFFS_CHROMIUM`,
default /usr/bin/chromium). Every page state they visit is checked with axe-core from the
npm registry (`make axe`, tests/web/axe.py). Without the browser, the playwright package
or axe-core they skip and say why; under `CI=true` that is a failure instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .axe import AXE, assert_accessible

ROOT = Path(__file__).resolve().parents[2]
OPERATOR_KEY = "web-test-operator-key"
TRACE_URL = "http://traces.example/trace/{trace_id}"
"""Where the test server says a turn's trace is (`serve --trace-url`)."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]


def chromium_path() -> str | None:
    path = os.environ.get("HANDOFFS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if os.path.exists(path) else None


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if chromium_path() is None:
        return ("no Chromium at /usr/bin/chromium (HANDOFFS_CHROMIUM to point elsewhere); "
                "`make test` installs Debian's chromium package when run as root")
    if not AXE.is_file():
        return (f"no axe-core at {AXE.relative_to(ROOT)}; `make axe` (a step of `make test`) "
                "installs it from the npm registry")
    return None


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Without a browser the tests skip and say why; under CI=true they run, and the
    `browser` fixture (which every test here uses) fails with the same reason."""
    reason = _missing()
    if reason is None or os.environ.get("CI") == "true":
        return
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {reason}"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Proxy:
    """A TCP proxy in a thread; `cut()` drops every open connection (the server and the
    page both see a dead connection), and new ones are accepted as before."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.port = free_port()
        self.sockets: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                self._close(s)

    def _close(self, s: socket.socket) -> None:
        with self.lock:
            self.sockets.discard(s)
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        s.close()

    def cut(self) -> int:
        """Drop every open connection; how many sockets were open."""
        with self.lock:
            open_now = list(self.sockets)
        for s in open_now:
            self._close(s)
        return len(open_now)

    def close(self) -> None:
        self.listener.close()
        self.cut()


class Served:
    """A `handoffs serve` process: its port, and how to stop it (or kill it)."""

    def __init__(self, target: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        environ = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
                       HANDOFFS_OPERATOR_KEY=OPERATOR_KEY,
                       OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
        environ.pop("HANDOFFS_MODEL", None)
        environ.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "handoffs.cli", "serve", *([target] if target else []),
             *args, "--port", str(self.port), "--log-level", "warning"],
            cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1):
                    break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.proc.kill()
                    out = self.proc.stdout.read().decode() if self.proc.stdout else ""
                    pytest.fail(f"handoffs serve did not start:\n{out}")
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: the process dies mid-whatever, as in a crash."""
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.proc.stdout:
            self.proc.stdout.close()


def start_test_server(*args: str, env: dict[str, str] | None = None) -> Served:
    """A `handoffs serve` of the test team (tests/web/team.py), inspection on."""
    return Served("tests.web.team:make_runner", "--inspect", "--trace-url", TRACE_URL,
                  *args, env=env)


@pytest.fixture(scope="package")
def server() -> Iterator[str]:
    """A real `handoffs serve` process with the test team; its base URL."""
    served = start_test_server("--store", "memory://")
    yield served.url
    served.stop()


@pytest.fixture(scope="package")
def demo_server() -> Iterator[str]:
    """`handoffs serve --demo --inspect`, as `make web` runs it (for the pictures)."""
    served = Served("", "--demo", "--store", "memory://", "--inspect")
    yield served.url
    served.stop()


@pytest.fixture(scope="package")
def proxy(server: str) -> Iterator[Proxy]:
    p = Proxy(int(server.rsplit(":", 1)[1]))
    yield p
    p.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Chromium for the tests of this package; closed after them, because Playwright's
    sync API keeps its event loop running on this thread while open (a later test's
    asyncio.run would find it)."""
    reason = _missing()
    if reason is not None:  # CI=true (else these tests were skipped): say why, plainly
        pytest.fail(f"CI=true and the browser tests cannot run: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (its own storage, so its own session)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(15_000)
    yield ctx
    ctx.close()


@pytest.fixture
def new_context(browser: Any) -> Iterator[Any]:
    """Makes more browser profiles (each its own storage), closed after the test."""
    made: list[Any] = []

    def make(**kw: Any) -> Any:
        ctx = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **kw})
        ctx.set_default_timeout(15_000)
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        ctx.close()


@pytest.fixture(params=["desktop", "laptop", "phone"])
def size(request: Any) -> str:
    """One of the three sizes of issue 43 (`pages.SIZES`); a test taking it runs at each."""
    name: str = request.param
    return name


@pytest.fixture
def sized(browser: Any, size: str) -> Iterator[Any]:
    """A fresh browser profile at `size` (a phone is a touch screen)."""
    from .pages import SIZES

    ctx = browser.new_context(**SIZES[size])
    ctx.set_default_timeout(15_000)
    yield ctx
    ctx.close()


@pytest.fixture
def errors() -> list[str]:
    """The page errors a test saw (each test asserts there were none)."""
    return []


_OPENED: list[Any] = []


def open_page(context: Any, url: str, errors: list[str]) -> Any:
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    _OPENED.append(page)
    return page


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    outcome: Any = yield
    report = outcome.get_result()
    if report.when == "call":
        item.call_failed = report.failed


@pytest.fixture(autouse=True)
def accessible_at_the_end(request: Any) -> Iterator[None]:
    """Every page a test opened is checked with axe-core in the state the test left it
    (tests check the states on the way themselves, with `assert_accessible`)."""
    _OPENED.clear()
    yield
    pages = [p for p in _OPENED if not p.is_closed()]
    _OPENED.clear()
    if not getattr(request.node, "call_failed", False):  # else its own failure says enough
        for page in pages:
            assert_accessible(page, f"at the end of {request.node.name}")
