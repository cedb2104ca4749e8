// Asking before something a person cannot take back (a new conversation, a conversation
// taken from a person, a deletion): a modal <dialog>, keyboard-first (the safe choice has
// the focus, Escape is "no"), answered as a promise.

import { el } from "./team.js";

let asked = 0;

/**
 * Ask a yes/no question; resolves true for `yes`, false for `no` or Escape.
 * @param {{title: string, text: string, yes: string, no: string}} q
 * @returns {Promise<boolean>}
 */
export function confirmWith({ title, text, yes, no }) {
  const id = `confirm-title-${++asked}`;
  const noButton = el("button", { type: "button", class: "no", value: "no" }, no);
  const yesButton = el("button", { type: "submit", class: "yes", value: "yes" }, yes);
  const dialog = el("dialog", { class: "confirm", "aria-labelledby": id },
    el("form", { method: "dialog" }, el("h2", { id }, title), el("p", {}, text),
      el("div", { class: "actions" }, noButton, yesButton)));
  noButton.addEventListener("click", () => dialog.close("no"));
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "yes");
      dialog.remove();
    }, { once: true });
    dialog.showModal();
    noButton.focus();
  });
}
