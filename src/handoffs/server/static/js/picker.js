// Picking an agent: the user-selectable agents in a <select>; the server checks the pick
// against the team's policy, and a refusal shows its code and sentence.

import { call } from "./api.js";
import { el } from "./team.js";

export class Picker {
  /**
   * @param {HTMLFormElement} form with a <select name="agent"> and an output [role=alert]
   * @param {import("./team.js").TeamInfo} team
   * @param {() => {id: string, token: string} | null} session
   * @param {(record: object, refusal: object|null) => void} onPicked
   */
  constructor(form, team, session, onPicked) {
    this.form = form;
    this.team = team;
    this.session = session;
    this.onPicked = onPicked;
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
      const answer = await call("POST", `v1/sessions/${encodeURIComponent(s.id)}/agent`,
        { token: s.token, body: { agent: name } });
      this.onPicked(answer.record, null);
    } catch (err) {
      this.error.textContent = `${this.team.label(name)} cannot take over (${err.code}): ${err.message}`;
      this.onPicked({ source: null, target: name }, { code: err.code, message: err.message });
    }
  }
}
