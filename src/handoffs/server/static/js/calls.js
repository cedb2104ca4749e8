// The inspector's model calls: for each `model_request` / `model_response` pair
// (`Runner(inspect=True)`), the exact request the model got (system text, the history
// view after the route's filter with the handoff's note, the tools offered) beside the
// transcript it was filtered from, and the raw response with its tokens and latency.
// Calls are grouped by turn, each turn with its "Fork before turn N"; with the operator
// key each answered call can be edited and made again (js/rerun.js).

import { rerunPanel, tokens } from "./rerun.js";
import { badge, el, ms } from "./team.js";

const KIND = { user: "user", assistant: "assistant", tool_result: "tool result", note: "note" };

function json(value) {
  return JSON.stringify(value, null, 2);
}

/** One transcript message as a row: its kind, its agent, its text and calls. */
function row(team, m, i) {
  const calls = (m.tool_calls || []).map((c) =>
    el("div", { class: "call-line" }, el("code", {}, `${c.name}(${c.arguments})`),
      c.handoff ? el("span", { class: "tag" }, c.handoff) : null));
  return el("li", { class: `row ${m.kind}`, "data-index": i },
    el("div", { class: "row-head" }, el("span", { class: "kind" }, KIND[m.kind] || m.kind),
      m.agent && m.kind !== "user" ? badge(team, m.agent, "small") : null,
      m.name ? el("code", {}, m.name) : null, m.to_model ? el("span", { class: "tag" }, "to the model") : null),
    m.text ? el("div", { class: "row-text", dir: "auto", tabindex: "0" }, m.text) : null, ...calls);
}

export class ModelCalls {
  /**
   * @param {HTMLElement} list the <ol> calls go into
   * @param {import("./team.js").TeamInfo} team
   * @param {{fork: (turn: number, button: HTMLButtonElement) => void,
   *   rerun: Function, forkWith: Function} | null} actions the operator's (null: none)
   */
  constructor(list, team, actions = null) {
    this.list = list;
    this.team = team;
    this.actions = actions;
    this.clear();
  }

  clear() {
    this.list.replaceChildren();
    this.turns = new Map(); // turn -> the <ol> of its calls
    this.open = new Map(); // "turn/call/agent" -> the call waiting for its response
    this.transcript = [];
    this.lastView = new Map(); // line -> the record id that opened the view last seen
  }

  /** The session's transcript (each call's "before the filter" is a prefix of it). */
  setTranscript(messages) {
    this.transcript = messages || [];
    for (const item of this.list.querySelectorAll(".call details[open]")) item.fill?.();
  }

  handle(e) {
    if (e.type === "model_request") this.request(e);
    else if (e.type === "model_response") this.response(e);
  }

  key(e) {
    return `${e.turn}/${e.call}/${e.agent}`;
  }

