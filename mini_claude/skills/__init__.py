"""Agent skills: the registry of skills the agent may load (its own, from `.claude/skills`, and those MCP
servers serve), and the front matter parser they share.

Modules: `frontmatter` (SKILL.md front matter, a leaf), `local` (filesystem skills), `registry`
(`SkillRegistry`: every origin, names, lazy loading). Import from those modules; nothing happens at import time.
"""

__all__: list[str] = []
