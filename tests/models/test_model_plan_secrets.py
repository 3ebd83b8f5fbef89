"""A model's key never shows in a repr: `plan_model` (session/start.py settles the model before the servers start)
and the credentials it carries print without the key, so a traceback or a debug line cannot carry it."""

from __future__ import annotations

import pytest

from mini_claude.errors import ModelError
from mini_claude.models.credentials import AnthropicCredentials
from mini_claude.models.factory import plan_model


def test_neither_a_plan_nor_its_credentials_show_the_key() -> None:
    anthropic = plan_model(None, {"ANTHROPIC_API_KEY": "sk-ant-secret-1", "ANTHROPIC_AUTH_TOKEN": ""})
    openai = plan_model(None, {"OPENAI_API_KEY": "sk-openai-secret-2"})
    token = AnthropicCredentials(auth_token="gateway-secret-3")
    for shown in (repr(anthropic), repr(openai), repr(anthropic.credentials), repr(token)):
        assert "secret" not in shown, shown
    assert anthropic.backend == "anthropic" and openai.backend == "openai" and openai.api_key == "sk-openai-secret-2"


def test_the_openai_credentials_and_the_model_environment_hide_their_keys() -> None:
    from mini_claude.models.credentials import OpenAICredentials
    from mini_claude.models.factory import model_environment

    environment = model_environment({"OPENAI_API_KEY": "sk-openai-secret-4"}, {}, trusted=True)
    for shown in (repr(OpenAICredentials("sk-openai-secret-5")), repr(environment)):
        assert "secret" not in shown, shown


def test_a_client_that_cannot_be_built_is_one_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "foo://bar:1")  # httpx reads the proxy from the process environment
    plan = plan_model(None, {"ANTHROPIC_API_KEY": "k"})
    with pytest.raises(ModelError, match=r"^the anthropic model client could not be built: ValueError: "):
        plan.build()
