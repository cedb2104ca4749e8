"""The support team: triage routes customers to billing, refunds or technical support.

`script()` is the scripted play of `CONVERSATION`; `rule_model()` answers free text
offline (a `RuleModel` with the rules in `rules()`).

    triage ──> billing ──> refunds (lookup_order, issue_refund)
       └─────> technical          └──> triage (anything else)
    billing ··> policy: delegation (the policy desk's answer comes back to billing)
    technical ──> human operator (escalation)
    technical ══> billing: next-turn transfer (billing answers the next message)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from handoffs import Agent, Handoff, HumanAgent, RunContext, Team, tool
from handoffs.rules import Rule, RuleModel
from handoffs.testing import Step, call, reply, transfer

ORDERS: dict[str, dict[str, object]] = {
    "A-1001": {"order_id": "A-1001", "item": "Noise-cancelling headphones", "amount": 129.0,
               "charged": 2, "status": "delivered"},
    "A-1002": {"order_id": "A-1002", "item": "USB-C dock", "amount": 89.0, "charged": 1,
               "status": "shipped"},
    "A-1003": {"order_id": "A-1003", "item": "Laptop", "amount": 1499.0, "charged": 2,
               "status": "delivered"},
}

APPROVAL_ABOVE = 500.0
"""Refunds of more than this many dollars wait for a person's approval."""


class RefundRequest(BaseModel):
    """What refunds needs to act: the order (refunds looks up what was charged)."""

    order_id: str = Field(description="The order number, e.g. A-1001.",
                          examples=["A-1001"])


@tool(read_only=True)
def lookup_order(ctx: RunContext, order_id: str) -> dict[str, object]:
    """Look up an order by its number.

    Args:
        order_id: The order number, e.g. "A-1001".
    """
    order = ORDERS.get(order_id)
    if order is None:
        return {"error": f"No order {order_id}."}
    ctx.shared["last_order"] = order_id
    return order


def _needs_approval(ctx: RunContext, args: Mapping[str, Any]) -> bool:
    order = ORDERS.get(str(args.get("order_id", "")))
    amount = args.get("amount") or (order or {}).get("amount") or 0
    return isinstance(amount, int | float) and amount > APPROVAL_ABOVE


@tool(needs_approval=_needs_approval)
def issue_refund(ctx: RunContext, order_id: str, amount: float | None = None) -> str:
    """Refund a duplicate charge on an order to the original payment method.

    Only an order that was charged twice is refunded, once, by at most what was charged;
    the same refund asked again is answered with the first one's reference. Refunds over
    $500 wait for a person's approval.

    Args:
        order_id: The order to refund, e.g. "A-1001".
        amount: The amount in dollars; leave it out to refund the duplicate charge.
    """
    order = ORDERS.get(order_id)
    if order is None:
        return f"Not refunded: there is no order {order_id}."
    refunds: list[dict[str, Any]] = ctx.shared.setdefault("refunds", [])
    done = next((r for r in refunds if r["order_id"] == order_id), None)
    if done is not None:
        return (f"Already refunded: ${done['amount']:.2f} on {order_id}, reference "
                f"{done['reference']}. Nothing was refunded again.")
    charged = float(order["amount"])  # type: ignore[arg-type]
    if order["charged"] != 2:
        return f"Not refunded: {order_id} was charged once, so there is no duplicate charge."
    if amount is None:
        amount = charged
    if not 0 < amount <= charged:
        return (f"Not refunded: a refund on {order_id} is at most the duplicate charge, "
                f"${charged:.2f}.")
    reference = f"R-{len(refunds) + 1:04d}"
    refunds.append({"order_id": order_id, "amount": amount, "reference": reference})
    return f"Refund of ${amount:.2f} on {order_id} issued; reference {reference}."