  request(e) {
    const line = e.line || "";
    const record = e.view && (e.view.record_id || e.view.delegation);
    const handed = record && this.lastView.get(line) !== record;
    this.lastView.set(line, record);
    const outcome = el("span", { class: "outcome muted" }, "waiting for the model…");
    const summary = el("summary", {},
      el("span", { class: "where" }, `Turn ${e.turn} · call ${e.call}`), " ",
      badge(this.team, e.agent, "small"),
      e.line ? el("span", { class: "tag" }, "delegated task") : null,
      handed ? el("span", { class: "tag handed" },
        `after a handoff · view: ${e.view.mode || "delegation"}`) : null, " ", outcome);
    const details = el("details", { open: handed || null }, summary);
    const item = el("li", { class: "call", "data-agent": e.agent, "data-turn": e.turn,
      "data-call": e.call }, details);
    const views = el("div", { class: "views" });
    const body = el("div", { class: "call-body" },
      e.redacted ? el("p", { class: "note" }, "Texts are redacted: the server does not "
        + "capture content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT).") : null,
      el("h4", {}, "System text"), el("pre", { class: "system", dir: "auto", tabindex: "0" }, e.system || "(none)"),
      views,
      el("h4", {}, `Tools offered (${e.tools.length})`),
      el("ul", { class: "tools" }, ...e.tools.map((t) => el("li", {},
        el("code", {}, t.name), t.description ? ` — ${t.description}` : "",
        el("details", { class: "params" }, el("summary", {}, "parameters"),
          el("pre", { tabindex: "0" }, json(t.parameters)))))),
      el("p", { class: "meta" }, `tool choice: ${e.tool_choice ?? "provider default"}`,
        Object.keys(e.settings || {}).length ? ` · settings: ${JSON.stringify(e.settings)}` : ""),
      el("h4", {}, "Response"), el("div", { class: "response" }, outcome.cloneNode(true)),
      el("details", { class: "shared" }, el("summary", {}, "Shared memory at this call"),
        el("pre", { tabindex: "0" }, json(e.shared))));
    details.append(body);
    const fill = () => {
      const before = this.transcript.slice(0, e.view ? e.view.transcript : 0);
      const after = e.messages;
      views.replaceChildren(
        el("div", { class: "view before" },
          el("h4", {}, `Before the filter: the transcript (${before.length} messages)`),
          el("ol", { class: "rows", tabindex: "0" }, ...before.map((m, i) => row(this.team, m, i)))),
        el("div", { class: "view after" },
          el("h4", {}, `After the filter: what the model got (${after.length} messages)`),
          el("ol", { class: "rows", tabindex: "0" }, ...after.map((m, i) => row(this.team, m, i)))));
    };
    details.fill = fill;
    details.addEventListener("toggle", () => { if (details.open) fill(); });
    if (handed) fill();
    this.group(e.turn).append(item);
    this.open.set(this.key(e), { item, outcome, body, request: e });
  }

  /** The list of turn `n`'s calls, under its heading (made on its first call). */
  group(n) {
    let calls = this.turns.get(n);
    if (calls) return calls;
    calls = el("ol", { class: "turn-call-list" });
    const head = el("div", { class: "turn-head" },
      el("h4", { id: `calls-turn-${n}`, tabindex: "-1" }, `Turn ${n}`),
      this.actions ? el("button", { type: "button", class: "fork", "data-turn": String(n),
        title: `A new session holding this one as it was before turn ${n}`,
        onclick: (ev) => this.actions.fork(n, ev.currentTarget) }, `Fork before turn ${n}`)
        : null);
    const section = el("li", { class: "turn-calls", "data-turn": String(n) }, head, calls);
    const after = [...this.list.children].find((c) => Number(c.dataset.turn) > n);
    this.list.insertBefore(section, after || null);
    this.turns.set(n, calls);
    return calls;
  }

  response(e) {
    const call = this.open.get(this.key(e));
    if (!call) return;
    this.open.delete(this.key(e));
    const count = tokens(e.usage);
    const what = e.error ? `failed: ${e.error.code}`
      : e.tool_calls && e.tool_calls.length ? `called ${e.tool_calls.map((c) => c.name).join(", ")}`
      : "answered";
    call.outcome.className = `outcome${e.error ? " failed" : ""}`;
    call.outcome.textContent = `${ms(e.latency)} · ${count} · ${what}`;
    call.item.dataset.latency = String(e.latency);
    const box = call.body.querySelector(".response");
    box.replaceChildren(...[
      e.error ? el("p", { class: "error-text" }, `${e.error.code}: ${e.error.message}`) : null,
      e.text ? el("pre", { class: "text", dir: "auto", tabindex: "0" }, e.text) : null,
      ...(e.tool_calls || []).map((c) => el("div", { class: "call-line" },
        el("code", {}, `${c.name}(${c.arguments})`), el("span", { class: "muted" }, ` id ${c.id}`))),
      el("p", { class: "meta" }, `${count} · ${ms(e.latency)}${e.model ? ` · model ${e.model}` : ""}`),
      this.actions && !call.request.redacted
        ? rerunPanel(call.request, e, this.actions) : null,
    ].filter(Boolean));
  }
}
