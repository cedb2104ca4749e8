"""Local fake provider servers speaking OpenAI's and Anthropic's real wire formats."""