def build_team() -> Team:
    """The support team, ready for a `Runner`."""
    triage = Agent(
        "triage",
        instructions="You greet customers and route them: billing for charges, invoices "
        "and refunds, technical for product problems, and technical too when they ask "
        "for a person (technical brings in the human operator). Answer greetings, thanks "
        "and questions about what this support team does yourself; hand off anything a "
        "specialist should solve.",
        description="Routes customers to the right specialist.",
        handoffs=["billing", "technical"],
        display_name="Triage", icon="🧭", color="#6b7280",
    )
    billing = Agent(
        "billing",
        instructions="You handle charges and invoices. Look an order up when the customer "
        "names one. A duplicate charge goes to refunds with the order number; refunds "
        "works out the amount.",
        description="Charges, invoices, duplicate payments.",
        tools=[lookup_order],
        handoffs=[
            Handoff("refunds", payload=RefundRequest, history="conversation"),
            Handoff("policy", returns=True,
                    description="Ask the policy desk whether a refund is allowed."),
            "triage",
        ],
        display_name="Billing", icon="💳", color="#2563eb",
    )
    policy = Agent(
        "policy",
        instructions="Answer yes or no with a one-line reason: is the refund allowed?",
        description="Checks refund policy.",
        user_selectable=False,
        display_name="Policy desk", icon="📜", color="#7c3aed",
    )
    refunds = Agent(
        "refunds",
        instructions="You issue refunds for duplicate charges. Look the order up first, "
        "then refund it once. Never refund when the customer only thanks you or says "
        "goodbye.",
        description="Issues refunds on orders.",
        tools=[lookup_order, issue_refund],
        handoffs=["triage"],
        display_name="Refunds", icon="💸", color="#059669",
    )
    technical = Agent(
        "technical",
        instructions="You solve product problems: answer the customer's technical "
        "questions yourself, step by step. Escalate to a human operator only when the "
        "customer asks for a person or you cannot help.",
        description="Product problems, crashes, setup.",
        handoffs=[
            "triage",
            Handoff("operator", description="Escalate to a human operator."),
            # Cold transfer: the turn ends here and billing answers the next message.
            Handoff("billing", respond="next_turn", description="Billing questions "
                    "(charges, invoices): billing answers the customer's next message."),
        ],
        display_name="Tech support", icon="🛠", color="#d97706",
    )
    operator = HumanAgent(
        "operator", description="A human support operator.", display_name="Operator (human)",
        icon="🙋", color="#dc2626", handoffs=["technical"],
        # A customer reaches the person through an escalation, not the picker.
        user_selectable=False,
    )
    return Team([triage, billing, policy, refunds, technical, operator], entry="triage",
                fallback="triage", suggested_prompts=SUGGESTED_PROMPTS)


SUGGESTED_PROMPTS = (
    "I was charged twice for order A-1001.",
    "The dock from A-1002 keeps disconnecting my monitor.",
    "Can a person look at my account?",
)
"""What the web page offers a customer to start with (`Team(suggested_prompts=...)`)."""


CONVERSATION: list[str] = [
    "Hi, I was charged twice for order A-1001.",
    "Thanks! Also, the dock from A-1002 keeps disconnecting my monitor.",
    "Still broken after the update. Can a person look at my account?",
]
"""The user's messages in the scripted play."""

OPERATOR_REPLY = "Hi, I'm Sam from support. I reset the dock's pairing on your account."


def script() -> list[Step]:
    """The scripted model's responses for `CONVERSATION`, in order."""
    return [
        # turn 1: triage -> billing -> (ask policy) -> refunds -> tools -> answer
        transfer("billing", reason="Customer reports a duplicate charge on A-1001."),
        transfer("policy", reason="Is a refund for a duplicate charge allowed?"),
        reply("Yes: duplicate charges are always refundable."),
        transfer("refunds", reason="Duplicate charge confirmed by policy.",
                 order_id="A-1001"),
        call("lookup_order", order_id="A-1001"),
        call("issue_refund", order_id="A-1001"),
        reply("I've refunded the duplicate charge of $129.00 on A-1001 (reference "
              "R-0001). It will show up in 3-5 business days."),
        # turn 2: refunds is still active; it sends the customer back to triage
        transfer("triage", reason="New issue, not about refunds."),
        transfer("technical", reason="Dock disconnects the monitor."),
        reply("Please update the dock firmware to 2.4 (Settings > Dock > Update) and "
              "reconnect. Tell me if it still drops."),
        # turn 3: technical escalates to the human operator
        [reply("Let me bring in a colleague who can check your account."),
         transfer("operator", reason="Firmware update did not help; needs account access.")],
    ]


# -- the offline rule-based model: free text, no provider -------------------------------

ORDER = r"(?<![\w-])(?P<order>[a-z]-\d{3,})(?![\w-])"
"""An order number in the user's message, like A-1001 (any case)."""

BILLING_WORDS = ["charge", "bill", "invoice", "payment", "pay", "paid", "refund", "money back",
                 "twice", "double", "duplicate", "receipt"]
TECH_WORDS = ["technical", "tech support", "broken", "crash", "disconnect", "error", "bug",
              "setup", "set up", "install", "not working", "doesn't work", "won't", "firmware",
              "dock", "monitor", "screen", "battery", "freez", "slow"]
DUPLICATE_WORDS = ["twice", "double", "duplicate", "two times", "charged again", "refund"]
PERSON_WORDS = ["person", "human", "operator", "someone", "real agent", "manager", "account"]
THANKS_WORDS = ["thank", "thx", "bye", "great", "perfect"]


def _order_args(v: Mapping[str, Any]) -> dict[str, Any]:
    return {"order_id": v["order"].upper()}


