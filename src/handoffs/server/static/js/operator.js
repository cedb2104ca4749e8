// The operator console: the queue of customers waiting for a person (oldest first, each
// with how long it has waited and why, the count in the page's title, kept live), one
// session's conversation (opened at its newest message, following it, and saying when a
// new one arrives out of view) and why it was escalated, and the human's answer,
// optionally handing the conversation back to an AI agent along the human's routes; and
// the tool calls that wait for a person's approval, with Approve / Reject buttons.

import { call } from "./api.js";
import { Chat } from "./chat.js";
import { Connection } from "./connection.js";
import { ContextPanel } from "./context.js";
import { LIMITS, folded } from "./fold.js";
import { Follower } from "./follow.js";
import { TeamInfo, badge, count, el, preview, waited } from "./team.js";

const $ = (sel) => document.querySelector(sel);
const KEY = "handoffs.operatorKey";
const POLL_MS = 1500;

const op = { key: null, team: null, open: null, connection: null, chat: null, active: null,
  timer: null, follower: null, context: null };
const TITLE = document.title;
window.handoffsOperator = op;

const STATES = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…",
  closed: "offline", polling: "live · queue", signedOut: "signed out", refused: "stopped" };

/** The badge: the open session's stream, or, with none open, the queue's polling. */
function setConnection(state) {
  const node = $("#connection");
  node.dataset.state = state === "signedOut" ? "closed" : state;
  node.textContent = STATES[state];
}

/** Why a customer waits, in a line: who escalated and why, or which calls wait. */
function why(w) {
  if (w.reason === "approval") {
    return [el("span", { class: "approval-tag" }, "approval"), " ",
      `${w.tools.join(", ") || "a tool call"} waits for a decision`];
  }
  return [el("span", { class: "reason-tag" }, "escalation"), " ",
    w.source ? badge(op.team, w.source, "small") : null, " ",
    // Inside the row's button: a preview, never a button of its own (the console shows
    // the whole reason, folded, once the session is open).
    el("span", { class: "why", dir: "auto" }, preview(w.explanation, 160) || "no reason given")];
}

async function refreshQueue() {
  const data = await call("GET", "v1/queue", { token: op.key });
  const sessions = data.sessions; // oldest first, forks left out (the server's order)
  $("#queue-count").textContent = `(${sessions.length})`;
  document.title = sessions.length ? `(${sessions.length}) ${TITLE}` : TITLE;
  $("#queue-empty").hidden = sessions.length > 0;
  $("#queue").replaceChildren(...sessions.map((w) => el("li", {
    class: w.id === op.open ? "current" : "", "data-session": w.id, "data-reason": w.reason,
  }, el("button", { type: "button", class: "plain", onclick: () => openSession(w.id),
    "aria-current": w.id === op.open ? "true" : null },
  el("span", { class: "wait" }, `waiting ${waited(w.waited)}`), " ",
  el("span", { class: "sid" }, w.id), " ", badge(op.team, w.agent, "small"),
  el("span", { class: "queue-why" }, ...why(w)),
  el("span", { class: "muted" }, `turn ${w.turn} · ${count(w.messages, "message")}`)))));
}

async function showApprovals() {
  const box = $("#approvals");
  if (!op.open) return box.replaceChildren();
  const data = await call("GET", `v1/sessions/${encodeURIComponent(op.open)}/approvals`, { token: op.key });
  const waiting = data.approvals.filter((a) => !a.decision);
  if (!waiting.length) return box.replaceChildren();
  // Shown already (an event and the opening of the session both ask): keep what is there,
  // so a reason being typed is not wiped; otherwise carry typed reasons over by call.
  const shown = [...box.querySelectorAll(".approval")];
  if (shown.map((d) => d.dataset.call).join("\n") === waiting.map((a) => a.call_id).join("\n")) return;
  const typed = new Map(shown.map((d) => [d.dataset.call, d.querySelector(".reason").value]));
  box.replaceChildren(el("h3", {}, "Waiting for your approval"), ...waiting.map((a) => {
    const reason = el("input", { type: "text", class: "reason", placeholder: "reason (if you reject)", "aria-label": `Reason to reject ${a.tool}` });
    reason.value = typed.get(a.call_id) || "";
    const error = el("p", { class: "error", role: "alert" });
    const decide = async (approved) => {
      error.textContent = "";
      try {
        await call("POST", `v1/sessions/${encodeURIComponent(op.open)}/approvals/${encodeURIComponent(a.call_id)}`, {
          token: op.key, body: { approved, reason: approved ? "" : reason.value },
        });
        await showApprovals();
        await refreshQueue();
      } catch (err) {
        error.textContent = `Not decided (${err.code}): ${err.message}`;
      }
    };
    return el("div", { class: "approval", "data-call": a.call_id },
      badge(op.team, a.agent, "small"), " wants to call ", el("code", {}, a.tool),
      el("pre", { class: "arguments" }, preview(a.arguments, 600)),
      el("button", { type: "button", class: "approve", onclick: () => decide(true) }, "Approve"), " ",
      el("button", { type: "button", class: "reject", onclick: () => decide(false) }, "Reject"), " ",
      reason, error);
  }));
}

