"""The traffic scenario: a six-turn customer-support conversation, and the scripted model.

Stdlib only: imported by the server (in our venv) and by every framework's driver (in that
framework's venv), so that every framework gets the same agents, tools, tool results, user
messages and model decisions.

Agents (every framework builds the same three, with these names, instructions, descriptions
and tools, and these routes):

    triage ──> billing  (lookup_invoices)  ──> triage
       └─────> shipping (track_package)    ──> triage

The conversation (six user turns; who answers each; the model's decisions):

    1  "charged twice"    triage ⇒ billing; billing calls lookup_invoices (a ~2 KB result), answers
    2  "refund it"        billing answers
    3  "where's O-7731"   billing ⇒ triage (back), triage ⇒ shipping; shipping calls
                          track_package, answers
    4-6                   shipping answers

Three handoffs in all (one back to triage), two ordinary tools, six answers.

How the scripted model decides (:func:`decide`), from the request alone:

1. *Who is asking.* The agent whose instructions' first sentence (:data:`SIGNATURES`) is in
   the request's system text (system/developer messages). Every framework puts the agent's
   instructions there; no agent's system text contains another agent's instructions (the
   frameworks add other agents' *descriptions*, never their instructions). Cross-check: an
   ordinary tool offered to an agent must be its own, else the request is unscripted. A
   request whose system text is handoffs' summariser prompt is the summariser; it answers
   :func:`summary` (the facts, and the open request quoted).
2. *Which turn.* The highest k whose user message ``USER[k]`` occurs (as a substring) in a
   user message of the request, or in its system text (where handoffs' ``summary`` view puts
   the summary, which quotes the request): the conversation only moves forward, and
   frameworks that wrap the user's text (Strands Swarm builds a "Context: ... User Request:
   <text>" message) still contain it.
3. *What has happened this turn.* The messages after the last one containing ``USER[k]``:
   tool calls (by name) and their results (by ``tool_call_id``).
4. *The decision*, from the plan for (agent, turn) in :data:`PLANS`:
   - an ordinary tool step: call the tool unless its result is already in the turn, then
     answer the turn's answer;
   - a handoff step: call the handoff tool the framework offers for the target
     (``transfer_to_<target>``, or one tool with an ``agent_name`` argument, as Strands'
     ``handoff_to_agent`` and ADK's ``transfer_to_agent``); if this turn already holds a call
     handing to that target (the source agent is asked again after its handoff's result, as
     in Strands), end the agent's turn with a short text (:data:`HANDED_OFF`);
   - triage routes turn k to the agent that answers turn k (:data:`ANSWERED_BY`): frameworks
     whose active agent sticks never ask triage again after turn 1 except in turn 3; those
     that start every turn at the entry agent (Strands Swarm) get routed again.
   - anything else is *unscripted*: the server answers :data:`UNSCRIPTED` text and counts it,
     and the run fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MODEL = "gpt-4.1-mini"
"""The model name every framework sends (a real one, for realistic request bodies)."""

CUSTOMER = "C-2291"
ORDER = "O-7731"

USER = (
    f"Hi, I was charged twice for my March invoice. My customer id is {CUSTOMER}.",
    "Yes, please refund the duplicate charge.",
    f"Thanks. Also, my order {ORDER} hasn't arrived yet. Where is it?",
    "Can it go to my office instead? 12 Park Row, Leeds.",
    "Will I need to sign for it?",
    "Great, that's all. Thank you!",
)
"""The user's six messages, in order."""

ANSWERS = (
    "I can see two charges of $49.00 for invoice INV-0303 on March 3; the second one is a "
    "duplicate and I can refund it.",
    "Done: the duplicate $49.00 charge on INV-0303 is refunded, reference R-5512. It takes "
    "3-5 business days to show.",
    f"Order {ORDER} is with the carrier at the Leeds depot; delivery is expected on Friday.",
    f"Yes: I've asked the carrier to deliver {ORDER} to 12 Park Row, Leeds.",
    "Yes, the carrier needs a signature on delivery; anyone at the office can sign.",
    "You're welcome! Have a good day.",
)
"""The answer that ends each turn."""

