"""An optional extra that is not installed fails with one message that says which extra
to install, on every path a user takes: Python, `handoffs run`, `sessions`, `stats`,
`check`. Each case runs in a subprocess where the package cannot be imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PG = "postgresql://127.0.0.1:1/nowhere"  # never reached: the driver is missing first
POSTGRES_HINT = ("PostgresStore needs asyncpg; install the 'postgres' extra: pip install "
                 "'handoffs[postgres]' (in a checkout of handoffs: pip install -e "
                 "'.[postgres]').")


def without(package: str, code: str, *argv: str, cwd: Path | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `code` in a Python where `import <package>` fails, as when it is not installed."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HANDOFFS_MODEL",
                        "HANDOFFS_STORE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    prelude = f"import sys\nsys.modules[{package!r}] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code, *argv], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=60)


CLI = "from handoffs.cli import main\nsys.exit(main(sys.argv[1:]))\n"


@pytest.mark.parametrize("argv", [
    ["run", "hello", "--store", PG],
    ["sessions", "list", "--store", PG],
    ["sessions", "show", "s1", "--store", PG],
    ["stats", "--store", PG],
])
def test_the_cli_without_asyncpg_says_which_extra(argv: list[str], tmp_path: Path) -> None:
    done = without("asyncpg", CLI, *argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"handoffs: {POSTGRES_HINT}"
    assert "Traceback" not in done.stderr


def test_runner_run_without_asyncpg_raises_the_same_message() -> None:
    done = without("asyncpg", f"""
import asyncio
from handoffs import Agent, HandoffsError, Runner, Team
runner = Runner(Team([Agent("solo")]), store={PG!r})
try:
    asyncio.run(runner.run("s1", "hello"))
except HandoffsError as exc:
    print(exc.code, exc)
""")
    assert done.stdout.strip() == f"missing_dependency {POSTGRES_HINT}", done.stderr


APP = """
from handoffs import Agent, MCPServer, Team
team = Team([Agent("support", mcp=[MCPServer.stdio("python", ["orders_server.py"])]),
             Agent("billing")])
"""


def test_a_team_with_mcp_servers_fails_when_built_without_the_mcp_package() -> None:
    done = without("mcp", f"""
from handoffs import HandoffsError
try:
{APP.replace(chr(10), chr(10) + "    ")}
except HandoffsError as exc:
    print(exc.code, exc)
""")
    assert done.stdout.strip() == (
        "missing_dependency support lists MCP servers (Agent(mcp=...)), which need the "
        "official `mcp` package; install the 'mcp' extra: pip install 'handoffs[mcp]' (in a "
        "checkout of handoffs: pip install -e '.[mcp]')."), done.stderr


def test_check_reports_the_missing_mcp_package(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    done = without("mcp", CLI, "check", "app.py", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith("error   missing_dependency: support lists MCP servers")
    assert "pip install 'handoffs[mcp]'" in done.stdout


def test_a_team_without_mcp_servers_builds_without_the_mcp_package() -> None:
    done = without("mcp", "from handoffs import Agent, Team\nTeam([Agent('a')])\n"
                   "print('mcp' in sys.modules and sys.modules['mcp'] is not None)")
    assert done.stdout.strip() == "False", done.stderr


NO_EXTRAS = ("openai", "anthropic", "asyncpg", "fastapi", "uvicorn", "mcp", "opentelemetry",
             "httpx", "pexpect", "playwright", "temporalio")


@pytest.mark.parametrize("argv", [["demo"], ["run", "I was charged twice"], ["check"],
                                  ["graph"], ["chat"]])
def test_the_package_alone_runs_what_make_demo_promises(argv: list[str], tmp_path: Path
                                                        ) -> None:
    # `make demo` installs no extra: demo, chat, run, check and graph must not need one.
    prelude = "".join(f"sys.modules[{m!r}] = None\n" for m in NO_EXTRAS)
    done = without("openai", prelude + CLI, *argv, cwd=tmp_path, stdin="hello\n/quit\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_make_demo_installs_the_package_alone_and_make_test_the_dev_extra(
        tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    demo = subprocess.run(["make", "-n", "demo"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=30)
    assert demo.returncode == 0, demo.stderr
    assert "pip install --quiet -e .\n" in demo.stdout and "[dev]" not in demo.stdout
    test = subprocess.run(["make", "-n", "test"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=30)
    assert "pip install --quiet -e '.[dev]'" in test.stdout
    assert "-qq" not in test.stdout          # apt's output goes to the log, not the screen
    assert test.stdout.count(">>.apt.log 2>&1") == 3


def test_a_remote_agent_without_the_a2a_sdk_says_which_extra() -> None:
    done = without("a2a", """
from handoffs import HandoffsError, RemoteAgent
try:
    RemoteAgent("billing", "http://127.0.0.1:1")
except HandoffsError as exc:
    print(exc.code, exc)
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("missing_dependency ")
    assert "pip install 'handoffs[a2a]'" in done.stdout


def test_import_handoffs_loads_neither_protocol_sdk() -> None:
    done = without("nothing", """
import handoffs
from handoffs import RemoteAgent
print(sorted(m for m in sys.modules if m.split(".")[0] in ("a2a", "ag_ui", "httpx")))
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_worker_without_temporalio_says_which_extra(tmp_path: Path) -> None:
    done = without("temporalio", CLI, "worker", "--temporal", "127.0.0.1:1", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "install the 'temporal' extra: pip install 'handoffs[temporal]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_turn_in_process_never_imports_temporalio() -> None:
    done = subprocess.run([sys.executable, "-c", """
import asyncio, sys
from handoffs import Agent, Runner, Team
from handoffs.testing import ScriptedModel, reply
asyncio.run(Runner(Team([Agent('a')]), model=ScriptedModel([reply('hi')])).run('s', 'x'))
print('temporalio' in sys.modules)
"""], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
