"""The MCP host: what servers may ask of the agent and the user — roots, sampling, elicitation, server logs — and
the one interface (`HostUI`) through which it reaches the person at the terminal. Above the MCP core (it registers
handlers on `McpClient`s the manager creates), below the agent and the CLI (which implement `HostUI`)."""

from mini_claude.mcp.host.elicit import ElicitationService
from mini_claude.mcp.host.host import McpHost, sampling_policy
from mini_claude.mcp.host.roots import Roots
from mini_claude.mcp.host.sampling import SamplingService
from mini_claude.mcp.host.server_log import ServerLogs
from mini_claude.mcp.host.ui import (
    FormAnswer,
    FormRequest,
    HostUI,
    NoQuestionsUI,
    SamplingChoice,
    SamplingRequest,
    UrlRequest,
)

__all__ = [
    "ElicitationService",
    "FormAnswer",
    "FormRequest",
    "HostUI",
    "McpHost",
    "NoQuestionsUI",
    "Roots",
    "SamplingChoice",
    "SamplingRequest",
    "SamplingService",
    "ServerLogs",
    "UrlRequest",
    "sampling_policy",
]
