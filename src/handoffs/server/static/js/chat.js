// The conversation, drawn from the session's events: who speaks (icon, name, colour),
// answers streaming piece by piece (Markdown, rendered safely), handoffs inline where they
// happened, a next-turn transfer saying who answers next, a delegate's work folded under
// its caller, and a turn that a crash interrupted shown as interrupted.

import { LIMITS, folded } from "./fold.js";
import { render } from "./markdown.js";
import { badge, el, preview } from "./team.js";

/** A step line's glyph (decorative: the text says the same). */
const glyph = (g) => el("span", { class: "glyph", "aria-hidden": "true" }, g);

export class Chat {
  /**
   * @param {HTMLElement} list an <ol> the messages go into
   * @param {import("./team.js").TeamInfo} team
   * @param {{userLabel?: string, onStatus?: (text: string) => void,
   *   onAnnounce?: (text: string) => void, onRetry?: (text: string) => void,
   *   follower?: import("./follow.js").Follower}} options
   */
  constructor(list, team, options = {}) {
    this.list = list;
    this.team = team;
    this.follower = options.follower || null;
    this.userLabel = options.userLabel || "You";
    this.onStatus = options.onStatus || (() => {});
    this.onAnnounce = options.onAnnounce || (() => {});
    this.onRetry = options.onRetry || null;
    /** Each turn's message, for a failed turn's Retry. */
    this.asked = new Map();
    this.onInterrupted = options.onInterrupted || (() => {});
    this.clear();
  }

  clear() {
    this.list.replaceChildren();
    this.streaming = new Map(); // agent -> {box, text} its streamed answer goes into
    this.progress = new Map(); // agent -> the line saying how its running tool gets on
    this.delegations = new Map(); // delegate agent -> {fold, step, summary, caller}
    this.rejected = new Set(); // call ids a person rejected (their result is for the model)
    this.inRun = false;
    this.waiting = false; // a "waiting for a person" status is shown
    this.interruptedTexts = new Set(); // messages the store says a crash interrupted
    this.blocks = []; // interrupted turns shown: {turn, text, node, note}
    this.open = null; // the interrupted turn still unanswered, shown last
    this.deadTurn = null; // the turn a run_interrupted event just named
    this.follower?.reset();
  }

  /** Whether nothing was said yet (the page then greets and suggests). */
  get empty() {
    return !this.list.querySelector(".msg");
  }

  /** Where an agent's output goes: under its caller's step if it is a delegate. */
  container(agent) {
    const d = this.delegations.get(agent);
    return d ? d.fold : this.list;
  }

  /** Add `node` where it belongs; `message`: it is something said (a reader who scrolled
   * up is told of it). */
  add(node, agent, turn, message = false) {
    const box = this.container(agent);
    if (box === this.list && this.open && turn !== undefined && turn < this.open.turn) {
      this.list.insertBefore(node, this.open.node);
    } else {
      box.append(node);
    }
    this.follow(message);
    return node;
  }

  follow(message = false) {
    this.follower?.added(message);
  }

