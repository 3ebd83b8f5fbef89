"""One scripted model per run of the SDK's shipped examples (tests/compat/README.md says what each exercises).

Each run's `turns` answer the example's prompts in order: every Messages request takes the next turn, so a tool call
is followed by the turn that answers its result (often quoting it with `{{last_tool_result}}`, so the example's
output shows what the tool really returned). Turns naming a path get the scratch folder, hence functions.
"""

from __future__ import annotations

from typing import Any

from tests.compat.examples import QUOTE, Run, Scratch, call, text

Turns = list[dict[str, Any]]


# ---- quick_start.py: three query() calls; the last writes a file with the Write tool ----------------------------

def _quick_start(s: Scratch) -> Turns:
    return [text("2 + 2 equals 4."),
            text("Python is a readable general-purpose programming language."),
            call("Write", {"file_path": str(s.sdk / "hello.txt"), "content": "Hello, World!"}),
            text("I created hello.txt.")]


QUICK_START = Run("quick_start.py", (), _quick_start,
                  expect=("=== Basic Example ===\nClaude: 2 + 2 equals 4.",
                          "Claude: Python is a readable general-purpose programming language.",
                          "Claude: I created hello.txt."),
                  files={"hello.txt": "Hello, World!"},
                  sent=("You are a helpful assistant that explains things simply.",
                        "You are a helpful file assistant."))


# ---- mcp_calculator.py: six ClaudeSDKClient sessions over one in-process MCP server --------------------------------

def _calculator(s: Scratch) -> Turns:
    return [text("I have add, subtract, multiply, divide, sqrt and power."),
            call("mcp__calc__add", {"a": 15, "b": 27}), QUOTE,
            call("mcp__calc__divide", {"a": 100, "b": 7}), QUOTE,
            call("mcp__calc__sqrt", {"n": 144}), QUOTE,
            call("mcp__calc__power", {"base": 2, "exponent": 8}), QUOTE,
            call("mcp__calc__add", {"a": 12, "b": 8}),
            call("mcp__calc__multiply", {"a": 20, "b": 3}),
            call("mcp__calc__subtract", {"a": 60, "b": 10}), QUOTE]


CALCULATOR = Run("mcp_calculator.py", (), _calculator,
                 expect=("Claude: I have add, subtract, multiply, divide, sqrt and power.",
                         "Using tool: mcp__calc__add\n  Input: {'a': 15, 'b': 27}",
                         "The tool said: 15 + 27 = 42",
                         "The tool said: 100 ÷ 7 = 14.285714285714286",
                         "The tool said: √144 = 12.0",
                         "The tool said: 2^8 = 256",
                         "Using tool: mcp__calc__multiply",
                         "The tool said: 60 - 10 = 50"),
                 sent=("15 + 27 = 42", "12 + 8 = 20", "20 × 3 = 60"))


# ---- hooks.py: five sub-examples, each its own argv ---------------------------------------------------------------

def _hooks_pretooluse(s: Scratch) -> Turns:
    return [call("Bash", {"command": "./foo.sh --help", "description": "Run foo.sh"}), QUOTE,
            call("Bash", {"command": "echo 'Hello from hooks example!'", "description": "Say hello"}), QUOTE]


def _hooks_prompt(s: Scratch) -> Turns:
    return [text("You told me your favorite color is hot pink.")]


def _hooks_posttooluse(s: Scratch) -> Turns:
    # a failing command fires PostToolUseFailure, not PostToolUse: the scripted command fails yet exits 0, so
    # the example's hook sees "error" in the output and adds its context
    return [call("Bash", {"command": "ls /nonexistent_directory || echo 'error: no such folder'",
                          "description": "List a missing folder"}),
            text("That folder does not exist.")]


def _hooks_decision(s: Scratch) -> Turns:
    return [call("Write", {"file_path": str(s.sdk / "important_config.txt"), "content": "test data"}), QUOTE,
            call("Write", {"file_path": str(s.sdk / "regular_file.txt"), "content": "test data"}), QUOTE]


def _hooks_continue(s: Scratch) -> Turns:
    return [call("Bash", {"command": "echo 'CRITICAL ERROR: system failure'", "description": "Echo"}),
            text("This answer must never be asked for.")]


