// Why the conversation moved: every handoff record (source, target, kind, explanation,
// payload), refused requests with their code and the sentence the model got, tool calls
// and results, guardrail trips, and per turn how long each agent and each model call took
// (from the events' timestamps).

import { LIMITS, folded } from "./fold.js";
import { badge, clock, el, ms, preview } from "./team.js";

// Events an agent's model produces: the time since that agent's previous event is the
// model call that produced it.
const MODEL_OUTPUT = new Set(["message", "tool_called", "handoff_requested"]);
const MODEL_INPUT = new Set(["agent_started", "tool_result", "agent_returned", "handoff_rejected"]);

export class Timeline {
  constructor(list, team) {
    this.list = list;
    this.team = team;
    this.clear();
  }

  clear() {
    this.list.replaceChildren();
    this.turn = null; // {n, events, list, section, parts, open}
    this.turns = new Map(); // turn number -> its section's state
    this.between = null; // the group of events outside any turn (picks, a person's reply)
    this.records = new Map(); // record id -> <li> of its handoff, waiting for its payload
  }

  handle(e) {
    const open = this.turn && this.turn.open;
    if (e.type === "run_started" && !(open && this.turn.n === e.turn)) this.startTurn(e);
    else if (e.type === "approval_decided" && !open && this.turns.has(e.turn)) this.startTurn(e);
    else if (e.type === "run_interrupted") this.interrupted(e.interrupted_turn, true);
    const group = this.turn && this.turn.open ? this.turn : this.outside(e);
    if (group.events) group.events.push(e);
    const item = this.item(e);
    if (item) group.list.append(item);
    if ((e.type === "run_completed" || e.type === "run_failed") && this.turn && this.turn.open) {
      this.endTurn(e);
      this.turn.open = false;
    }
  }

  /** A turn's section; a turn continued after a person's decision goes on in its own. */
  startTurn(e) {
    this.between = null;
    const known = this.turns.get(e.turn);
    if (known) {
      known.parts += 1;
      known.events = [];
      known.open = true;
      const list = el("ol", { class: "events" });
      known.section.append(el("p", { class: "part" }, `continued at ${clock(e.at)}`), list);
      known.list = list;
      this.turn = known;
      return;
    }
    const list = el("ol", { class: "events" });
    const head = el("h3", {}, `Turn ${e.turn}`, el("span", { class: "at" }, clock(e.at)));
    const section = el("li", { class: "turn", "data-turn": e.turn }, head, list);
    this.place(section, e.turn);
    this.turn = { n: e.turn, events: [], list, section, parts: 1, open: true };
    this.turns.set(e.turn, this.turn);
  }

  /** Sections stay in turn order, whatever order they are made in (an interrupted turn
   * is known from the session before its neighbours are replayed). */
  place(section, order) {
    section.dataset.order = String(order);
    const after = [...this.list.children].find((c) => Number(c.dataset.order) > order);
    this.list.insertBefore(section, after || null);
  }

  /** Events outside a turn: a user's pick, a person's answer or hand-back. */
  outside(e) {
    if (!this.between) {
      const list = el("ol", { class: "events" });
      const label = e.turn ? `After turn ${e.turn}` : "Before the first turn";
      this.place(el("li", { class: "between", "data-after": e.turn }, el("h3", {}, label), list),
        e.turn + 0.5);
      this.between = { list };
    }
    return this.between;
  }

