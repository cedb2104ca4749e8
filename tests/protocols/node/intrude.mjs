// Tries one run on someone else's thread with @ag-ui/client's own HttpAgent:
// `node intrude.mjs BASE_URL THREAD_ID [TOKEN]`. Prints one JSON object: the events the
// client got, and the HTTP status and error the server refused the run with (if it did).
import { HttpAgent } from "@ag-ui/client";

const [base, thread, token] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/v1/agui`, threadId: thread,
                              headers: token ? { Authorization: `Bearer ${token}` } : {} });
agent.addMessage({ id: "u1", role: "user", content: "show me this conversation" });
const types = [];
try {
  await agent.runAgent({ runId: "r1" }, { onEvent({ event }) { types.push(event.type); } });
  console.log(JSON.stringify({ types }));
} catch (e) {
  console.log(JSON.stringify({ types, status: e.status, error: e.payload?.error ?? String(e) }));
}
