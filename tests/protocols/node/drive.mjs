// Drives a team served with `handoffs serve --agui` from Node with @ag-ui/client's own
// HttpAgent: `node drive.mjs BASE_URL MESSAGE...`, one run per message on one thread.
// Prints one JSON object: every event's type, the custom events, the agent's messages
// and state as the client built them, and each run's result.
import { HttpAgent } from "@ag-ui/client";

const [base, ...texts] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/v1/agui`, threadId: `node-${Date.now()}` });
const types = [];
const custom = [];
const results = [];
let n = 0;
for (const text of texts) {
  agent.addMessage({ id: `u${++n}`, role: "user", content: text });
  const run = await agent.runAgent({ runId: `r${n}` }, {
    onEvent({ event }) {
      types.push(event.type);
      if (event.type === "CUSTOM") {
        custom.push({ name: event.name, value: event.value });
        if (event.name === "handoffs_session") {  // the thread's token, given once
          agent.headers = { Authorization: `Bearer ${event.value.token}` };
        }
      }
    },
  });
  results.push(run.result);
}
const messages = agent.messages.map(({ role, name, content, subagentRunId }) =>
  ({ role, name, content, subagentRunId }));
console.log(JSON.stringify({ types, custom, messages, state: agent.state, results }));
