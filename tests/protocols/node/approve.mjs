// A user answers an approval interrupt with @ag-ui/client's own resume: `node approve.mjs
// BASE_URL`. Sends "refund", answers the interrupt it gets with {approved: true}, then
// sends another message: the thread goes on. Prints what each run ended with.
import { HttpAgent } from "@ag-ui/client";

const [base] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/v1/agui`, threadId: `approve-${Date.now()}` });
const onCustomEvent = ({ event }) => {
  if (event.name === "handoffs_session") {
    agent.headers = { Authorization: `Bearer ${event.value.token}` };
  }
};
const runs = [];
const ended = (run) => ({
  onRunFinishedEvent({ event }) {
    run.outcome = event.outcome?.type ?? "success";
    run.result = event.result;
  },
});
const first = {};
agent.addMessage({ id: "u1", role: "user", content: "refund" });
await agent.runAgent({ runId: "r1" }, { onCustomEvent, ...ended(first) });
const interrupts = [...agent.pendingInterrupts];
first.interrupts = interrupts.map((i) => i.reason);
runs.push(first);
const resumed = {};
await agent.runAgent({
  runId: "r2",
  resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved",
                                   payload: { approved: true } })),
}, ended(resumed));
runs.push(resumed);
const after = {};
agent.addMessage({ id: "u2", role: "user", content: "thanks" });
await agent.runAgent({ runId: "r3" }, ended(after));
runs.push(after);
const tools = agent.messages.filter((m) => m.role === "tool").map((m) => m.content);
console.log(JSON.stringify({ runs, tools }));
