// A frontend tool with @ag-ui/client's own HttpAgent: `node frontend.mjs BASE_URL`. Sends
// "ask <question>" offering the client's `confirm` tool; runs the tool the agent calls
// (as a front end would: a confirm dialog, answered "yes") and sends its result as a
// `tool` message in the next run, which goes on. Prints what each run ended with and the
// conversation as the client built it.
import { HttpAgent } from "@ag-ui/client";

const [base] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/v1/agui`, threadId: `frontend-${Date.now()}` });
const tools = [{
  name: "confirm",
  description: "Ask the user to confirm something in a dialog.",
  parameters: { type: "object", properties: { question: { type: "string" } },
                required: ["question"] },
}];
const types = [];
const runs = [];
const subscriber = (run) => ({
  onEvent({ event }) {
    types.push(event.type);
    if (event.type === "CUSTOM" && event.name === "handoffs_session") {
      agent.headers = { Authorization: `Bearer ${event.value.token}` };
    }
  },
  onRunFinishedEvent({ event }) {
    run.outcome = event.outcome?.type ?? "success";
    run.result = event.result;
  },
});
const first = { types: [] };
agent.addMessage({ id: "u1", role: "user", content: "ask ship it now?" });
await agent.runAgent({ runId: "r1", tools }, subscriber(first));
runs.push(first);
// The front end runs each tool call the run ended with, and answers it.
const calls = agent.messages.flatMap((m) => m.toolCalls ?? []);
for (const c of calls) {
  const args = JSON.parse(c.function.arguments);
  agent.addMessage({ id: `t-${c.id}`, role: "tool", toolCallId: c.id,
                     content: `yes (${args.question})` });
}
const second = {};
await agent.runAgent({ runId: "r2", tools }, subscriber(second));
runs.push(second);
const messages = agent.messages.map(({ role, content, toolCalls, toolCallId }) =>
  ({ role, content, toolCalls: toolCalls?.map((c) => c.function.name), toolCallId }));
console.log(JSON.stringify({ runs, types, messages }));