def _refund_args(v: Mapping[str, Any]) -> dict[str, Any]:
    order = v["lookup_order"]
    if order["charged"] < 2:
        raise LookupError("charged once: nothing to refund")
    return {"order_id": order["order_id"], "amount": order["amount"]}


def _refund_payload(v: Mapping[str, Any]) -> dict[str, Any]:
    if not str(v["ask_policy"]).startswith("Yes"):
        raise LookupError("the policy desk said no")
    return {"order_id": ORDERS[v["order"].upper()]["order_id"]}


def _refund_answer(v: Mapping[str, Any]) -> str:
    done = str(v["issue_refund"])
    if not done.startswith("Refund of"):  # already refunded, or refused: say what it said
        return done
    return f"I've refunded the duplicate charge: {done} It will show up in 3-5 business days."


def _billing_answer(v: Mapping[str, Any]) -> str:
    order = v["order"].upper()
    if order not in ORDERS:
        return f"I can't find an order {order}. Please check the number on your receipt."
    return f"The policy desk says: {v['ask_policy']}"


def rules() -> dict[str, list[Rule]]:
    """The support team's rules for `RuleModel`: each agent's in the order they apply."""
    return {
        "triage": [
            Rule(keywords=BILLING_WORDS, handoff="billing", reason="Billing question: {text}"),
            Rule(keywords=TECH_WORDS, handoff="technical", reason="Product problem: {text}"),
            Rule(keywords=PERSON_WORDS, handoff="technical",
                 reason="The customer asks for a person; technical brings one in."),
            Rule(answer="Hello! I can send you to billing (charges, invoices, refunds) or to "
                 "tech support (product problems). What do you need help with?"),
        ],
        "billing": [
            Rule(keywords=TECH_WORDS, handoff="triage", reason="Not a billing question."),
            Rule(keywords=DUPLICATE_WORDS, pattern=ORDER, handoff="policy",
                 reason="Is a refund for a duplicate charge on {order} allowed?"),
            Rule(keywords=DUPLICATE_WORDS, pattern=ORDER, handoff="refunds",
                 reason="Duplicate charge on {order}; the policy desk allows a refund.",
                 payload=_refund_payload),
            Rule(keywords=DUPLICATE_WORDS, pattern=ORDER, answer=_billing_answer),
            Rule(keywords=DUPLICATE_WORDS,
                 answer="Which order was charged twice? Its number looks like A-1001."),
            Rule(keywords=["invoice", "receipt"], answer="I've emailed you the invoice; every "
                 "invoice is also under Account > Billing."),
            Rule(answer="I handle charges and invoices. Which order is this about?"),
        ],
        "policy": [
            Rule(keywords=DUPLICATE_WORDS, answer="Yes: duplicate charges are always "
                 "refundable."),
            Rule(answer="No: only duplicate charges are refunded without a review."),
        ],
        "refunds": [
            Rule(keywords=TECH_WORDS, handoff="triage", reason="New issue, not about refunds."),
            Rule(pattern=ORDER, call="lookup_order", args=_order_args),
            Rule(pattern=ORDER, call="issue_refund", args=_refund_args),
            Rule(pattern=ORDER, answer=_refund_answer),
            Rule(pattern=ORDER, answer="{lookup_order[error]}"),
            Rule(pattern=ORDER, answer="Order {lookup_order[order_id]} was charged once, so "
                 "there is nothing to refund."),
            Rule(keywords=THANKS_WORDS, answer="You're welcome! Anything else?"),
            Rule(keywords=[*DUPLICATE_WORDS, "yes", "please", "go ahead"],
                 answer="Which order should I refund? Its number looks like A-1001."),
            Rule(handoff="triage", reason="Not a refund request."),
        ],
        "technical": [
            Rule(keywords=PERSON_WORDS, handoff="operator",
                 reason="The customer asks for a person; the fix needs account access.",
                 say="Let me bring in a colleague who can check your account."),
            Rule(keywords=BILLING_WORDS, handoff="triage", reason="Not a product problem."),
            Rule(keywords=["dock", "disconnect", "monitor", "usb"],
                 answer="Please update the dock firmware to 2.4 (Settings > Dock > Update) "
                 "and reconnect. Tell me if it still drops."),
            Rule(keywords=THANKS_WORDS, answer="Glad to help!"),
            Rule(answer="Sorry about that! Restart the device and update it to the latest "
                 "firmware; tell me if the problem stays."),
        ],
    }


def rule_model(stream_chunks: int | None = None) -> RuleModel:
    """An offline model for the support team that reacts to free text ("I was charged
    twice for A-1001"): for demos, a terminal chat or a web page with no provider."""
    return RuleModel(rules(), stream_chunks=stream_chunks)