HOOKS = [
    Run("hooks.py", ("PreToolUse",), _hooks_pretooluse,
        expect=("Command contains invalid pattern: foo.sh", "The tool said: Hello from hooks example!",
                "Result ended"),
        sent=("Command contains invalid pattern: foo.sh",)),
    # the example's hook answers a UserPromptSubmit with `"hookEventName": "SessionStart"`: Claude Code refuses the
    # mismatched output and ends the turn (error_during_execution) without asking the model
    Run("hooks.py", ("UserPromptSubmit",), _hooks_prompt,
        expect=("User: What's my favorite color?\nResult ended",), absent=("Claude:",)),
    Run("hooks.py", ("PostToolUse",), _hooks_posttooluse,
        expect=("Claude: That folder does not exist.",),
        sent=("The command encountered an error. You may want to try a different approach.",)),
    Run("hooks.py", ("DecisionFields",), _hooks_decision,
        expect=("Security policy blocks writes to important files",),
        files={"regular_file.txt": "test data"}, no_files=("important_config.txt",)),
    Run("hooks.py", ("ContinueControl",), _hooks_continue,
        expect=("Result ended",), absent=("This answer must never be asked for.",)),
]


# ---- tool_permission_callback.py: can_use_tool allows, denies and changes inputs ----------------------------------

def _permission(s: Scratch) -> Turns:
    # `ls` alone is read-only (never asked); a Write outside /tmp/ is redirected into ./safe_output by the callback
    # (under /proc, which no one can write: a client that ignored the redirect fails instead of writing outside)
    return [call("Bash", {"command": "mkdir -p safe_output && ls", "description": "List files"}),
            call("Write", {"file_path": "/etc/mini-claude-compat-test/hello.py", "content": "print('Hello, World!')\n"}),
            call("Write", {"file_path": "/proc/mini-claude-example/hello.py", "content": "print('Hello, World!')\n"}),
            call("Bash", {"command": "python3 safe_output/hello.py", "description": "Run it"}),
            call("Bash", {"command": "sudo rm -rf /", "description": "Never"}),
            text("Done: {{last_tool_result}}")]


PERMISSION = Run("tool_permission_callback.py", (), _permission,
                 expect=("✅ Allowing bash command: mkdir -p safe_output && ls",
                         "❌ Denying write to system directory: /etc/mini-claude-compat-test/hello.py",
                         "⚠️  Redirecting write from /proc/mini-claude-example/hello.py to ./safe_output/hello.py",
                         "✅ Allowing bash command: python3 safe_output/hello.py",
                         "❌ Denying dangerous command: sudo rm -rf /",
                         "Dangerous command pattern detected: rm -rf",   # the deny message, quoted by the model
                         "✅ Task completed!"),
                 files={"safe_output/hello.py": "Hello, World!"},
                 no_files=("/etc/mini-claude-compat-test/hello.py", "/proc/mini-claude-example/hello.py"),
                 sent=("Cannot write to system directory: /etc/mini-claude-compat-test/hello.py", "Hello, World!"))


# ---- streaming_mode.py: ten sub-examples of ClaudeSDKClient ------------------------------------------------------

def _answers(*texts: str) -> Any:
    return lambda s: [text(t) for t in texts]


def _slow_then(answer: str, ms: int) -> Any:
    return lambda s: [{**text("1, 2, 3, 4, 5"), "delay_ms": ms}, text(answer)]


def _stream_options(s: Scratch) -> Turns:
    return [call("Write", {"file_path": str(s.sdk / "hello.txt"), "content": "Hello there!"}),
            text("I wrote hello.txt.")]


def _stream_bash(s: Scratch) -> Turns:
    return [call("Bash", {"command": "echo 'Hello from bash!'", "description": "Echo"}), QUOTE]


