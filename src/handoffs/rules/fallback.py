"""What `RuleModel` does when none of an agent's rules applies.

In order, the first that works:

1. The agent's latest calls were answered: it says what came back (a tool's result, a
   delegate's answer, a refused handoff). The model's `default` template, when given,
   answers instead.
2. The message asks for a person ("can a human look at this?") and the agent may hand
   off to a human agent: it escalates.
3. The message is more about another agent than about this one: it hands off toward that
   agent, along the first route of the shortest path through the team (back through
   triage, say). Without the team, the model knows only the routes a request offers, and
   only the agent that received the message hands off, so nothing bounces. A route's
   payload is filled from the message (ids like A-1001, numbers); when a required field
   cannot be found, the agent says what it needs instead of guessing.
4. The message names a tool ("order" names `lookup_order`) whose required arguments
   can be filled from it: the agent calls it when the tool is read-only
   (`@tool(read_only=True)`), every such tool in one response. A tool that may change
   something is never called on a keyword guess: when the message names only such
   tools, the agent answers with a placeholder naming the tool it would call
   ("(Offline placeholder) A real model would call issue_refund here, ...").
5. Otherwise nothing: the model answers with its default answer, a placeholder that says
   what a real model would do here: answer the message (or do the delegated task), or
   hand the conversation to the agents its routes lead to, or call its tools, each named.

A handoff is never made twice since the message, never to the agent that received the
message or handed it over, and never by a delegate (its answer goes back to its caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.team import Route, Team
from ..core.tools import ToolSpec
from .request import Seen, asks_task, is_handoff, payload_schema
from .words import PERSON, VERBS, arguments, mentions, topic, words

Call = tuple[str, dict[str, Any]]


@dataclass(slots=True)
class Move:
    """What the agent does: say `text`, make `calls` (or both)."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)