ANSWERED_BY = ("billing", "billing", "shipping", "shipping", "shipping", "shipping")
"""The agent that answers each turn (the final agent each framework must report)."""

HANDED_OFF = "One moment, a colleague will take it from here."
"""What an agent says when it is asked again after its own handoff (Strands)."""

UNSCRIPTED = "UNSCRIPTED REQUEST"

REASON = "The customer's request belongs with this agent."
"""The text a handoff tool's `reason` / `message` argument gets."""

SUMMARY_PROMPT_MARK = "Summarise the conversation below"
"""The start of handoffs' default summariser prompt (`history="summary"` views)."""

SUMMARY_FACTS = (f"Customer {CUSTOMER}, on Acme Pro. Charged twice ($49.00) for the March "
                 "invoice INV-0303; billing refunds duplicates.")


def summary(turn: int) -> str:
    """The summariser's answer in turn `turn`: the facts, and the open request verbatim (so
    that the target, which sees the summary instead of the user's message, gets it)."""
    return f'{SUMMARY_FACTS} Latest message from the customer: "{USER[turn]}"'


@dataclass(frozen=True)
class AgentSpec:
    name: str
    instructions: str
    description: str
    tools: tuple[str, ...]
    handoffs: tuple[str, ...]


AGENTS = (
    AgentSpec(
        "triage",
        "You are the front desk of Acme support. Greet customers and route them: billing for "
        "charges, invoices and refunds; shipping for deliveries, tracking and addresses. "
        "Never solve issues yourself.",
        "Routes customers to the right specialist.",
        (),
        ("billing", "shipping"),
    ),
    AgentSpec(
        "billing",
        "You are the billing specialist of Acme support. Look the customer's invoices up "
        "before you answer about a charge; refund duplicate charges. Anything that is not "
        "about money goes back to triage.",
        "Charges, invoices and refunds.",
        ("lookup_invoices",),
        ("triage",),
    ),
    AgentSpec(
        "shipping",
        "You are the shipping specialist of Acme support. Track the package before you "
        "answer about a delivery; you can change the delivery address. Anything that is not "
        "about a delivery goes back to triage.",
        "Deliveries, tracking and delivery addresses.",
        ("track_package",),
        ("triage",),
    ),
)
AGENT = {a.name: a for a in AGENTS}
ENTRY = "triage"

SIGNATURES = {a.name: a.instructions.split(". ")[0] for a in AGENTS}
"""The first sentence of each agent's instructions: how the server tells who is asking."""


TOOL_OWNER = {"lookup_invoices": "billing", "track_package": "shipping"}


def _invoices(customer_id: str) -> str:
    rows = []
    for month in range(1, 13):
        rows.append({"invoice": f"INV-{month:02d}03", "date": f"2026-{month:02d}-03",
                     "item": "Acme Pro, monthly", "amount": 49.0, "currency": "USD",
                     "status": "paid", "card": "visa-4242"})
    # The double charge: March's invoice was taken twice.
    rows.insert(3, {**rows[2], "note": "second charge, same invoice"})
    return json.dumps({"customer_id": customer_id, "charges": rows})


def lookup_invoices(customer_id: str) -> str:
    """List a customer's invoices and charges of the last 12 months.

    Args:
        customer_id: The customer id, e.g. C-1234.
    """
    return _invoices(customer_id)


def track_package(order_id: str) -> str:
    """Track the delivery of an order.

    Args:
        order_id: The order number, e.g. O-1234.
    """
    return json.dumps({"order_id": order_id, "carrier": "ParcelCo", "status": "in transit",
                       "location": "Leeds depot", "eta": "Friday",
                       "signature_required": True})


