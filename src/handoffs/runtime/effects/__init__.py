"""Effects: the executor that performs a turn's clock, ids, model and tool calls, and
what calls models besides (summaries, the inspector)."""
