"""`handoffs demo`: the support team plays a conversation, and you see every move."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any

from .core.events import Event
from .examples.support import CONVERSATION, OPERATOR_REPLY, build_team, rule_model, script
from .runtime.runner import Runner
from .testing import ScriptedModel


class _Printer:
    def __init__(self, color: bool) -> None:
        self.color = color

    def paint(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def line(self, text: str = "") -> None:
        print(text, flush=True)


def demo_model(model: str | None, env: Mapping[str, str]) -> tuple[str | None, str]:
    """The real model the demo uses and why, or (None, "") for the scripted play.

    In order: `--model`, HANDOFFS_MODEL, OPENAI_API_KEY (openai:gpt-4.1-mini),
    ANTHROPIC_API_KEY (anthropic:claude-sonnet-4-6).
    """
    if model:
        return model, "--model"
    if env.get("HANDOFFS_MODEL"):
        return env["HANDOFFS_MODEL"], "HANDOFFS_MODEL is set"
    if env.get("OPENAI_API_KEY"):
        return "openai:gpt-4.1-mini", "OPENAI_API_KEY is set"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY is set"
    return None, ""


async def run_demo(model: str | None = None, color: bool = False,
                   scripted: bool = False, rules: bool = False) -> int:
    """Play the support conversation; scripted unless a real model is configured (or
    `scripted` insists). `rules` plays it offline on the rule-based model instead of the
    script (`handoffs.examples.support.rule_model`, which also answers free text)."""
    team = build_team()
    p = _Printer(color)
    spec, why = (None, "") if scripted or rules else demo_model(model, os.environ)
    scripted = spec is None and not rules
    model_obj: Any = (rule_model() if rules else
                      ScriptedModel(script()) if scripted else spec)
    p.line(p.paint("handoffs demo: a support team of triage, billing, policy, refunds, "
                   "technical and a human operator", "1"))
    if rules:
        p.line("The model is RULE-BASED: each agent answers by keyword rules and templates "
               "(src/handoffs/examples/support.py),")
        p.line("so this runs offline and would answer any message the same way every time.")
    elif scripted:
        p.line("The model is SCRIPTED: every response below was written in advance "
               "(src/handoffs/examples/support.py),")
        p.line("so this runs offline. To use a real model: handoffs demo --model "
               "openai:gpt-4.1-mini (or set HANDOFFS_MODEL, OPENAI_API_KEY or "
               "ANTHROPIC_API_KEY).")
    else:
        p.line(f"The model is {spec}, a real provider (because {why}); "
               "--scripted plays the offline script instead.")
    p.line()
    runner = Runner(team, model=model_obj)
    session = f"demo-{uuid.uuid4().hex[:8]}"
    failed = False
    for text in CONVERSATION:
        p.line(p.paint(f"user: {text}", "1;36"))
        async for event in runner.stream(session, text, channel="web"):
            _show(p, event)
            if event.type == "run_failed":
                failed = True
        p.line()
        state = await runner.get_session(session)
        if failed or (state is not None and state.status == "waiting_for_human"):
            break
    state = await runner.get_session(session)
    if state is not None and state.status == "waiting_for_human" and not failed:
        p.line(p.paint("[the human operator answers in the session, then hands back to "
                       "technical]", "2"))
        result = await runner.reply_as_human(session, OPERATOR_REPLY, handoff_to="technical")
        p.line(f"operator: {OPERATOR_REPLY}")
        p.line(p.paint(f"  -> active agent is now {result.agent}", "33"))
        p.line()
    state = await runner.get_session(session)
    if state is not None:
        accepted = [r for r in state.handoffs if r.accepted]
        p.line(p.paint(f"Session {session}: {len(state.messages)} messages, "
                       f"{len(accepted)} handoff{'s' * (len(accepted) != 1)}, "
                       f"active agent: {state.active_agent}.", "1"))
        p.line("Refunds issued (shared memory): " + str(state.shared.get("refunds", [])))
    return 1 if failed else 0


def _show(p: _Printer, e: Event) -> None:
    d = e.data
    t = e.type
    if t == "agent_started":
        p.line(p.paint(f"  [{d['agent']} is working]", "2"))
    elif t == "message":
        p.line(f"{d['agent']}: {d['text']}")
    elif t == "tool_called":
        p.line(p.paint(f"  {d['agent']} calls {d['tool']}({d['arguments']})", "35"))
    elif t == "tool_result" and not d["tool"].startswith("transfer_to_"):
        p.line(p.paint(f"  {d['tool']} -> {d['text']}", "35"))
    elif t == "agent_handoff":
        kind = "asks" if d["returns"] else "hands off to"
        p.line(p.paint(f"  -> {d['source']} {kind} {d['target']} ({d['reason']}): "
                       f"{d['explanation']}", "33"))
    elif t == "agent_returned":
        p.line(p.paint(f"  <- {d['source']} answers {d['target']}: {d['text']}", "33"))
    elif t == "handoff_rejected":
        p.line(p.paint(f"  x handoff to {d['target']} refused ({d['code']}): {d['message']}",
                       "31"))
    elif t == "human_waiting":
        p.line(p.paint(f"  [waiting for {d['display_name']}: the turn ends here]", "33"))
    elif t == "run_failed":
        p.line(p.paint(f"  run failed ({d['code']}): {d['message']}", "31"))
