// Picking an agent: the agents a user may pick in a <select>; the server checks the pick
// against the team's policy. An accepted pick comes back as the session's events (like any
// handoff), so every tab and the operator see it; a refusal shows its code and sentence.

import { call } from "./api.js";
import { el } from "./team.js";
import { notPicked } from "./words.js";

export class Picker {
  /**
   * @param {HTMLFormElement} form with a <select name="agent"> and an output .error
   * @param {import("./team.js").TeamInfo} team
   * @param {() => {id: string, token: string} | null} session
   */
  constructor(form, team, session) {
    this.form = form;
    this.team = team;
    this.session = session;
    this.select = form.querySelector("select");
    this.error = form.querySelector(".error");
    this.select.replaceChildren(...team.selectable().map((a) =>
      el("option", { value: a.name }, team.label(a.name))));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.pick(this.select.value);
    });
  }

  setActive(name) {
    if ([...this.select.options].some((o) => o.value === name)) this.select.value = name;
  }

  async pick(name) {
    const s = this.session();
    if (!s) return;
    this.error.textContent = "";
    try {
      await call("POST", `v1/sessions/${encodeURIComponent(s.id)}/agent`,
        { token: s.token, body: { agent: name } });
    } catch (err) {
      this.error.textContent = notPicked(this.team.label(name), err);
    }
  }
}
