// The chat page: starts or resumes a session, follows its events, and wires the chat,
// the timeline, the team graph and the agent picker to them.

import { ApiError, call, saveSession, savedSession } from "./api.js";
import { Chat } from "./chat.js";
import { Connection } from "./connection.js";
import { Graph, agentList } from "./graph.js";
import { Picker } from "./picker.js";
import { Timeline } from "./timeline.js";
import { TeamInfo, badge } from "./team.js";

const $ = (sel) => document.querySelector(sel);

const page = {
  team: null, session: null, connection: null, chat: null, timeline: null, graph: null,
  picker: null, active: null, events: [],
};
window.handoffsPage = page; // for the browser tests and for curious people

function setStatus(text) {
  $("#status").textContent = text;
}

function setConnection(state) {
  const node = $("#connection");
  node.dataset.state = state;
  node.textContent = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "offline" }[state];
}

function setActive(name) {
  page.active = name;
  $("#active-agent").replaceChildren(badge(page.team, name));
  page.graph.setActive(name);
  page.picker.setActive(name);
}

function onEvent(e) {
  page.events.push(e);
  page.chat.handle(e);
  page.timeline.handle(e);
  if (e.type === "agent_changed") setActive(e.agent);
  if (e.type === "agent_handoff") page.graph.took(e.source, e.target);
  if (e.type === "run_completed" || e.type === "run_failed") {
    $("#send").disabled = false;
    refreshRecords();
  }
}

async function refreshRecords() {
  try {
    const t = await call("GET", `v1/sessions/${encodeURIComponent(page.session.id)}/transcript`,
      { token: page.session.token });
    page.timeline.enrich(t.handoffs);
  } catch {
    // Payload previews are extra; the timeline stands without them.
  }
}

async function startSession() {
  const s = await call("POST", "v1/sessions", { body: { channel: "web" } });
  page.session = { id: s.id, token: s.token };
  saveSession(page.session);
  return s.active_agent ? s.active_agent.name : page.team.entry;
}

async function openSession(fresh) {
  page.connection?.close();
  page.chat.clear();
  page.timeline.clear();
  page.events = [];
  let active = page.team.entry;
  page.session = fresh ? null : savedSession();
  if (page.session) {
    try {
      const s = await call("GET", `v1/sessions/${encodeURIComponent(page.session.id)}`,
        { token: page.session.token });
      active = s.active_agent ? s.active_agent.name : active;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 0) throw err;
      page.session = null; // gone or not ours any more: start again
    }
  }
  if (!page.session) active = await startSession();
  $("#session-id").textContent = page.session.id;
  page.graph.reset(active);
  setActive(active);
  page.connection = new Connection(page.session.id, page.session.token, onEvent, setConnection);
  page.connection.open();
}

async function send(text) {
  $("#send").disabled = true;
  $("#send-error").textContent = "";
  try {
    await call("POST", `v1/sessions/${encodeURIComponent(page.session.id)}/messages`, {
      token: page.session.token, body: { text }, headers: { Prefer: "respond-async" },
    });
  } catch (err) {
    $("#send-error").textContent = `Not sent (${err.code}): ${err.message}`;
    $("#send").disabled = false;
  }
}

async function main() {
  const [teamData, config] = await Promise.all([call("GET", "v1/team"), call("GET", "v1/config")]);
  page.team = new TeamInfo(teamData);
  $("#model").textContent = config.model ? `Model: ${config.model}` : "";
  page.chat = new Chat($("#messages"), page.team, { onStatus: setStatus });
  page.timeline = new Timeline($("#timeline"), page.team);
  page.graph = new Graph($("#graph"), page.team);
  agentList($("#agents"), page.team);
  page.picker = new Picker($("#picker"), page.team, () => page.session, (record, refusal) => {
    page.timeline.picked(record.source || page.active, record.target, refusal);
    if (!refusal) {
      page.chat.picked(record.source, record.target);
      page.graph.took(record.source, record.target);
      setActive(record.target);
    }
  });
  $("#composer").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $("#text");
    const text = input.value.trim();
    if (!text || $("#send").disabled) return;
    input.value = "";
    send(text);
  });
  $("#text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      $("#composer").requestSubmit();
    }
  });
  $("#new-session").addEventListener("click", () => openSession(true));
  await openSession(false);
}

main().catch((err) => {
  setStatus(`The page could not start: ${err.message}`);
  document.body.dataset.failed = "true";
});