  handle(e) {
    const a = e.agent;
    if (e.type === "text_delta" || e.type === "message") this.settled(a);
    switch (e.type) {
      case "run_started":
        this.startRun(e);
        break;
      case "run_interrupted": // the next event, run_started, shows what became of it
        this.deadTurn = e.interrupted_turn;
        break;
      case "agent_started":
        this.onStatus(`${this.team.label(a)} is answering…`);
        break;
      case "text_delta": {
        let s = this.streaming.get(a);
        if (!s) {
          const box = el("div", { class: "text md", dir: "auto" });
          s = { box, text: "", frame: 0 };
          this.add(this.bubble(a, box, "streaming"), a, e.turn, true);
          this.streaming.set(a, s);
        }
        s.text += e.text;
        if (!s.frame) {
          s.frame = requestAnimationFrame(() => {
            s.frame = 0;
            s.box.replaceChildren(reachable(render(s.text)));
            this.follow();
          });
        }
        break;
      }
      case "message": {
        const s = this.streaming.get(a);
        if (s) {
          cancelAnimationFrame(s.frame);
          s.box.replaceChildren(reachable(render(e.text)));
          const msg = s.box.closest(".msg");
          msg?.classList.remove("streaming");
          msg?.setAttribute("data-seq", e.seq);
          this.streaming.delete(a);
          this.follow();
        } else {
          this.add(this.bubble(a, el("div", { class: "text md", dir: "auto" },
            reachable(render(e.text))), "", e.seq), a, e.turn, true);
        }
        if (!this.delegations.has(a)) this.onAnnounce(`${this.team.label(a)}: ${e.text}`);
        break;
      }
      case "answer_truncated": {
        // The output limit cut the answer: its bubble says so (a cut call's result does).
        if (e.tool) break;
        const s = this.streaming.get(a);
        const tag = el("span", { class: "tag cut", title: "cut off by the output limit"
          + (e.limit ? ` (${e.limit} tokens)` : "") }, e.delivered ? "cut off" : "cut off, not sent");
        if (s) {
          const msg = s.box.closest(".msg");
          msg?.querySelector(".who")?.append(tag);
          if (!e.delivered) { // asked again: the next answer gets a bubble of its own
            cancelAnimationFrame(s.frame);
            s.box.replaceChildren(reachable(render(s.text)));
            msg?.classList.remove("streaming");
            this.streaming.delete(a);
          }
        } else {
          this.add(el("li", { class: "step cut", "data-seq": e.seq }, glyph("✂"),
            `${this.team.label(a)}'s answer was cut off by the output limit`, tag), a, e.turn);
        }
        break;
      }
      case "tool_called":
        this.add(el("li", { class: "step tool", "data-seq": e.seq },
          glyph("🔧"), el("span", {}, `${this.team.label(a)} calls `),
          el("code", { dir: "auto" }, `${e.tool}(${preview(e.arguments, 80)})`)), a, e.turn);
        break;
      case "tool_progress": {
        // A running tool says how it gets on: one line per agent (a live region, its text
        // replaced by the latest), gone once the agent answers (or the turn ends).
        let line = this.progress.get(a);
        if (!line?.isConnected) {
          line = el("li", { class: "step progress", "data-agent": a,
            style: { "--agent-color": this.team.agent(a).color || "#6b7280" } },
          glyph("⋯"), el("span", { class: "said", role: "status", dir: "auto" }));
          this.add(line, a, e.turn);
          this.progress.set(a, line);
        }
        line.dataset.seq = e.seq;
        line.dataset.callId = e.call_id;
        line.querySelector(".said").textContent = e.message;
        this.follow();
        break;
      }
      case "tool_result":
        // A rejected call's result is the sentence the model reads; the person's
        // decision is already shown, in words meant for people.
        if (e.is_error && !this.rejected.has(e.call_id)) {
          this.add(el("li", { class: "step tool error", "data-seq": e.seq }, glyph("⚠"),
            el("span", { dir: "auto" }, `${e.tool} failed: ${preview(e.text, 120)}`)), a, e.turn,
          true);
        }
        break;
      case "agent_handoff":
        this.handoff(e);
        break;
      case "agent_changed":
        if (this.waiting && !this.team.agent(a).human) {
          this.waiting = false;
          this.onStatus(this.inRun ? "" : `${this.team.label(a)} answers your next message`);
        }
        break;
      case "handoff_rejected":
        if (!this.inRun) break; // a refused pick: the picker says so where it was made
        this.add(el("li", { class: "step refused", "data-seq": e.seq }, glyph("⛔"),
          el("span", {}, `${this.team.label(a)} → ${this.team.label(e.target)} refused `),
          el("code", {}, e.code), el("span", { class: "sentence", dir: "auto" }, `: ${e.message}`)),
        a, e.turn);
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
        if (e.reply != null) break;  // a refusal: the agent's answer (its text) says it
        this.add(el("li", { class: "step guardrail", "data-seq": e.seq }, glyph("🛡"),
          el("span", { dir: "auto" },
            `${e.guardrail} (${e.stage}) stopped ${this.team.label(a)}: ${e.message}`)), a, e.turn);
        break;
      case "human_waiting":
        this.waiting = true;
        this.add(el("li", { class: "step waiting", "data-seq": e.seq }, glyph("⏳"),
          `Waiting for ${this.team.label(a)}: a person will answer here.`), undefined, e.turn,
        true);
        this.onAnnounce(`Waiting for ${this.team.label(a)}.`);
        break;
      case "approval_requested":
        this.add(el("li", { class: "step waiting approval", "data-seq": e.seq }, glyph("⏳"),
          `${this.team.label(a)} waits for a person to approve `, el("code", {}, e.tool), "."),
        undefined, e.turn);
        break;
      case "approval_decided":
        if (!e.approved) this.rejected.add(e.call_id);
        this.add(el("li", { class: "step decided", "data-seq": e.seq },
          glyph(e.approved ? "✔" : "✖"),
          `A person ${e.approved ? "approved" : "rejected"} `, el("code", {}, e.tool),
          e.reason ? el("span", { dir: "auto" }, `: ${e.reason}`) : "."), undefined, e.turn);
        break;
      case "run_completed":
        this.endRun();
        this.waiting = e.status === "waiting_for_human" || e.status === "waiting_for_approval";
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
      case "run_failed": {
        // The customer's sentence (the server never sends a customer the failure's own
        // text: the inspector has it), and Retry, which sends the turn's message again.
        this.endRun();
        const said = e.message || "Something went wrong on our side; please try again.";
        const asked = this.asked.get(e.turn);
        const row = el("li", { class: "step failed", "data-seq": e.seq, "data-code": e.code || "error" },
          glyph("✖"), el("span", { class: "said", dir: "auto" }, said));
        if (this.onRetry && asked) {
          row.append(" ", el("button", { type: "button", class: "retry",
            onclick: () => this.onRetry(asked) }, "Retry"));
        }
        this.add(row, undefined, e.turn, true);
        this.onAnnounce(said);
        this.onStatus("");
        break;
      }
      default:
        break;
    }
  }

