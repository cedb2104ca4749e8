// Why the conversation moved: every handoff record (source, target, kind, explanation,
// payload), refused requests with their code and the sentence the model got, tool calls
// and results, guardrail trips, and per turn how long each agent and each model call took
// (from the events' timestamps).

import { badge, clock, el, ms, preview } from "./team.js";

// Events an agent's model produces: the time since that agent's previous event is the
// model call that produced it.
const MODEL_OUTPUT = new Set(["message", "tool_called", "handoff_requested"]);
const MODEL_INPUT = new Set(["agent_started", "tool_result", "agent_returned", "handoff_rejected"]);

export class Timeline {
  constructor(list, team) {
    this.list = list;
    this.team = team;
    this.turn = null; // {n, events, list}
    this.records = new Map(); // record id -> <li> of its handoff, waiting for its payload
  }

  clear() {
    this.list.replaceChildren();
    this.turn = null;
    this.records.clear();
  }

  handle(e) {
    if (!this.turn || this.turn.n !== e.turn || e.type === "run_started") this.startTurn(e);
    this.turn.events.push(e);
    const item = this.item(e);
    if (item) this.turn.list.append(item);
    if (e.type === "run_completed" || e.type === "run_failed") this.endTurn(e);
  }

  startTurn(e) {
    const list = el("ol", { class: "events" });
    const head = el("h3", {}, `Turn ${e.turn}`, el("span", { class: "at" }, clock(e.at)));
    const section = el("li", { class: "turn", "data-turn": e.turn }, head, list);
    this.list.append(section);
    this.turn = { n: e.turn, events: [], list, section };
  }

  entry(kind, e, ...children) {
    return el("li", { class: `entry ${kind}`, "data-type": e.type, "data-seq": e.seq },
      el("span", { class: "kind" }, kind), el("div", { class: "body" }, ...children));
  }

  item(e) {
    const t = this.team;
    switch (e.type) {
      case "agent_handoff": {
        const node = this.entry(e.returns ? "delegation" : "handoff", e,
          el("div", {}, badge(t, e.source, "small"), " → ", badge(t, e.target, "small")),
          el("div", { class: "meta" }, `kind: ${e.reason}${e.returns ? " · returns an answer" : ""}`),
          e.explanation ? el("div", { class: "why" }, e.explanation) : null);
        if (e.record_id) this.records.set(e.record_id, node);
        return node;
      }
      case "handoff_rejected":
        return this.entry("refused", e,
          el("div", {}, badge(t, e.agent, "small"), " → ", badge(t, e.target, "small"), " ",
            el("code", {}, e.code)),
          el("div", { class: "why" }, e.message));
      case "tool_called":
        return this.entry("tool", e, el("div", {}, badge(t, e.agent, "small"), " ",
          el("code", {}, e.tool)), el("div", { class: "payload" }, preview(e.arguments)));
      case "tool_result":
        return this.entry(e.is_error ? "tool error" : "result", e,
          el("div", {}, el("code", {}, e.tool)), el("div", { class: "payload" }, preview(e.text)));
      case "agent_returned":
        return this.entry("returned", e, el("div", {}, badge(t, e.source, "small"), " → ",
          badge(t, e.target, "small")), el("div", { class: "payload" }, preview(e.text)));
      case "guardrail_tripped":
        return this.entry("guardrail", e, el("div", {}, badge(t, e.agent, "small"), " ",
          el("code", {}, e.guardrail), ` (${e.stage})`), el("div", { class: "why" }, e.message));
      case "human_waiting":
        return this.entry("waiting", e, el("div", {}, badge(t, e.agent, "small"), " waits for a person"));
      case "run_failed":
        return this.entry("failed", e, el("code", {}, e.code), el("div", { class: "why" }, e.message));
      default:
        return null;
    }
  }

  endTurn(e) {
    const events = this.turn.events;
    const start = events[0].at;
    const agents = new Map(); // agent -> seconds
    const calls = []; // [agent, seconds]
    const since = new Map(); // agent -> time of its last input
    let current = null;
    let currentAt = start;
    const switchTo = (agent, at) => {
      if (current) agents.set(current, (agents.get(current) || 0) + at - currentAt);
      current = agent;
      currentAt = at;
    };
    for (const ev of events) {
      if (ev.type === "agent_started") switchTo(ev.agent, ev.at);
      if (ev.type === "agent_returned") switchTo(ev.target, ev.at);
      if (MODEL_INPUT.has(ev.type)) since.set(ev.type === "agent_returned" ? ev.target : ev.agent, ev.at);
      if (MODEL_OUTPUT.has(ev.type) && since.has(ev.agent)) {
        calls.push([ev.agent, ev.at - since.get(ev.agent)]);
        since.delete(ev.agent);
      }
    }
    if (current) agents.set(current, (agents.get(current) || 0) + e.at - currentAt);
    const rows = [...agents].map(([a, s]) => el("tr", {},
      el("th", { scope: "row" }, badge(this.team, a, "small")), el("td", {}, ms(s)),
      el("td", {}, calls.filter(([c]) => c === a).map(([, s2]) => ms(s2)).join(", ") || "–")));
    this.turn.section.append(el("table", { class: "timing" },
      el("caption", {}, `Turn ${e.turn}: ${ms(e.at - start)} in all · ${e.status}`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "agent"),
        el("th", { scope: "col" }, "time"), el("th", { scope: "col" }, "model calls"))),
      el("tbody", {}, rows)));
  }

  /** Add what only the stored records know (payloads, user picks). */
  enrich(records) {
    for (const r of records || []) {
      const node = this.records.get(r.id);
      if (node && r.payload !== undefined && r.payload !== null && !node.querySelector(".payload")) {
        node.querySelector(".body").append(el("div", { class: "payload" }, `payload: ${preview(r.payload)}`));
      }
    }
  }

  /** A pick the user made (not an event of a turn). */
  picked(source, target, refusal) {
    const fake = { type: "pick", seq: "" };
    const node = refusal
      ? this.entry("refused", fake, el("div", {}, "pick ", badge(this.team, target, "small"), " ",
        el("code", {}, refusal.code)), el("div", { class: "why" }, refusal.message))
      : this.entry("handoff", fake, el("div", {}, badge(this.team, source, "small"), " → ",
        badge(this.team, target, "small")), el("div", { class: "meta" }, "kind: user_request"));
    (this.turn ? this.turn.list : this.list).append(node);
  }
}