  /** Turn `n` was interrupted (the server stopped) and never answered on its own. */
  interrupted(n, later = false) {
    let t = this.turns.get(n);
    if (!t) {
      const list = el("ol", { class: "events" });
      const section = el("li", { class: "turn interrupted", "data-turn": n },
        el("h3", {}, `Turn ${n}`), list);
      this.place(section, n);
      t = { n, events: [], list, section, parts: 1, open: false };
      this.turns.set(n, t);
    }
    if (!t.section.querySelector(".entry.interrupted")) {
      t.list.append(this.entry("interrupted", { type: "interrupted", seq: "" },
        el("div", { class: "why" }, later
          ? "The server stopped before it was answered; the next turn answered it."
          : "The server stopped before it was answered.")));
    }
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
          el("div", { class: "meta" }, t.kind(e.reason, e.source),
            e.returns ? " · returns an answer" : ""),
          e.explanation ? folded("div", { class: "why", dir: "auto" }, e.explanation,
            LIMITS.entry) : null);
        node.querySelector(".meta").title = `kind: ${e.reason}`;
        if (e.record_id) this.records.set(e.record_id, node);
        return node;
      }
      case "handoff_rejected":
        return this.entry("refused", e,
          el("div", {}, badge(t, e.agent, "small"), " → ", badge(t, e.target, "small"), " ",
            el("code", {}, e.code)),
          folded("div", { class: "why", dir: "auto" }, e.message, LIMITS.entry));
      case "tool_called":
        return this.entry("tool", e, el("div", {}, badge(t, e.agent, "small"), " ",
          el("code", {}, e.tool)), el("div", { class: "payload", dir: "auto" }, preview(e.arguments)));
      case "tool_result":
        return this.entry(e.is_error ? "tool error" : "result", e,
          el("div", {}, el("code", {}, e.tool)), el("div", { class: "payload", dir: "auto" }, preview(e.text)));
      case "agent_returned":
        return this.entry("returned", e, el("div", {}, badge(t, e.source, "small"), " → ",
          badge(t, e.target, "small")), el("div", { class: "payload", dir: "auto" }, preview(e.text)));
      case "guardrail_checked": {
        // Every verdict of the turn: which guardrail, on what, passed or not, and why.
        const node = this.entry("check", e, el("div", {}, badge(t, e.agent, "small"), " ",
          el("code", {}, e.name), ` (${e.stage}) `,
          el("strong", { class: e.passed ? "passed" : "tripped" }, e.passed ? "passed" : "tripped")),
          e.reasoning ? el("div", { class: "why", dir: "auto" }, e.reasoning) : null);
        node.dataset.passed = String(e.passed);
        return node;
      }
      case "guardrail_tripped":
        return this.entry(e.reply == null ? "guardrail" : "refusal", e,
          el("div", {}, badge(t, e.agent, "small"), " ",
            el("code", {}, e.guardrail), ` (${e.stage})`), el("div", { class: "why" }, e.message),
          e.reply == null ? null : el("div", { class: "payload", dir: "auto" }, `Answered: ${e.reply}`));
      case "human_waiting":
        return this.entry("waiting", e, el("div", {}, badge(t, e.agent, "small"), " waits for a person"));
      case "approval_requested":
        return this.entry("waiting", e, el("div", {}, badge(t, e.agent, "small"), " asks to call ",
          el("code", {}, e.tool)), el("div", { class: "payload" }, preview(e.arguments)));
      case "approval_decided":
        return this.entry(e.approved ? "approved" : "rejected", e, el("div", {}, el("code", {}, e.tool)),
          e.reason ? el("div", { class: "why", dir: "auto" }, e.reason) : null);
      case "message":
        return t.agent(e.agent).human
          ? this.entry("person", e, el("div", {}, badge(t, e.agent, "small"), " answered"),
            el("div", { class: "payload", dir: "auto" }, preview(e.text)))
          : null;
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
    const measured = events.filter((ev) => ev.type === "model_response");
    if (measured.length) calls.splice(0, calls.length, ...measured.map((ev) => [ev.agent, ev.latency]));
    const rows = [...agents].map(([a, s]) => el("tr", {},
      el("th", { scope: "row" }, badge(this.team, a, "small")), el("td", {}, ms(s)),
      el("td", {}, calls.filter(([c]) => c === a).map(([, s2]) => ms(s2)).join(", ") || "–")));
    this.turn.section.append(el("table", { class: "timing" },
      el("caption", {}, `Turn ${e.turn}${this.turn.parts > 1 ? `, part ${this.turn.parts}` : ""}: `
        + `${ms(e.at - start)} in all · ${e.status}`),
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
}