# Every framework makes its tools from these two functions (their names, type hints and
# docstrings), in its own way; both return a string (lookup_invoices about 2 KB of JSON).
TOOL_FUNCTIONS = {"lookup_invoices": lookup_invoices, "track_package": track_package}
TOOL_ARGS = {"lookup_invoices": {"customer_id": CUSTOMER}, "track_package": {"order_id": ORDER}}
BIG_RESULT_MARK = '"note": "second charge, same invoice"'
"""A piece of lookup_invoices' result: counting it in a request (raw or JSON-escaped) tells
whether the ~2 KB result was sent again."""

# -- plans -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    kind: str  # "tool" | "handoff" | "answer"
    target: str = ""  # tool name or agent name


PLANS: dict[tuple[str, int], tuple[Step, ...]] = {
    ("billing", 0): (Step("tool", "lookup_invoices"), Step("answer")),
    ("billing", 1): (Step("answer"),),
    ("billing", 2): (Step("handoff", "triage"),),
    ("shipping", 2): (Step("tool", "track_package"), Step("answer")),
    ("shipping", 3): (Step("answer"),),
    ("shipping", 4): (Step("answer"),),
    ("shipping", 5): (Step("answer"),),
}
"""What each agent does in each turn (0-based); triage's plan is always a handoff to
ANSWERED_BY[turn]."""


def plan(agent: str, turn: int) -> tuple[Step, ...] | None:
    if agent == "triage":
        return (Step("handoff", ANSWERED_BY[turn]),)
    return PLANS.get((agent, turn))


# -- reading a Chat Completions request --------------------------------------------------------


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                out.append(str(part.get("text") or ""))
            elif isinstance(part, str):
                out.append(part)
        return "\n".join(out)
    return str(content)


def tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for t in body.get("tools") or ():
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
    return names


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(text_of(m.get("content")) for m in body.get("messages") or ()
                     if m.get("role") in ("system", "developer"))


def who(body: dict[str, Any]) -> str | None:
    """The agent asking (or "summarizer"), or None when it cannot be told."""
    system = system_text(body)
    if SUMMARY_PROMPT_MARK in system:
        return "summarizer"
    found = [name for name, sig in SIGNATURES.items() if sig in system]
    if len(found) != 1:
        return None
    agent = found[0]
    for name in tool_names(body):
        if TOOL_OWNER.get(name, agent) != agent:
            return None
    return agent


def which_turn(body: dict[str, Any]) -> tuple[int, int] | None:
    """(turn, index of the message that starts it), or None."""
    msgs = body.get("messages") or []
    best: tuple[int, int] | None = None
    for k in range(len(USER) - 1, -1, -1):
        for i in range(len(msgs) - 1, -1, -1):
            m = msgs[i]
            if m.get("role") in TURN_ROLES and USER[k] in text_of(m.get("content")):
                best = (k, i)
                break
        if best is not None:
            return best
    return None


TURN_ROLES = ("user", "system", "developer")
"""Where the user's message may be: user messages, or, after a `summary` handoff in handoffs,
the summary in the system text (which quotes it)."""


def handoff_target(name: str, arguments: str) -> str | None:
    """The agent a tool call hands to, or None when it is not a handoff call."""
    if name.startswith("transfer_to_") and name[len("transfer_to_"):] in AGENT:
        return name[len("transfer_to_"):]
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return None
    if isinstance(args, dict) and args.get("agent_name") in AGENT:
        return str(args["agent_name"])
    return None


@dataclass
class Decision:
    """The scripted response: text, or one tool call."""

    agent: str | None
    turn: int | None
    kind: str  # "answer" | "tool" | "handoff" | "handed_off" | "summary" | "unscripted"
    text: str = ""
    call_name: str = ""
    call_arguments: str = ""
    why: str = ""
    facts: dict[str, Any] = field(default_factory=dict)


def _handoff_call(body: dict[str, Any], target: str) -> tuple[str, str] | None:
    for t in body.get("tools") or ():
        fn = t.get("function") or {}
        name = fn.get("name", "")
        params = fn.get("parameters") or {}
        props = params.get("properties") or {}
        if name == f"transfer_to_{target}":
            args: dict[str, Any] = {}
        elif "agent_name" in props:
            args = {"agent_name": target}
        else:
            continue
        for prop in {*params.get("required", ()), "reason"}:
            if prop in props and prop not in args and props[prop].get("type") == "string":
                args[prop] = REASON
        return name, json.dumps(args)
    return None


