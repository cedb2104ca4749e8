// What the page tells a person when the server refuses something: in their words, never
// the sentence meant for a developer ("decide with runner.approve ...") or a model.

const SENTENCES = {
  network_error: "The server can't be reached right now.",
  waiting_for_approval: "A person has to approve or reject the request that is waiting first.",
  message_too_large: null, // the server's sentence says how long it was and the limit
  session_busy: "The team is still answering your previous message.",
  too_many_requests: "Too many messages in a short time; wait a moment.",
  unauthorized: "This conversation can no longer be opened here; start a new session.",
  forbidden: "This conversation can no longer be opened here; start a new session.",
  session_not_found: "This conversation no longer exists; start a new session.",
  store_unavailable: "The server can't store messages right now.",
};

/** What a refusal means for a person (the server's own sentence when we have none). */
function meaning(err) {
  if (err.code === "too_many_requests" && err.retryAfter) {
    return `Too many messages in a short time; retry in ${err.retryAfter} s.`;
  }
  const said = SENTENCES[err.code];
  return said === null || said === undefined ? err.message : said;
}

/** Why a message was not sent, and that it is still in the box. */
export function notSent(err) {
  const why = meaning(err);
  const keep = err.code === "message_too_large"
    ? "Shorten it and send it again." : "Your message is still in the box: send it again then.";
  return `Not sent. ${why} ${keep}`;
}

/** Why a pick was refused (the policy's sentence is for people already). */
export function notPicked(label, err) {
  return `${label} cannot take over (${err.code}): ${meaning(err)}`;
}

/** Why a conversation cannot be opened (a wrong or stale key, a deleted session). */
export function cannotOpen(err) {
  return meaning(err);
}