  startRun(e) {
    this.streaming.clear();
    this.delegations.clear();
    this.inRun = true;
    if (e.text) this.asked.set(e.turn, e.text);
    let text = e.text || "";
    const dead = this.deadTurn ?? e.turn - 1; // run_interrupted named it, else the one before
    this.deadTurn = null;
    const shown = this.blocks.find((b) => b.text && b.text === text && b.turn === e.turn);
    // A message a crash interrupted is answered with the next one (the turn's text holds
    // both): it is shown as its own, interrupted, message; the bubble holds the new one.
    const earlier = [...this.interruptedTexts].find((x) => text.startsWith(`${x}\n\n`));
    if (earlier !== undefined) {
      this.settle(dead, earlier, "Interrupted: the server stopped before answering; it was "
        + "answered with the next message.", e.turn);
      text = text.slice(earlier.length + 2);
    } else if (shown || (text && this.interruptedTexts.has(text))) {
      // The same message sent again after the interruption: answered now, once.
      this.settle(e.turn, text, "Interrupted, then sent again: answered below.", e.turn);
      text = "";
    }
    if (this.open && e.turn > this.open.turn) {
      this.settle(this.open.turn, this.open.text, "Interrupted: the server stopped before "
        + "answering; it was answered with the next message.", e.turn);
    }
    // A turn continued after a person's decision has no new message.
    if (text) {
      this.add(el("li", { class: "msg user", "data-seq": e.seq },
        el("div", { class: "who" }, el("span", { class: "badge user" }, this.userLabel)),
        folded("p", { class: "text", dir: "auto" }, text, LIMITS.bubble)), undefined, e.turn,
      true);
    }
    this.onStatus(`${this.team.label(e.agent)} is reading…`);
  }

