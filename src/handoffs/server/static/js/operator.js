// The operator console: the queue of sessions waiting for a human (newest first, kept
// live), one session's conversation and why it was escalated, and the human's answer,
// optionally handing the conversation back to an AI agent along the human's routes; and
// the tool calls that wait for a person's approval, with Approve / Reject buttons.

import { call } from "./api.js";
import { Chat } from "./chat.js";
import { Connection } from "./connection.js";
import { TeamInfo, badge, clock, el, preview } from "./team.js";

const $ = (sel) => document.querySelector(sel);
const KEY = "handoffs.operatorKey";
const POLL_MS = 1500;

const op = { key: null, team: null, open: null, connection: null, chat: null, active: null, timer: null };
window.handoffsOperator = op;

const STATES = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…",
  closed: "offline", polling: "live · queue", signedOut: "signed out" };

/** The badge: the open session's stream, or, with none open, the queue's polling. */
function setConnection(state) {
  const node = $("#connection");
  node.dataset.state = state === "signedOut" ? "closed" : state;
  node.textContent = STATES[state];
}

async function refreshQueue() {
  const lists = await Promise.all(["waiting_for_human", "waiting_for_approval"].map((status) =>
    call("GET", "v1/sessions", { token: op.key, params: { status } })));
  const sessions = lists.flatMap((d) => d.sessions).sort((a, b) => b.updated_at - a.updated_at);
  $("#queue-count").textContent = `(${sessions.length})`;
  $("#queue-empty").hidden = sessions.length > 0;
  $("#queue").replaceChildren(...sessions.map((s) => el("li", {
    class: s.id === op.open ? "current" : "", "data-session": s.id,
  }, el("button", { type: "button", onclick: () => openSession(s.id), "aria-current": s.id === op.open ? "true" : null },
    el("span", { class: "sid" }, s.id), " ",
    s.active_agent ? badge(op.team, s.active_agent, "small") : null,
    s.status === "waiting_for_approval" ? el("span", { class: "approval-tag" }, " approval") : null,
    el("span", { class: "muted" }, ` turn ${s.turn} · ${s.messages} messages · since ${clock(s.updated_at)}`)))));
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
      el("dt", {}, "reason"), el("dd", { class: "why" }, escalation.explanation || "–"),
      el("dt", {}, "payload"), el("dd", {}, el("code", {}, preview(escalation.payload, 400) || "none"))));
}

async function openSession(id) {
  op.connection?.close();
  op.open = id;
  const transcript = await call("GET", `v1/sessions/${encodeURIComponent(id)}/transcript`, { token: op.key });
  showContext(transcript);
  op.chat = new Chat($("#messages"), op.team, {
    userLabel: "Customer", onStatus: (t) => { $("#status").textContent = t; },
    onAnnounce: announce,
  });
  setActive(transcript.active_agent);
  op.connection = new Connection(id, op.key, (e) => {
    op.chat.handle(e);
    if (e.type === "agent_changed") setActive(e.agent);
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
