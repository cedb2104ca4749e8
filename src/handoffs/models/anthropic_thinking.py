"""What Anthropic's extended thinking asks of a request, and how its blocks are kept.

With `settings={"thinking": {"type": "enabled", "budget_tokens": ...}}` (or `adaptive`)
the Messages API answers with `thinking` blocks (the model's reasoning, signed) and
`redacted_thinking` blocks (encrypted), and holds the next request to three rules:

- The final assistant message, when it calls tools, must start with the thinking that
  came with those calls, sent back verbatim (the signature is checked): "Expected
  `thinking` or `redacted_thinking`, but found `tool_use`".
- A tool choice that forces a call (`any`, `tool`) is refused: "Thinking may not be
  enabled when tool_choice forces tool use."
- Thinking blocks are read back only by the model that wrote them.

So the blocks are kept on the transcript's assistant message (`Reasoning`, origin
`anthropic`, with the model's name), sent back in their place (first in their assistant
turn, or right before the tool use they preceded: interleaved thinking) only to the
same model and only while thinking is on, and dropped for anything else. A final
assistant turn that calls tools without thinking of this model's (another provider's or
model's calls, seen through a `full` history) is sent as text, which the API accepts. A
forced choice becomes `auto` plus an instruction in the last user turn; the runtime checks
after the fact that the call was made (`runtime.decisions.converge`), and an agent's
`output_type` is asked for the same way, through a `final_output` tool it is told to
call, and validated as always.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.messages import Reasoning
from .replay import own_reasoning

ORIGIN = "anthropic"
"""`Reasoning.origin` of Anthropic's thinking blocks."""
KINDS = ("thinking", "redacted_thinking")
"""The block types that carry the model's reasoning."""


def thinking_on(settings: Mapping[str, Any]) -> bool:
    """Whether a request with these settings has extended thinking on."""
    thinking = settings.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


def kept(kind: str, block: Any, model: str, call_id: str | None = None) -> Reasoning | None:
    """A thinking block of a response (an SDK object or a dict) as the transcript keeps it;
    `call_id`: the tool use it came right before, when it came after other blocks
    (interleaved thinking), so it goes back in its place."""
    def field(name: str) -> Any:
        return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)

    if kind == "thinking":
        data = {"type": "thinking", "thinking": field("thinking") or "",
                "signature": field("signature") or ""}
    elif kind == "redacted_thinking":
        data = {"type": "redacted_thinking", "data": field("data") or ""}
    else:
        return None
    return Reasoning(ORIGIN, kind, data, model, call_id)


class Placed:
    """A response's thinking blocks in the order they came, each placed: first in the
    turn, or right before the tool use that followed it (interleaved thinking: the API
    refuses a sequence rearranged)."""

    __slots__ = ("after_other", "model", "parts", "waiting")

    def __init__(self, model: str) -> None:
        self.model = model
        self.parts: list[Reasoning] = []
        self.waiting: list[tuple[str, Any]] = []
        self.after_other = False

    def block(self, kind: str, block: Any) -> None:
        """A block of the response, in order (`kind`: its type)."""
        if kind in KINDS:
            if self.after_other:
                self.waiting.append((kind, block))
            else:
                self._keep(kind, block, None)
        elif kind == "tool_use":
            for waiting in self.waiting:
                self._keep(*waiting, _field(block, "id"))
            self.waiting.clear()
            self.after_other = True
        else:
            self.after_other = True

    def done(self) -> tuple[Reasoning, ...]:
        for waiting in self.waiting:  # thinking after everything: sent first
            self._keep(*waiting, None)
        self.waiting.clear()
        return tuple(self.parts)

    def _keep(self, kind: str, block: Any, call_id: str | None) -> None:
        part = kept(kind, block, self.model, call_id)
        if part is not None:
            self.parts.append(part)


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def blocks_for(reasoning: Sequence[Reasoning], model: str, call_id: str | None = None
               ) -> list[dict[str, Any]]:
    """The thinking blocks of a message that `model` may be sent back, as they came: those
    that go first (`call_id` None), or those that go right before that tool use."""
    return [dict(r.data) for r in own_reasoning(reasoning, ORIGIN, model)
            if r.kind in KINDS and r.call_id == call_id]


def merged(earlier: list[dict[str, Any]], later: list[dict[str, Any]]
           ) -> list[dict[str, Any]]:
    """Two consecutive assistant responses' blocks as one turn: the later one's leading
    thinking goes first (a turn that calls tools must start with thinking)."""
    lead = 0
    while lead < len(later) and later[lead]["type"] in KINDS:
        lead += 1
    return [*later[:lead], *earlier, *later[lead:]]


def unsigned_calls_as_text(turns: list[dict[str, Any]]) -> None:
    """When the final assistant turn calls tools without starting with thinking, its calls
    and their results become text: the API refuses such a turn while thinking is on."""
    last = next((i for i in range(len(turns) - 1, -1, -1)
                 if turns[i]["role"] == "assistant"), None)
    if last is None:
        return
    blocks = turns[last]["content"]
    if blocks[0]["type"] in KINDS or not any(b["type"] == "tool_use" for b in blocks):
        return
    names: dict[str, str] = {}
    text: list[dict[str, Any]] = []
    for b in blocks:
        if b["type"] == "tool_use":
            names[b["id"]] = b["name"]
            text.append({"type": "text", "text": f"[called {b['name']} with "
                                                 f"{json.dumps(b['input'])}]"})
        else:
            text.append(b)
    turns[last]["content"] = text
    if last + 1 < len(turns):
        answer = turns[last + 1]["content"]
        turns[last + 1]["content"] = [_result_text(b, names) for b in answer]


def _result_text(block: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    if block["type"] != "tool_result":
        return block
    label = "error" if block.get("is_error") else "result"
    name = names.get(block["tool_use_id"], "the call")
    return {"type": "text", "text": f"[{label} of {name}] {block['content']}"}


def relaxed(choice: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A tool choice thinking allows: a forcing one (`any`, `tool`) becomes `auto`, with
    the instruction that asks for the call instead (None: nothing to ask)."""
    kind = choice.get("type")
    if kind not in ("any", "tool"):
        return choice, None
    auto: dict[str, Any] = {"type": "auto"}
    if "disable_parallel_tool_use" in choice:
        auto["disable_parallel_tool_use"] = choice["disable_parallel_tool_use"]
    if kind == "tool":
        return auto, f"Call the {choice['name']} tool in this response."
    return auto, "Call one of your tools in this response; do not answer in words."


def ask(turns: list[dict[str, Any]], instruction: str) -> None:
    """Add an instruction to the last user turn (the system text, and with it the prompt
    cache's prefix, stays as it is)."""
    turns[-1]["content"] = [*turns[-1]["content"], {"type": "text", "text": instruction}]
