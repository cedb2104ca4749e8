// The conversations this browser holds keys for ("Your conversations"), kept in
// localStorage: each session's id and token, when it began, its first message, and, for
// a fork, where it came from. The one the chat page shows is `api.savedSession()`; none
// is ever dropped without the person's say (a conversation the server no longer opens is
// kept, marked, until they delete it).

import { saveSession, savedSession } from "./api.js";

const KEY = "handoffs.sessions";

/**
 * @typedef {{id: string, token: string, at: number, title?: string,
 *   fork?: {session: string, turn: number, call?: number} | null, gone?: string}} Conversation
 */

/** Every conversation this browser holds, newest first. @returns {Conversation[]} */
export function conversations() {
  let list;
  try {
    list = JSON.parse(localStorage.getItem(KEY) || "[]");
  } catch {
    list = [];
  }
  list = Array.isArray(list) ? list.filter((c) => c && typeof c.id === "string"
    && typeof c.token === "string") : [];
  // The session a page of an earlier version kept is one of them.
  const current = savedSession();
  if (current && !list.some((c) => c.id === current.id)) {
    list.push({ id: current.id, token: current.token, at: Date.now() });
    store(list);
  }
  return list.sort((a, b) => (b.at || 0) - (a.at || 0));
}

function store(list) {
  localStorage.setItem(KEY, JSON.stringify(list));
}

/** The conversation with this id, or null. */
export function conversation(id) {
  return conversations().find((c) => c.id === id) || null;
}

/** Keep `entry` (a new one, or new facts about a known one). */
export function remember(entry) {
  const list = conversations();
  const known = list.find((c) => c.id === entry.id);
  if (known) Object.assign(known, entry);
  else list.push({ at: Date.now(), ...entry });
  store(list);
}

/** Forget the conversation with this id (it was deleted). */
export function forget(id) {
  store(conversations().filter((c) => c.id !== id));
  if (savedSession()?.id === id) saveSession(null);
}

/**
 * Draw "Your conversations" into `list`: each with its first message (or id), when it
 * began, and whether it is a fork or can no longer be opened; the one shown is current.
 * @param {HTMLElement} list
 * @param {{current: string | null, open: (c: Conversation) => void,
 *   remove: (c: Conversation) => void, el: Function}} how
 */
export function showConversations(list, { current, open, remove, el }) {
  list.replaceChildren(...conversations().map((c) => {
    const here = c.id === current;
    const when = new Date(c.at || 0).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
    const name = c.title || (here ? "This conversation" : `Conversation ${c.id.slice(0, 10)}…`);
    return el("li", { class: here ? "current" : "", "data-session": c.id },
      el("button", { type: "button", class: "open plain", "aria-current": here ? "true" : null,
        onclick: () => { if (!here) open(c); } },
      el("span", { class: "title", dir: "auto" }, name),
      el("span", { class: "when" }, `started ${when}`, " ",
        c.fork ? el("span", { class: "fork-tag" }, "fork") : null, " ",
        c.gone ? el("span", { class: "gone" }, "can't be opened") : null)),
      el("button", { type: "button", class: "delete", "aria-label": `Delete ${name}`,
        onclick: () => remove(c) }, "Delete"));
  }));
}
