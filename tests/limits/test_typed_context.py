"""RunContext[T]: the caller's context reaches tools, instructions, guardrails and hooks,
and `mypy --strict` checks what user code reads from `ctx.context`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from handoffs import Agent, Handoff, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Deps:
    customer: str
    tier: int


@tool
def whoami(ctx: RunContext[Deps], greeting: str) -> str:
    """Say who the customer is."""
    return f"{greeting}, {ctx.context.customer} (tier {ctx.context.tier})"


async def test_a_typed_context_reaches_tools_instructions_and_hooks() -> None:
    hooked: list[str] = []

    def instructions(ctx: RunContext[Deps]) -> str:
        return f"Serve {ctx.context.customer}."

    def on_handoff(ctx: RunContext[Deps], payload: object) -> None:
        hooked.append(ctx.context.customer)

    front = Agent("front", instructions=instructions,
                  handoffs=[Handoff("desk", on_handoff=on_handoff)])
    desk = Agent("desk", tools=[whoami])
    model = ScriptedModel([transfer("desk"), call("whoami", greeting="Hello"), reply("done")])
    runner = Runner(Team([front, desk]), model=model)

    result = await runner.run("s1", "hi", context=Deps("Ada", 2))

    assert result.output == "done"
    assert model.requests[0].system.startswith("Serve Ada.\n\nWhat another agent should answer: ")
    assert hooked == ["Ada"]
    results = [e["text"] for e in result.events if e.type == "tool_result"]
    assert results == ["Hello, Ada (tier 2)"]
    assert "ctx" not in whoami.parameters["properties"]  # injected, not asked of the model


USER_CODE = """
from dataclasses import dataclass
from handoffs import Agent, RunContext, Runner, Team, tool

@dataclass
class Deps:
    customer: str

@tool
def greet(ctx: RunContext[Deps]) -> str:
    return ctx.context.{attribute}

def instructions(ctx: RunContext[Deps]) -> str:
    return "Serve " + ctx.context.customer

team = Team([Agent("a", instructions=instructions, tools=[greet])])
"""


def mypy(tmp_path: Path, attribute: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "user_code.py"
    source.write_text(textwrap.dedent(USER_CODE.format(attribute=attribute)))
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path / ".mypy"), str(source)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_mypy_strict_accepts_a_right_attribute_and_refuses_a_wrong_one(
        tmp_path: Path) -> None:
    right = mypy(tmp_path, "customer")
    assert right.returncode == 0, right.stdout + right.stderr

    wrong = mypy(tmp_path, "custommer")
    assert wrong.returncode == 1
    assert '"Deps" has no attribute "custommer"' in wrong.stdout


SESSION_CODE = """
from pydantic import BaseModel
from handoffs import Agent, RunContext, Team, tool

class Booking(BaseModel):
    passenger_name: str | None = None
    seat_number: str | None = None

@tool
def change_seat(ctx: RunContext[Booking], seat: str) -> str:
    ctx.context.{attribute} = {value}
    return "ok"

team = Team([Agent("a", tools=[change_seat])], context_type=Booking,
            context_public=("seat_number",))
"""


def test_mypy_strict_checks_a_tools_use_of_the_teams_session_context(tmp_path: Path) -> None:
    def checked(attribute: str, value: str) -> subprocess.CompletedProcess[str]:
        source = tmp_path / "session_code.py"
        source.write_text(SESSION_CODE.format(attribute=attribute, value=value))
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
             "--cache-dir", str(tmp_path / ".mypy"), str(source)], cwd=tmp_path,
            env={**os.environ, "MYPYPATH": str(ROOT / "src")}, capture_output=True,
            text=True, timeout=600)

    right = checked("seat_number", "seat")
    assert right.returncode == 0, right.stdout + right.stderr
    wrong = checked("seat_numbr", "12")
    assert wrong.returncode == 1
    assert '"Booking" has no attribute "seat_numbr"' in wrong.stdout
    mistyped = checked("seat_number", "12")
    assert mistyped.returncode == 1
    assert "Incompatible types in assignment" in mistyped.stdout
