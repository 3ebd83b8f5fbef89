"""Agent skills: the registry of skills the agent may load (its own, from `.claude/skills`, and those MCP
servers serve).

Modules: `local` (filesystem skills), `registry` (`SkillRegistry`: every origin, names, lazy loading). Their front
matter is parsed by the leaf module `mini_claude.frontmatter`. Import from those modules; nothing happens at import
time.
"""

__all__: list[str] = []
