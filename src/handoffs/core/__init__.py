"""Pure data and rules: no I/O, no asyncio. Everything above builds on this."""