function schedule() {
  clearTimeout(op.timer);
  op.timer = setTimeout(async () => {
    try {
      await refreshQueue();
      if (!op.connection) setConnection("polling");
    } catch {
      if (!op.connection) setConnection("reconnecting"); // the next poll tries again
    }
    schedule();
  }, POLL_MS);
}

function setActive(name) {
  op.active = name;
  const human = op.team.agent(name).human;
  $("#reply").hidden = !human;
  $("#open-title").replaceChildren(`Session ${op.open} · speaking: `, badge(op.team, name));
  const back = op.team.routes.filter((r) => r.source === name && !op.team.agent(r.target).human);
  $("#handback").replaceChildren(el("option", { value: "" }, "stay with the customer"),
    ...back.map((r) => el("option", { value: r.target }, `hand back to ${op.team.label(r.target)}`)));
}

function showContext(transcript) {
  const records = transcript.handoffs || [];
  const escalation = [...records].reverse().find((r) => r.accepted !== false && op.team.agent(r.target).human);
  if (!escalation) {
    $("#context").replaceChildren();
    return;
  }
  $("#context").replaceChildren(el("h3", {}, "Why a person is needed"),
    el("dl", {},
      el("dt", {}, "from"), el("dd", {}, badge(op.team, escalation.source, "small"), " → ", badge(op.team, escalation.target, "small")),
      el("dt", {}, "kind"), el("dd", {}, op.team.kind(escalation.reason, escalation.source)),
      el("dt", {}, "reason"), folded("dd", { class: "why", dir: "auto" },
        escalation.explanation || "–", LIMITS.line),
      el("dt", {}, "payload"), el("dd", {}, el("code", {}, preview(escalation.payload, 400) || "none"))));
}

async function openSession(id) {
  op.connection?.close();
  op.open = id;
  const transcript = await call("GET", `v1/sessions/${encodeURIComponent(id)}/transcript`, { token: op.key });
  showContext(transcript);
  op.context ||= new ContextPanel($("#context-box"), $("#session-context"));
  const session = await call("GET", `v1/sessions/${encodeURIComponent(id)}`, { token: op.key });
  op.context.set(session.context);
  op.follower ||= new Follower($("#messages"), $("#new-below"));
  op.chat = new Chat($("#messages"), op.team, {
    userLabel: "Customer", onStatus: (t) => { $("#status").textContent = t; },
    onAnnounce: announce, follower: op.follower,
  });
  setActive(transcript.active_agent);
  op.connection = new Connection(id, op.key, (e) => {
    op.chat.handle(e);
    if (e.type === "agent_changed") setActive(e.agent);
    if (e.type === "context_changed") op.context.change(e.changed);
    if (e.type === "approval_requested" || e.type === "approval_decided") showApprovals().catch(() => {});
  }, setConnection, () => op.chat.clear());
  op.connection.open();
  await showApprovals();
  await refreshQueue();
  $("#text").focus();
}

async function reply(text, handoffTo) {
  if (!op.open) return;
  $("#reply-error").textContent = "";
  $("#send").disabled = true;
  try {
    const result = await call("POST", `v1/sessions/${encodeURIComponent(op.open)}/human`, {
      token: op.key, body: { text, handoff_to: handoffTo || null },
    });
    if (result.active_agent) setActive(result.active_agent.name);
    $("#text").value = "";
    await refreshQueue();
  } catch (err) {
    $("#reply-error").textContent = `Not sent (${err.code}): ${err.message}`;
  } finally {
    $("#send").disabled = false;
  }
}

async function login(key) {
  op.key = key;
  await refreshQueue(); // throws for a wrong key
  sessionStorage.setItem(KEY, key);
  $("#login .error").textContent = "";
  $("#login").hidden = true;
  $("#console").hidden = false;
  setConnection("polling");
  schedule();
}

/** Said once to a screen reader: a whole message, never its streamed pieces. */
function announce(text) {
  const box = $("#announce");
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 30);
}

/** The team, read once (retried while the server cannot be reached). */
async function team() {
  for (let attempt = 0; ; attempt++) {
    try {
      return new TeamInfo(await call("GET", "v1/team"));
    } catch {
      await new Promise((r) => setTimeout(r, Math.min(10, 2 ** attempt) * 1000));
    }
  }
}

async function main() {
  setConnection("signedOut");
  // The forms answer from the first moment, before the team is read.
  const ready = team().then((t) => { op.team = t; });
  $("#login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await ready;
      await login($("#key").value);
    } catch (err) {
      $("#login .error").textContent = `${err.code}: ${err.message}`;
    }
  });
  $("#reply").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("#text").value.trim();
    if (text) reply(text, $("#handback").value);
  });
  await ready;
  const saved = sessionStorage.getItem(KEY);
  if (saved) await login(saved).catch(() => sessionStorage.removeItem(KEY));
}

main();
