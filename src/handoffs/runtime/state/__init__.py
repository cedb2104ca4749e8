"""The state layer: a turn's data (`turn`), its lines of work and outcomes (`leg`), its
result (`result`), and the protocols of what it needs from outside (`host`)."""

from .leg import Answer, Fail, Leg, Outcome, Pause, Transfer
from .turn import TURN_EVENTS, Turn, append, failed, finish, history_of, result, turn_text

__all__ = ["TURN_EVENTS", "Answer", "Fail", "Leg", "Outcome", "Pause", "Transfer", "Turn",
           "append", "failed", "finish", "history_of", "result", "turn_text"]