@dataclass(slots=True)
class Fallback:
    """The no-rule behaviour; `team` (when known) gives paths through other agents,
    display names, and who is a person."""

    team: Team | None = None
    route: bool = True
    """False: no handoffs (steps 2 and 3)."""
    tools: bool = True
    """False: no tool calls (step 4)."""

    def move(self, seen: Seen) -> Move | None:
        """Steps 2 to 4 of the module's doc; None when none applies."""
        if self.route and not seen.delegate:
            move = self._escalate(seen) or self._toward(seen)
            if move is not None:
                return move
        if self.tools:
            calls, effects = self._tool_calls(seen)
            if calls:
                return Move(calls=calls)
            if effects:
                return Move(f"(Offline placeholder) A real model would call "
                            f"{_either(effects)} here, with arguments it works out from the "
                            "conversation; the offline model does not call a tool that "
                            "changes something on a guess.")
        return None

    def results(self, seen: Seen) -> str:
        """Step 1: what the agent's latest calls brought back, in its words."""
        found: list[str] = []
        said: list[str] = []
        for r in seen.latest:
            if r.handoff == "rejected":  # its sentence is for the model, not the user
                said.append(f"I could not hand this to "
                            f"{self._label(self._target(seen, r.name))}; could you tell "
                            "me more?")
            elif r.handoff == "delegated":
                said.append(f"{self._label(self._target(seen, r.name))} says: {r.text}")
            else:
                found.append(f"{r.name}: {r.text}")
        if found:
            said.insert(0, "Here is what I found: " + "; ".join(found))
        return " ".join(said)

    def placeholder(self, seen: Seen) -> dict[str, str]:
        """Step 5's values for `DEFAULT_ANSWER`: `task`, what a real model would do with
        the message, and `could`, the routes and tools it could use instead."""
        quote = " ".join(seen.text.split())
        quote = quote if len(quote) <= 80 else quote[:79] + "…"
        if seen.delegate:
            task = f"do the task “{quote}” and answer {self._label(seen.source)}"
        else:
            task = f"answer “{quote}”" if quote else "answer"
        transfers: list[str] = []
        asks: list[str] = []
        for spec in seen.offered.values():
            if is_handoff(spec) and spec.name not in seen.done:
                name = self._target(seen, spec.name)
                agent = self.team.get(name) if self.team is not None else None
                about = agent.description.strip().rstrip(".") if agent is not None else ""
                shown = f"{self._label(name)} ({about})" if about else self._label(name)
                (asks if asks_task(spec) else transfers).append(shown)
        tools = [s.name for s in seen.offered.values()
                 if not is_handoff(s) and s.name not in seen.done]
        could = ""
        if transfers:
            what = "the task" if seen.delegate else "the conversation"
            could += f", or hand {what} to {_either(transfers)}"
        if asks:
            could += f", or ask {_either(asks)}"
        if tools:
            could += f", or call {_either(tools)}"
        if could:
            could += ". Mention one of them, or what it does, to see that happen"
        return {"task": task, "could": could}

    # -- handoffs --------------------------------------------------------------------

    def _escalate(self, seen: Seen) -> Move | None:
        if not PERSON.intersection(words(seen.text)):
            return None
        for spec in self._handoffs(seen):
            target = self._target(seen, spec.name)
            agent = self.team.get(target) if self.team is not None else None
            human = (agent.is_human if agent is not None else
                     bool(PERSON.intersection(words(f"{spec.name} {spec.description}"))))
            if human:
                return self._transfer(seen, spec, target, "The user asks for a person.")
        return None

    def _toward(self, seen: Seen) -> Move | None:
        said = sorted(set(topic(seen.text)))
        if not said:
            return None
        if self.team is None or seen.agent not in self.team:
            if not seen.first:
                return None
            best: tuple[int, ToolSpec, list[str]] | None = None
            for spec in self._handoffs(seen):
                name = topic(self._target(seen, spec.name).replace("_", " "))
                hits, score = _score(said, topic(spec.description) + name, name)
                if hits and (best is None or score > best[0]):
                    best = (score, spec, hits)
            if best is None:
                return None
            return self._transfer(seen, best[1], self._target(seen, best[1].name),
                                  f"The user mentions: {', '.join(best[2])}.")
        team = self.team
        me = team[seen.agent]
        _, own = _score(said, *_topic_of(me.name, me.label, me.description))
        routes = team.plan(seen.agent).routes
        ranked = []
        for i, agent in enumerate(team.agents):
            if agent.name in self._visited(seen):
                continue
            hits, score = _score(said, *_topic_of(agent.name, agent.label, agent.description))
            route = next((r for r in routes.values() if r.target.name == agent.name), None)
            if route is not None:  # the route's own description counts for its target
                more, extra = _score(said, topic(route.spec.description), [])
                if extra > score:
                    hits, score = more, extra
            if hits and score > own:
                ranked.append((-score, i, agent.name, hits))
        for _, _, goal, hits in sorted(ranked):
            hop = self._first_hop(seen, goal)
            if hop is not None:
                reason = f"The user mentions: {', '.join(hits)}"
                if hop.target.name != goal:
                    reason += f" (for {team[goal].label})"
                return self._transfer(seen, hop.spec, hop.target.name, reason + ".")
        return None

    def _first_hop(self, seen: Seen, goal: str) -> Route | None:
        """The offered route that starts the shortest path from the agent to `goal`."""
        assert self.team is not None
        usable = {s.name for s in self._handoffs(seen)}
        visited = self._visited(seen)
        frontier = [(r.target.name, r) for r in self.team.plan(seen.agent).routes.values()
                    if r.tool_name in usable and r.target.name not in visited
                    and (not r.handoff.returns or r.target.name == goal)]
        while frontier:
            following: list[tuple[str, Route]] = []
            for name, first in frontier:
                if name == goal:
                    return first
                if name in visited:
                    continue
                visited.add(name)
                following.extend((r.target.name, first)
                                 for r in self.team.plan(name).routes.values()
                                 if not r.handoff.returns)
            frontier = following
        return None

    def _transfer(self, seen: Seen, spec: ToolSpec, target: str, reason: str) -> Move:
        args: dict[str, Any] = {"reason": reason}
        if asks_task(spec):
            args["task"] = seen.text
        schema, nested = payload_schema(spec)
        if schema is not None:
            payload = arguments(schema, f"{seen.text}\n{seen.payload}")
            missing = [k for k in schema.get("required", ()) if k not in payload]
            if missing:
                return Move(f"To hand this to {self._label(target)} I need: "
                            f"{', '.join(missing)}.")
            if nested:
                args["payload"] = payload
            else:
                args.update(payload)
        return Move(calls=[(spec.name, args)])

    def _handoffs(self, seen: Seen) -> list[ToolSpec]:
        """The handoff tools offered and not used since the message, whose target has
        not had the message yet."""
        visited = self._visited(seen)
        return [s for s in seen.offered.values() if is_handoff(s) and s.name not in seen.done
                and self._target(seen, s.name) not in visited]

    def _visited(self, seen: Seen) -> set[str]:
        """Who had the message before this agent: who received it, who handed it over
        (a handoff note from an earlier turn does not count)."""
        source = None if seen.first else seen.source
        return {a for a in (seen.receiver, source, seen.agent) if a}

    def _target(self, seen: Seen, tool: str) -> str:
        """The agent a handoff tool leads to (its name without the prefix, with no team)."""
        if self.team is not None and seen.agent in self.team:
            route = self.team.plan(seen.agent).routes.get(tool)
            if route is not None:
                return route.target.name
        return tool.removeprefix("transfer_to_")

    def _label(self, agent: str) -> str:
        found = self.team.get(agent) if self.team is not None else None
        return found.label if found is not None else agent

    # -- tools -----------------------------------------------------------------------

    def _tool_calls(self, seen: Seen) -> tuple[list[Call], list[str]]:
        """The read-only tools the message names, with arguments filled from it; and
        the names of the tools with effects it names (not to be called on a guess)."""
        text = f"{seen.text}\n{seen.payload}"
        said = topic(text)
        calls = []
        effects = []
        for spec in seen.offered.values():
            if is_handoff(spec) or spec.name in seen.done:
                continue
            name = [w for w in topic(spec.name.replace("_", " ")) if w not in VERBS]
            if not any(mentions(w, name) for w in said):
                continue
            if not spec.read_only:
                effects.append(spec.name)
                continue
            args = arguments(spec.parameters, text)
            if all(k in args for k in spec.parameters.get("required", ())):
                calls.append((spec.name, args))
        return calls, effects


def _either(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _topic_of(name: str, label: str, description: str) -> tuple[list[str], list[str]]:
    """An agent's topic words and its name's words."""
    names = topic(f"{name.replace('_', ' ')} {label}")
    return topic(description) + names, names


def _score(said: Sequence[str], about: Sequence[str], name: Sequence[str]
           ) -> tuple[list[str], int]:
    """The message's words that `about` mentions, and a score: one per word, one more
    per word of the name."""
    hits = [w for w in said if mentions(w, about)]
    return hits, len(hits) + sum(1 for w in said if mentions(w, name))

