"""The driver: the async loop that asks the decisions for the next step and performs it
through the executor, and the runtime's entry points."""
