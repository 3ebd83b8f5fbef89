"""create_model backend selection and the .env parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.errors import ModelError
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.factory import NO_KEY_MESSAGE, create_model, load_dotenv
from mini_claude.models.openai_compat import OpenAICompatModel


def test_no_key_message_is_exact() -> None:
    with pytest.raises(ModelError) as info:
        create_model(None, {"PATH": "/bin", "ANTHROPIC_API_KEY": ""})
    assert str(info.value) == ("no model API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway, or "
                               "an apiKeyHelper in ~/.claude/settings.json), or OPENAI_API_KEY (with OPENAI_BASE_URL "
                               "for another compatible server), or OPENAI_BASE_URL alone for a local server that "
                               "needs no key, in the environment or .env")
    assert str(info.value) == NO_KEY_MESSAGE


def test_anthropic_key_picks_anthropic() -> None:
    model = create_model(None, {"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o",
                                "ANTHROPIC_BASE_URL": "http://127.0.0.1:1234"})
    assert isinstance(model, AnthropicHttpModel)  # our own httpx client: no SDK import on the way to the model
    assert model.name == "claude-opus-5-5"  # Claude Code 2.1.328's default (models/catalog.py)
    assert model.base_url == "http://127.0.0.1:1234"
    assert model.stream is True
    sdk = create_model(None, {"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1234",
                              "MINI_CLAUDE_ANTHROPIC_SDK": "1"})
    assert isinstance(sdk, AnthropicModel) and sdk.base_url == "http://127.0.0.1:1234"


def test_openai_key_picks_openai() -> None:
    model = create_model(None, {"OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert isinstance(model, OpenAICompatModel)
    assert model.name == "gpt-4o-mini"
    assert model.base_url == "http://127.0.0.1:8000/v1"


def test_backend_forced_and_model_name_precedence() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o", "MINI_CLAUDE_BACKEND": "openai",
           "MINI_CLAUDE_MODEL": "from-env", "MINI_CLAUDE_STREAM": "0", "MINI_CLAUDE_RETRY_BASE_S": "0.25"}
    model = create_model(None, env)
    assert isinstance(model, OpenAICompatModel)
    assert (model.name, model.stream, model.retry.base_delay_s) == ("from-env", False, 0.25)
    assert create_model("from-flag", env).name == "from-flag"


def test_forced_openai_with_base_url_needs_no_key() -> None:
    model = create_model("llama", {"MINI_CLAUDE_BACKEND": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(model, OpenAICompatModel)


def test_forced_backend_errors() -> None:
    with pytest.raises(ModelError, match="MINI_CLAUDE_BACKEND must be 'anthropic' or 'openai'"):
        create_model(None, {"MINI_CLAUDE_BACKEND": "gemini", "ANTHROPIC_API_KEY": "k"})
    with pytest.raises(ModelError, match="needs ANTHROPIC_API_KEY") as info:
        create_model(None, {"MINI_CLAUDE_BACKEND": "anthropic", "OPENAI_API_KEY": "sk-o"})
    assert "sk-o" not in str(info.value)


def test_load_dotenv(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text(
        "# a comment\n"
        "\n"
        "ANTHROPIC_API_KEY=sk-ant-123\n"
        "export OPENAI_BASE_URL = http://localhost:8000/v1   # trailing comment\n"
        'QUOTED="two words # not a comment"\n'
        "SINGLE='literal \\n stays'\n"
        'ESCAPED="line1\\nline2 \\"q\\""\n'
        "EMPTY=\n"
        "HASH=abc#def\n"
        "not an assignment\n"
        "1BAD=x\n"
        "EQUALS=a=b=c\n"
    )
    assert load_dotenv(path) == {
        "ANTHROPIC_API_KEY": "sk-ant-123",
        "OPENAI_BASE_URL": "http://localhost:8000/v1",
        "QUOTED": "two words # not a comment",
        "SINGLE": "literal \\n stays",
        "ESCAPED": 'line1\nline2 "q"',
        "EMPTY": "",
        "HASH": "abc#def",
        "EQUALS": "a=b=c",
    }


def test_load_dotenv_missing_file(tmp_path: Path) -> None:
    assert load_dotenv(tmp_path / "nope.env") == {}


def test_load_dotenv_takes_values_as_written_and_drops_bare_keys(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text('HOME_REF=${HOME}/x\nBARE\nMULTI="a\nb"\nexport\tTABBED=1\n  INDENTED=2\n')
    assert load_dotenv(path) == {"HOME_REF": "${HOME}/x", "MULTI": "a\nb", "TABBED": "1", "INDENTED": "2"}
