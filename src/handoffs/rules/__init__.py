"""`RuleModel`: an offline model that routes by keywords and answers from templates.

Where `ScriptedModel` plays a fixed script, `RuleModel` reacts to free text, so a demo,
a chat in the terminal or a web page can run with no provider and no key:

    model = RuleModel({
        "triage": [Rule(keywords=["charge", "invoice"], handoff="billing",
                        reason="Billing question: {text}")],
        "billing": [Rule(pattern=r"(?P<order>A-\\d+)", call="lookup_order",
                         args={"order_id": "{order}"}),
                    Rule(pattern=r"(?P<order>A-\\d+)",
                         answer="Order {order}: {lookup_order[status]}.")],
    })

Each request is answered by the first of the agent's rules that applies; a rule applies
when its `keywords` (any of them, at the start of a word, any case) and its `pattern` (a
regular expression, searched in any case) match the user's latest message, its tool or
handoff is offered, it was not already done since that message, and its templates can be
filled. With no rule applying (and with no rules at all: `RuleModel(team=team)` plays any
team), the model says what its latest calls brought back; escalates to a human agent when
the message asks for a person; hands off toward the agent the message is most about, by
the words of names and descriptions, along the team's routes (given `team=`; without it,
only the agent that received the message hands off, to a target its request offers),
filling a payload from ids like A-1001 and numbers in the message; calls a tool whose name
the message mentions when that fills its arguments; and otherwise answers with a
placeholder that says what a real model would do there: answer the message, or hand it
to the agents its routes lead to, or call its tools, each named (`DEFAULT_ANSWER`;
`handoffs.rules.fallback` has the details). Asked for an object (an agent's
`output_type`, a guardrail's classifier through `ctx.ask`), it answers with one that fits
the schema (`handoffs.rules.objects`: defaults, placeholders, booleans true). It never
runs out of answers, and the same conversation always gets the same responses; streamed,
the text comes a word at a time.

Templates are `str.format` strings over: `agent`, `text` (the user's message), `source`
and `reason` (of the handoff that brought the agent, when there was one), `keyword` and
`match` (what matched) and the pattern's named groups, `result` (the latest tool result
since the message) and each tool's latest result by the tool's name, as parsed JSON when
it is JSON (`{lookup_order[amount]}`), and the session's `shared` memory and `context`
(`ctx.shared`, `ctx.context`), read by key or attribute alike: `{shared[confirmation]}`,
`{context.seat_number}` (a dict, a pydantic model or any object; a name that is missing
or None skips the rule). A value that is exactly one placeholder keeps its
type (`"amount": "{lookup_order[amount]}"` sends a number). Any template may instead be
a function of that mapping; a missing key (KeyError, LookupError) skips the rule.
"""

from .model import DEFAULT_ANSWER, RuleModel
from .rule import Fields, Rule, fill

__all__ = ["DEFAULT_ANSWER", "Fields", "Rule", "RuleModel", "fill"]
