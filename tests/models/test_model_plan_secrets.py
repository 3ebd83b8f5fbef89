"""A model's key never shows in a repr: `plan_model` (cli/session.py settles the model before the servers start)
and the credentials it carries print without the key, so a traceback or a debug line cannot carry it."""

from __future__ import annotations

from mini_claude.models.credentials import AnthropicCredentials
from mini_claude.models.factory import plan_model


def test_neither_a_plan_nor_its_credentials_show_the_key() -> None:
    anthropic = plan_model(None, {"ANTHROPIC_API_KEY": "sk-ant-secret-1", "ANTHROPIC_AUTH_TOKEN": ""})
    openai = plan_model(None, {"OPENAI_API_KEY": "sk-openai-secret-2"})
    token = AnthropicCredentials(auth_token="gateway-secret-3")
    for shown in (repr(anthropic), repr(openai), repr(anthropic.credentials), repr(token)):
        assert "secret" not in shown, shown
    assert anthropic.backend == "anthropic" and openai.backend == "openai" and openai.api_key == "sk-openai-secret-2"
