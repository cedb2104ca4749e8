"""Decisions: pure functions from a turn's state and the last effect's result to its
next step."""
