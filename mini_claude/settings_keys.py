"""Which top-level settings keys mini-claude acts on, which are Claude Code's but not acted on here, and which are
neither (a misspelling, most likely): `key_report` sorts one settings file's keys into those groups so that
`doctor` and `--debug` can name what a file sets to no effect, instead of the file seeming to add "nothing".

`CLAUDE_CODE_KEYS` is the top-level key list of Claude Code 2.1.328's settings schema (read from its binary, the
version issue 29 compares to). `SUPPORTED_KEYS` are the keys mini-claude reads (settings.py, sandbox/config.py,
session/start.py for the MCP approval keys, mcp/config.py for `mcpServers`), with `statusLine` and `editorMode`,
which the REPL's status line and vim mode read, and `shellEnvironment` and `mcpApps` (mcp/apps/settings.py),
mini-claude's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CLAUDE_CODE_KEYS", "SUPPORTED_KEYS", "SUPPORTED_PERMISSION_KEYS", "KeyReport", "key_report"]

SUPPORTED_KEYS = frozenset({
    "$schema", "permissions", "env", "hooks", "model", "alwaysThinkingEnabled", "effortLevel", "apiKeyHelper",
    "shellEnvironment", "sandbox", "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
    "mcpServers", "outputStyle", "statusLine", "editorMode", "disabledMcpTools", "disabledMcpServers", "mcpApps",
})
SUPPORTED_PERMISSION_KEYS = frozenset({"allow", "deny", "ask", "defaultMode", "additionalDirectories"})
# Claude Code's `permissions` keys mini-claude does not act on
_CLAUDE_CODE_PERMISSION_KEYS = frozenset({"disableBypassPermissionsMode", "disableAutoMode"})

CLAUDE_CODE_KEYS = frozenset({
    "$schema", "additionalMarketplaces", "advisorModel", "agent", "agentPushNotifEnabled", "allowAllClaudeAiMcps",
    "allowClaudeInChromeWithManagedMcp", "allowManagedHooksOnly", "allowManagedMcpServersOnly",
    "allowManagedPermissionRulesOnly", "allowNestedModelAccessUnderForceLogin", "allowedChannelPlugins",
    "allowedHttpHookUrls", "allowedMarketplaces", "allowedMcpServers", "allowedProviders", "alwaysThinkingEnabled",
    "apiKeyHelper", "appendPlugins", "askUserQuestionTimeout", "attribution", "attributionProject",
    "attributionProjectPolicy", "autoCompactEnabled", "autoCompactOfferAnswer", "autoCompactRaisedForLoad",
    "autoCompactWindow", "autoContinueAtUsageLimit", "autoDreamEnabled", "autoMemoryDirectory", "autoMemoryEnabled",
    "autoScrollEnabled", "autoUpdatesChannel", "autoUploadSessions", "availableModels", "availableModelsMatch",
    "awaySummaryEnabled", "awsAuthRefresh", "awsCredentialExport", "bashEditDiffEnabled", "bashOutputMaxChars",
    "blockedMarketplaces", "breakReminder", "buildGate", "channelsEnabled", "claudeMd", "claudeMdExcludes",
    "clawdFileProgressEnabled", "cleanupPeriodDays", "companyAnnouncements", "crossSessionInbound",
    "daemonColdStart", "defaultShell", "deniedMcpServers", "deniedModels", "desktopSessionCleanupPeriodDays",
    "dialogExpiry", "disableAgentView", "disableAllHooks", "disableArtifact", "disableAutoMode",
    "disableBundledSkills", "disableClaudeAiConnectors", "disableCommandPluginSources", "disableRemoteControl",
    "disableReplyCheck", "disableSideloadFlags", "disableSkillShellExecution", "disableWindowsBashCommandSplit",
    "disableWorkflows", "disabledMcpjsonServers", "doneMeansMerged", "editorMode", "effortLevel",
    "emojiCompletionEnabled", "enableAllProjectMcpServers", "enableArtifact", "enableWorkflows",
    "enabledMcpjsonServers", "enabledPlugins", "enforceAvailableModels", "env", "extraKnownMarketplaces",
    "fallbackModel", "fastMode", "fastModePerSessionOptIn", "feedbackDrafts", "feedbackSurveyRate",
    "fileCheckpointingEnabled", "fileSuggestion", "footerLinksRegexes", "forceLoginGatewayUrl", "forceLoginMethod",
    "forceLoginOrgUUID", "forceRemoteSettingsRefresh", "gatewayInternalNetworks", "gcpAuthRefresh", "hooks",
    "httpHookAllowedEnvVars", "idleCompaction", "includeCoAuthoredBy", "includeGitInstructions",
    "inputNeededNotifEnabled", "isolatePeerMachines", "keybindingFlavor", "language", "managedMcpServers",
    "managedSourcesBehavior", "maxEffortLevel", "maxProseWidth", "minimumVersion", "model", "modelOverrides",
    "modelPicker", "modelPricing", "modelProposedGoals", "modelSettings", "otelHeadersHelper", "outputStyle",
    "parentSettingsBehavior", "permissionModes", "permissions", "plansDirectory", "pluginConfigs",
    "pluginSuggestionMarketplaces", "pluginTrustMessage", "policyHelper", "policyHelpers", "prUrlTemplate",
    "precomputeArmTokens", "precomputeCompactionEnabled", "preferredNotifChannel", "prefersReducedMotion",
    "prependPlugins", "processWrapper", "promptCacheTtl", "promptSuggestionEnabled", "proxyAuthHelper", "quietHours",
    "remote", "remoteControl", "remoteControlAtStartup", "remoteMessageReceipts", "remoteTools",
    "requiredMaximumVersion", "requiredMinimumVersion", "respectGitignore", "respondToBashCommands",
    "responseComparisonEnabled", "sandbox", "showClearContextOnPlanAccept", "showMessageTimestamps",
    "showThinkingSummaries", "showTurnDuration", "skillListingBudgetFraction", "skillListingMaxDescChars",
    "skillOverrides", "skipDangerousModePermissionPrompt", "skipWebFetchPreflight", "skipWorkflowUsageWarning",
    "spellcheck", "spinnerTipsEnabled", "spinnerTipsOverride", "spinnerVerbs", "sshConfigs", "sshHostCommands",
    "statusLine", "strictKnownMarketplaces", "strictPluginOnlyCustomization", "subagentPromptCacheTtl",
    "subagentStatusLine", "switchModelsOnFlag", "syncClaudeAiPlugins", "syncClaudeAiSkills",
    "syntaxHighlightingDisabled", "taskOutputMaxChars", "teammateMode", "terminalProgressBarEnabled",
    "terminalTitleFromRename", "theme", "timeFormat", "timeZone", "todoFeatureEnabled", "totalTokensReminder",
    "totalTokensReminderAfterUserTurn", "totalTokensReminderBudget", "tui", "ultracode", "verbose", "viewMode",
    "vimInsertModeRemaps", "voice", "wheelScrollAccelerationEnabled", "workflowKeywordTriggerEnabled",
    "workflowSizeGuideline", "worktree", "wslInheritsWindowsSettings", "xaaIdp",

})
_KNOWN = sorted(CLAUDE_CODE_KEYS | SUPPORTED_KEYS)
_KNOWN_PERMISSIONS = sorted(SUPPORTED_PERMISSION_KEYS | _CLAUDE_CODE_PERMISSION_KEYS)
MAX_KEY_SHOWN = 64  # a longer key is cut in reports (it comes from a file anyone may have written)


@dataclass(frozen=True)
class KeyReport:
    """One file's keys that do nothing here: `ignored` are Claude Code settings mini-claude does not act on,
    `unknown` are no setting at all, each with the known key it is closest to (None when nothing is close)."""

    ignored: tuple[str, ...] = ()
    unknown: tuple[tuple[str, str | None], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.ignored or self.unknown)

    def text(self) -> str:
        """`ignored keys: spinnerTipsEnabled, theme; unknown keys: modle (did you mean model?)`."""
        parts = []
        if self.ignored:
            parts.append(f"ignored keys: {', '.join(self.ignored)}")
        if self.unknown:
            named = [f"{key} (did you mean {near}?)" if near else key for key, near in self.unknown]
            parts.append(f"unknown key{'s' * (len(named) != 1)}: {', '.join(named)}")
        return "; ".join(parts)


def key_report(raw: Mapping[str, Any]) -> KeyReport:
    """The keys of one settings file's object (top level, and inside `permissions`) that mini-claude does not use."""
    ignored: list[str] = []
    unknown: list[tuple[str, str | None]] = []
    for key in raw:
        _sort(str(key), "", SUPPORTED_KEYS, CLAUDE_CODE_KEYS, _KNOWN, ignored, unknown)
    perms = raw.get("permissions")
    if isinstance(perms, Mapping):
        for key in perms:
            _sort(str(key), "permissions.", SUPPORTED_PERMISSION_KEYS, _CLAUDE_CODE_PERMISSION_KEYS,
                  _KNOWN_PERMISSIONS, ignored, unknown)
    return KeyReport(tuple(ignored), tuple(unknown))


def _sort(key: str, prefix: str, supported: frozenset[str], theirs: frozenset[str], known: list[str],
          ignored: list[str], unknown: list[tuple[str, str | None]]) -> None:
    if key in supported:
        return
    printable = "".join(c if c.isprintable() else "?" for c in key[:MAX_KEY_SHOWN])
    shown = prefix + printable + ("…" if len(key) > MAX_KEY_SHOWN else "")
    if key in theirs:
        ignored.append(shown)
        return
    import difflib  # only for a key that is no setting

    near = difflib.get_close_matches(key, known, n=1, cutoff=0.75) if len(key) <= MAX_KEY_SHOWN else []
    if not near:  # a case slip (`OutputStyle`) is close whatever its length
        near = [name for name in known if name.lower() == key.lower()][:1]
    unknown.append((shown, prefix + near[0] if near else None))