  /** The agent answers: its progress line has done its job. */
  settled(agent) {
    this.progress.get(agent)?.remove();
    this.progress.delete(agent);
  }

  endRun() {
    for (const line of this.progress.values()) line.remove();
    this.progress.clear();
    this.streaming.clear();
    this.inRun = false;
  }

  /** The message of turn `turn`, stored but never answered (the server stopped): shown
   * last, with a button that sends it again. */
  interrupted(turn, text) {
    if (this.blocks.some((b) => b.turn === turn)) return;
    const b = this.block(turn, text);
    b.note.replaceChildren("Interrupted: the server stopped before answering. Your message "
      + "is kept, and the next message you send is answered together with it. ");
    if (this.onRetry && text) {
      b.note.append(el("button", { type: "button", class: "retry",
        onclick: () => this.onRetry(text) }, "Send it again"));
    }
    this.open = b;
    this.list.append(b.node);
    this.onStatus("Your last message was interrupted before it was answered.");
    this.onAnnounce("Your last message was interrupted before it was answered.");
  }

  block(turn, text) {
    const note = el("span", { class: "note" });
    const node = el("li", { class: "interrupted", "data-turn": turn },
      el("div", { class: "step failed" }, glyph("✖"), note));
    const b = { turn, text: null, node, note };
    this.blocks.push(b);
    this.setText(b, text);
    return b;
  }

  setText(b, text) {
    if (!text || b.text) return;
    b.text = text;
    b.node.prepend(el("div", { class: "msg user" },
      el("div", { class: "who" }, el("span", { class: "badge user" }, this.userLabel)),
      folded("p", { class: "text", dir: "auto" }, text, LIMITS.bubble)));
  }

  /** Interrupted turn `turn` (its message `text`, when known) as settled by turn `at`. */
  settle(turn, text, words, at) {
    let b = this.blocks.find((x) => x.turn === turn || (text && x.text === text));
    if (!b) {
      b = this.block(turn, text);
      this.add(b.node, undefined, at);
    }
    this.setText(b, text);
    b.note.replaceChildren(words);
    if (this.open === b) this.open = null;
    this.onInterrupted(b.turn);
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
    const whyNode = (text) => folded("span", { class: "why", dir: "auto" }, text, LIMITS.line);
    const kind = this.team.kind(e.reason, e.source);
    if (e.returns) {
      const summary = el("summary", {},
        badge(this.team, e.source, "small"), el("span", { class: "verb" }, " asks "),
        badge(this.team, e.target, "small"),
        // Inside <summary>: a preview, never a button of its own (the timeline folds it).
        el("span", { class: "why", dir: "auto" }, preview(why, LIMITS.line)));
      const fold = el("ol", { class: "fold" });
      const step = el("li", { class: "step delegation", "data-seq": e.seq },
        el("details", { open: true }, summary, fold));
      this.add(step, e.source, e.turn);
      this.delegations.set(e.target, { fold, step, summary, caller: e.source });
      return;
    }
    const next = route && route.kind === "next_turn";
    const picked = e.reason === "user_request";
    this.add(el("li", {
      class: `step handoff${next ? " next-turn" : ""}${picked ? " picked" : ""}`,
      "data-seq": e.seq, "data-source": e.source, "data-target": e.target,
    },
    glyph("⇢"),
    badge(this.team, e.source, "small"), el("span", { class: "arrow" }, " → "),
    badge(this.team, e.target, "small"),
    whyNode(picked ? `: ${this.userLabel} picked this agent` : why),
    el("span", { class: "tag" }, kind),
    next ? el("span", { class: "next" }, `${this.team.label(e.target)} will answer your next message.`) : null),
    this.inRun ? e.source : undefined, e.turn);
  }
}

/** A rendered answer whose code blocks and tables scroll sideways: each is reachable with
 * the keyboard, so its hidden part can be scrolled to (axe: scrollable-region-focusable). */
function reachable(fragment) {
  for (const box of fragment.querySelectorAll?.("pre, .md-table") || []) {
    box.tabIndex = 0;
  }
  return fragment;
}
