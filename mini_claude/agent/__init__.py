"""The agent: one conversation's loop between a model and tools."""

from mini_claude.agent.loop import Agent, AgentUI, RunOutcome, SilentUI

__all__ = ["Agent", "AgentUI", "RunOutcome", "SilentUI"]
