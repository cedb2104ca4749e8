"""Example teams shipped with the package (used by `handoffs demo` and the tests)."""
