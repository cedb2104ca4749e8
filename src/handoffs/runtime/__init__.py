"""The runtime, in layers whose imports point one way (docs/design.md):

- `state`: a turn's data (the turn, its lines of work, outcomes, result) and the
  protocols of what it needs from outside (`state.host`: the runner, the executor);
- `decisions`: pure functions from the state and the last effect's result to the next
  step (the request, what a response means, the policy's handoffs, views, repeats,
  convergence, approvals): no I/O, no clock but the executor's, nothing awaited;
- `effects`: the executor that performs the clock, ids, model and tool calls (in this
  process: `effects.executor.InProcess`), summaries, the inspector;
- `driver`: the async loop that asks the decisions for the next step and performs it
  through the executor, streaming included, and the entry points of a turn, an
  approval, a pick, a plan, a transfer;
- `runner`: the public API (`Runner`).
"""
