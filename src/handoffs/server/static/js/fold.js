// Long content folded behind "Show more": a 10,000-character paste is shown once in full
// only when asked for, not three times (the bubble, the handoff line, the timeline).

import { el } from "./team.js";

/** How many characters are shown before "Show more", by where the text is. */
export const LIMITS = { bubble: 400, line: 240, entry: 200 };

/**
 * An element holding `text`, shortened to `limit` characters with a "Show more" button
 * that shows it whole (and "Show less" to fold it again).
 * @param {string} tag
 * @param {object} attrs
 * @param {string} text
 * @param {number} limit
 */
export function folded(tag, attrs, text, limit) {
  text = String(text ?? "");
  const node = el(tag, attrs);
  if (text.length <= limit) {
    node.append(text);
    return node;
  }
  const shown = el("span", { class: "folded-text" });
  const button = el("button", { type: "button", class: "more", "aria-expanded": "false" });
  const set = (open) => {
    shown.textContent = open ? text : `${text.slice(0, limit).trimEnd()}…`;
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "Show less"
      : `Show more (${text.length.toLocaleString("en")} characters)`;
  };
  button.addEventListener("click", () => set(button.getAttribute("aria-expanded") !== "true"));
  set(false);
  node.append(shown, " ", button);
  return node;
}