def decide(body: dict[str, Any]) -> Decision:
    """The scripted model's response to a Chat Completions request body."""
    agent = who(body)
    found = which_turn(body)
    turn = found[0] if found else None
    if agent == "summarizer":
        if turn is None:
            return Decision(agent, turn, "unscripted", text=UNSCRIPTED,
                            why="no scripted user message in the summariser's transcript")
        return Decision(agent, turn, "summary", text=summary(turn))
    if agent is None or found is None:
        return Decision(agent, turn, "unscripted", text=UNSCRIPTED,
                        why="unknown agent" if agent is None else "no scripted user message")
    turn, start = found
    steps = plan(agent, turn)
    if steps is None:
        return Decision(agent, turn, "unscripted", text=UNSCRIPTED,
                        why=f"no plan for {agent} in turn {turn + 1}")
    msgs = (body.get("messages") or [])[start + 1:]
    calls: dict[str, tuple[str, str]] = {}  # id -> (name, arguments)
    results: set[str] = set()
    for m in msgs:
        for tc in m.get("tool_calls") or ():
            fn = tc.get("function") or {}
            calls[str(tc.get("id"))] = (fn.get("name", ""), fn.get("arguments") or "")
        if m.get("role") == "tool":
            results.add(str(m.get("tool_call_id")))
    done_tools = {calls[i][0] for i in results if i in calls}
    handed_to = {handoff_target(*c) for c in calls.values()}
    offered = tool_names(body)
    for step in steps:
        if step.kind == "tool":
            if step.target in done_tools:
                continue
            if step.target not in offered:
                return Decision(agent, turn, "unscripted", text=UNSCRIPTED,
                                why=f"{step.target} not offered to {agent}")
            return Decision(agent, turn, "tool", call_name=step.target,
                            call_arguments=json.dumps(TOOL_ARGS[step.target]))
        if step.kind == "handoff":
            if step.target in handed_to:
                return Decision(agent, turn, "handed_off", text=HANDED_OFF)
            call = _handoff_call(body, step.target)
            if call is None:
                return Decision(agent, turn, "unscripted", text=UNSCRIPTED,
                                why=f"no handoff tool to {step.target} offered to {agent}")
            return Decision(agent, turn, "handoff", call_name=call[0], call_arguments=call[1])
        return Decision(agent, turn, "answer", text=ANSWERS[turn])
    return Decision(agent, turn, "answer", text=ANSWERS[turn])


# -- what a request carries (for the report) ---------------------------------------------------

_MARK_ESCAPED = json.dumps(BIG_RESULT_MARK)[1:-1]


def facts(body: dict[str, Any], raw: bytes) -> dict[str, Any]:
    """Sizes of a request's parts, in bytes of compact JSON (UTF-8)."""

    def size(x: Any) -> int:
        return len(json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode())

    msgs = body.get("messages") or []
    text = raw.decode("utf-8", "replace")
    # The big result's marker, raw or JSON-escaped once or twice (a JSON text inside JSON).
    copies = max(text.count(mark) for mark in
                 (BIG_RESULT_MARK, _MARK_ESCAPED, json.dumps(_MARK_ESCAPED)[1:-1]))
    return {
        "bytes": len(raw),
        "compact_bytes": size(body),
        "messages": len(msgs),
        "messages_bytes": size(msgs),
        "system_bytes": sum(size(m) for m in msgs if m.get("role") in ("system", "developer")),
        "tools": len(body.get("tools") or ()),
        "tools_bytes": size(body.get("tools") or []),
        "other_bytes": size({k: v for k, v in body.items() if k not in ("messages", "tools")}),
        "big_result_copies": copies,
        "stream": bool(body.get("stream")),
    }


