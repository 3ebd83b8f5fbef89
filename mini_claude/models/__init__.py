"""Model backends behind one `Model` protocol: Anthropic Messages, OpenAI-compatible, and the offline mock server."""
