// The conversation, drawn from the session's events: who speaks (icon, name, colour),
// answers streaming token by token, handoffs inline where they happened, a next-turn
// transfer saying who answers next, and a delegate's work folded under its caller.

import { badge, el, preview } from "./team.js";

const REASONS = {
  llm: "chosen by the agent", programmatic: "by code", user_request: "picked by the user",
  error_recovery: "after a failure", plan_step: "plan step", escalation: "escalation",
};

export class Chat {
  /**
   * @param {HTMLElement} list an <ol> the messages go into
   * @param {import("./team.js").TeamInfo} team
   * @param {{userLabel?: string, onStatus?: (text: string) => void}} options
   */
  constructor(list, team, options = {}) {
    this.list = list;
    this.team = team;
    this.userLabel = options.userLabel || "You";
    this.onStatus = options.onStatus || (() => {});
    this.streaming = new Map(); // agent -> the <p> its streamed text goes into
    this.delegations = new Map(); // delegate agent -> {fold, caller}
  }

  clear() {
    this.list.replaceChildren();
    this.streaming.clear();
    this.delegations.clear();
  }

  /** Where an agent's output goes: under its caller's step if it is a delegate. */
  container(agent) {
    const d = this.delegations.get(agent);
    return d ? d.fold : this.list;
  }

  add(node, agent) {
    this.container(agent).append(node);
    node.scrollIntoView?.({ block: "nearest" });
    return node;
  }

  handle(e) {
    const a = e.agent;
    switch (e.type) {
      case "run_started":
        this.streaming.clear();
        this.delegations.clear();
        this.list.append(el("li", { class: "msg user", "data-seq": e.seq },
          el("div", { class: "who" }, el("span", { class: "badge user" }, this.userLabel)),
          el("p", { class: "text" }, e.text)));
        this.onStatus(`${this.team.label(a)} is reading…`);
        break;
      case "agent_started":
        this.onStatus(`${this.team.label(a)} is answering…`);
        break;
      case "text_delta": {
        let p = this.streaming.get(a);
        if (!p) {
          p = el("p", { class: "text" });
          this.add(this.bubble(a, p, "streaming"), a);
          this.streaming.set(a, p);
        }
        p.append(e.text);
        break;
      }
      case "message": {
        const p = this.streaming.get(a);
        if (p) {
          p.textContent = e.text;
          p.closest(".msg")?.classList.remove("streaming");
          p.closest(".msg")?.setAttribute("data-seq", e.seq);
          this.streaming.delete(a);
        } else {
          this.add(this.bubble(a, el("p", { class: "text" }, e.text), "", e.seq), a);
        }
        break;
      }
      case "tool_called":
        this.add(el("li", { class: "step tool", "data-seq": e.seq },
          el("span", { class: "glyph", "aria-hidden": "true" }, "🔧"),
          el("span", {}, `${this.team.label(a)} calls `),
          el("code", {}, `${e.tool}(${preview(e.arguments, 80)})`)), a);
        break;
      case "tool_result":
        if (e.is_error) {
          this.add(el("li", { class: "step tool error", "data-seq": e.seq },
            el("span", { class: "glyph", "aria-hidden": "true" }, "⚠"),
            `${e.tool} failed: ${preview(e.text, 120)}`), a);
        }
        break;
      case "agent_handoff":
        this.handoff(e);
        break;
      case "handoff_rejected":
        this.add(el("li", { class: "step refused", "data-seq": e.seq },
          el("span", { class: "glyph", "aria-hidden": "true" }, "⛔"),
          el("span", {}, `${this.team.label(a)} → ${this.team.label(e.target)} refused `),
          el("code", {}, e.code), el("span", { class: "sentence" }, `: ${e.message}`)), a);
        break;
      case "agent_returned": {
        const d = this.delegations.get(e.source);
        if (d) {
          d.step.classList.add(e.ok ? "returned" : "failed");
          d.summary.append(el("span", { class: "tag" }, e.ok ? "answered" : "failed"));
          this.delegations.delete(e.source);
        }
        break;
      }
      case "guardrail_tripped":
        this.add(el("li", { class: "step guardrail", "data-seq": e.seq },
          el("span", { class: "glyph", "aria-hidden": "true" }, "🛡"),
          `${e.guardrail} (${e.stage}) stopped ${this.team.label(a)}: ${e.message}`), a);
        break;
      case "human_waiting":
        this.list.append(el("li", { class: "step waiting", "data-seq": e.seq, role: "status" },
          el("span", { class: "glyph", "aria-hidden": "true" }, "⏳"),
          `Waiting for ${this.team.label(a)}: a person will answer here.`));
        break;
      case "approval_requested":
        this.list.append(el("li", { class: "step waiting approval", "data-seq": e.seq, role: "status" },
          el("span", { class: "glyph", "aria-hidden": "true" }, "⏳"),
          `${this.team.label(a)} waits for a person to approve `, el("code", {}, e.tool), "."));
        break;
      case "approval_decided":
        this.list.append(el("li", { class: "step decided", "data-seq": e.seq, role: "status" },
          el("span", { class: "glyph", "aria-hidden": "true" }, e.approved ? "✔" : "✖"),
          `A person ${e.approved ? "approved" : "rejected"} `, el("code", {}, e.tool),
          e.reason ? `: ${e.reason}` : "."));
        break;
      case "run_completed":
        this.streaming.clear();
        this.onStatus(e.status === "waiting_for_approval"
          ? `Waiting for a person to approve ${this.team.label(e.agent)}'s request`
          : e.status === "waiting_for_human"
          ? `Waiting for ${this.team.label(e.agent)}`
          : e.status === "handed_off" ? `${this.team.label(e.agent)} will answer your next message` : "");
        break;
      case "run_interrupted":
        this.streaming.clear();
        this.list.append(el("li", { class: "step waiting", "data-seq": e.seq, role: "status" },
          el("span", { class: "glyph", "aria-hidden": "true" }, "↺"),
          "The previous turn stopped before it finished; this one answers its message."));
        break;
      case "run_failed":
        this.streaming.clear();
        this.list.append(el("li", { class: "step failed", "data-seq": e.seq, role: "alert" },
          el("span", { class: "glyph", "aria-hidden": "true" }, "✖"),
          el("span", {}, "The turn failed "), el("code", {}, e.code || "error"),
          `: ${e.message || ""}`));
        this.onStatus("");
        break;
      default:
        break;
    }
  }