STREAMING = [
    Run("streaming_mode.py", ("basic_streaming",), _answers("2 + 2 = 4"),
        expect=("User: What is 2+2?\nClaude: 2 + 2 = 4\nResult ended",)),
    Run("streaming_mode.py", ("multi_turn_conversation",),
        _answers("Paris.", "About 2.1 million people live in Paris."),
        expect=("Claude: Paris.", "Claude: About 2.1 million people live in Paris."),
        sent=("What's the capital of France?",)),
    Run("streaming_mode.py", ("concurrent_responses",), _answers("4", "12", "8"),
        expect=("Claude: 4", "Claude: 12", "Claude: 8"), slow=True),
    Run("streaming_mode.py", ("with_interrupt",), _slow_then("Why did the function return? It had closure.", 6000),
        expect=("[After 2 seconds, sending interrupt...]",
                "Claude: Why did the function return? It had closure."),
        absent=("1, 2, 3, 4, 5",)),
    Run("streaming_mode.py", ("manual_message_handling",),
        _answers("Python: data. JavaScript: the web. Go: servers. Rust: systems. Ruby: scripts."),
        expect=("Found language: Python", "Found language: Rust", "Total languages mentioned: 6")),
    Run("streaming_mode.py", ("with_options",), _stream_options,
        expect=("Claude: I wrote hello.txt.", "Tools used: Write"), files={"hello.txt": "Hello there!"},
        sent=("You are a helpful coding assistant.",)),
    # the client may take the three messages as two turns or three; the example then waits 30 s for a result that
    # never comes
    Run("streaming_mode.py", ("async_iterable_prompt",), _answers("Hello!", "Tokyo.", "30.", "extra", "extra"),
        expect=("Claude: Hello!", "Claude: Tokyo."),
        sent=("First, what's the capital of Japan?", "Second, what's 15% of 200?"), slow=True),
    Run("streaming_mode.py", ("bash_command",), _stream_bash,
        expect=("Tool Use: Bash", "  Command: echo 'Hello from bash!'", "The tool said: Hello from bash!")),
    Run("streaming_mode.py", ("control_protocol",), _slow_then("Hello!", 6000),
        expect=("✓ Server info retrieved successfully!", "✓ Interrupt sent successfully", "Claude: Hello!")),
    Run("streaming_mode.py", ("error_handling",), lambda s: [{**text("done sleeping"), "delay_ms": 6000}],
        expect=("Response timeout after 3 seconds",)),
]


# ---- agents.py: three query() calls, each delegating to a custom agent ------------------------------------------

def _agents(s: Scratch) -> Turns:
    # `run_in_background: false`: Claude Code 2.1.3xx runs agents in the background unless told, which interleaves
    # the parent's and the sub-agent's requests; in the foreground the order is call, sub-agent, parent
    return [call("Agent", {"subagent_type": "code-reviewer", "description": "Review types.py",
                           "prompt": "Review src/claude_agent_sdk/types.py", "run_in_background": False}),
            text("types.py looks fine to the reviewer."),   # the sub-agent's own answer
            text("The reviewer found nothing wrong."),
            call("Agent", {"subagent_type": "doc-writer", "description": "Explain AgentDefinition",
                           "prompt": "Explain AgentDefinition", "run_in_background": False}),
            text("AgentDefinition describes a sub-agent."),
            text("The doc writer says: AgentDefinition describes a sub-agent."),
            call("Agent", {"subagent_type": "analyzer", "description": "Find Python files",
                           "prompt": "Find all Python files in examples/", "run_in_background": False}),
            text("examples/agents.py is the only one."),
            text("The analyzer found examples/agents.py.")]


AGENTS = Run("agents.py", (), _agents,
             expect=("Claude: The reviewer found nothing wrong.",
                     "Claude: The doc writer says: AgentDefinition describes a sub-agent.",
                     "Claude: The analyzer found examples/agents.py."),
             sent=("You are a code reviewer.", "You are a technical documentation expert.",
                   "You are a code analyzer.", "types.py looks fine to the reviewer."))


# ---- system_prompt.py: four query() calls with different system prompts -----------------------------------------

SYSTEM_PROMPT = Run("system_prompt.py", (), _answers("4", "Arr, 'tis 4!", "4", "4. Fun fact: 4 is even."),
                    expect=("=== String System Prompt ===\nClaude: Arr, 'tis 4!",
                            "=== Preset System Prompt with Append ===\nClaude: 4. Fun fact: 4 is even."),
                    sent=("You are a pirate assistant. Respond in pirate speak.",
                          "Always end your response with a fun fact."))


# ---- setting_sources.py: which setting sources make a project's /commit command appear --------------------------

def _commit_command(s: Scratch) -> None:
    commands = s.sdk / ".claude" / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    (commands / "commit.md").write_text("---\ndescription: Commit the staged changes\n---\nCommit the changes.\n")


SETTING_SOURCES = Run("setting_sources.py", ("all",), _answers(*["4"] * 8), setup=_commit_command,
                      expect=("✓ /commit is available (expected: CLI defaults loaded)",
                              "✓ /commit is NOT available (expected: sources disabled)",
                              "✓ /commit is NOT available (expected)",
                              "✓ /commit is available (expected)"),
                      absent=("❌",))


RUNS: list[Run] = [QUICK_START, CALCULATOR, *HOOKS, PERMISSION, *STREAMING, AGENTS, SYSTEM_PROMPT, SETTING_SOURCES]
