"""handoffs: a handoff runtime for multi-agent LLM systems.

Agents pass a conversation, or a task, to one another: the model calls a
`transfer_to_<agent>` tool, a user picks an agent, code hands off, a failing agent
escalates. The runner validates each request against a policy, records it, and keeps
the session's active agent, so the next message goes to whoever took over.
"""

from typing import TYPE_CHECKING, Any

from .core.agent import Agent, HumanAgent
from .core.context import HandoffContext, RunContext
from .core.events import Event
from .core.guardrails import GuardrailResult
from .core.handoff import Handoff, HandoffReason, HandoffRecord
from .core.messages import AssistantMessage, Message, Note, ToolCall, ToolResult, UserMessage
from .core.policy import HandoffPolicy, Rejection
from .core.session import SessionState
from .core.team import Team
from .core.tools import HandoffTo, Tool, tool
from .errors import HandoffsError, ModelError, RunFailed, TeamError

if TYPE_CHECKING:
    from .runtime.result import RunError, RunResult, RunStatus
    from .runtime.runner import Runner
    from .runtime.summary import Summarizer
    from .stores.memory import MemoryStore

# The runtime pulls in asyncio (about 30 ms here); it loads on first use of these names,
# so `import handoffs` and defining agents and teams stay light (PEP 562).
_LAZY = {
    "Runner": "runtime.runner",
    "RunResult": "runtime.result",
    "RunStatus": "runtime.result",
    "RunError": "runtime.result",
    "Summarizer": "runtime.summary",
    "MemoryStore": "stores.memory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'handoffs' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AssistantMessage",
    "Event",
    "GuardrailResult",
    "Handoff",
    "HandoffContext",
    "HandoffPolicy",
    "HandoffReason",
    "HandoffRecord",
    "HandoffTo",
    "HandoffsError",
    "HumanAgent",
    "MemoryStore",
    "Message",
    "ModelError",
    "Note",
    "Rejection",
    "RunContext",
    "RunError",
    "RunFailed",
    "RunResult",
    "RunStatus",
    "Runner",
    "SessionState",
    "Summarizer",
    "Team",
    "TeamError",
    "Tool",
    "ToolCall",
    "ToolResult",
    "UserMessage",
    "__version__",
    "tool",
]