  bubble(agent, text, extra = "", seq = undefined) {
    const info = this.team.agent(agent);
    return el("li", {
      class: `msg agent ${info.human ? "human" : ""} ${extra}`.trim(), "data-agent": agent,
      "data-seq": seq, style: { "--agent-color": info.color || "#6b7280" },
    }, el("div", { class: "who" }, badge(this.team, agent),
      info.human ? el("span", { class: "tag" }, "human") : null), text);
  }

  handoff(e) {
    const route = this.team.route(e.source, e.target);
    const why = e.explanation ? `: ${e.explanation}` : "";
    const kind = REASONS[e.reason] || e.reason;
    if (e.returns) {
      const summary = el("summary", {},
        badge(this.team, e.source, "small"), el("span", { class: "verb" }, " asks "),
        badge(this.team, e.target, "small"), el("span", { class: "why" }, why));
      const fold = el("ol", { class: "fold" });
      const step = el("li", { class: "step delegation", "data-seq": e.seq },
        el("details", { open: true }, summary, fold));
      this.add(step, e.source);
      this.delegations.set(e.target, { fold, step, summary, caller: e.source });
      return;
    }
    const next = route && route.kind === "next_turn";
    this.add(el("li", {
      class: `step handoff ${next ? "next-turn" : ""}`.trim(), "data-seq": e.seq,
      "data-source": e.source, "data-target": e.target,
    },
    el("span", { class: "glyph", "aria-hidden": "true" }, "⇢"),
    badge(this.team, e.source, "small"), el("span", { class: "arrow" }, " → "),
    badge(this.team, e.target, "small"),
    el("span", { class: "why" }, why),
    el("span", { class: "tag" }, kind),
    next ? el("span", { class: "next" }, `${this.team.label(e.target)} will answer your next message.`) : null),
    e.source);
  }

  /** A pick the user made (picks are records, not events of a turn). */
  picked(source, target) {
    this.list.append(el("li", { class: "step handoff picked", "data-source": source, "data-target": target },
      el("span", { class: "glyph", "aria-hidden": "true" }, "⇢"),
      badge(this.team, source, "small"), el("span", { class: "arrow" }, " → "),
      badge(this.team, target, "small"), el("span", { class: "why" }, `: ${this.userLabel} picked this agent`),
      el("span", { class: "tag" }, REASONS.user_request)));
  }
}
