"""LABKIT_MODEL picks a real model with no code change; without it everything is simulated (no network here)."""

from __future__ import annotations

import anthropic
import openai
import pytest

from labkit.host import ModelSelection, select_model
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME
from labkit.trace import ModelTap

KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-test"}


def test_without_the_variable_everything_is_simulated() -> None:
    assert select_model(env={}) == ModelSelection("anthropic", MODEL_NAME, live=False)
    assert select_model("openai", env=KEYS) == ModelSelection("openai", MODEL_NAME, live=False)


def test_the_variable_names_provider_and_model() -> None:
    env = {"LABKIT_MODEL": "anthropic:claude-test-1", **KEYS}
    assert select_model(env=env) == ModelSelection("anthropic", "claude-test-1", live=True)
    assert select_model("anthropic", env=env).live
    assert select_model("openai", env=env) == ModelSelection("openai", MODEL_NAME, live=False)


def test_model_names_may_contain_colons() -> None:
    assert select_model(env={"LABKIT_MODEL": "openai:ft:gpt-x:org", **KEYS}).model == "ft:gpt-x:org"


@pytest.mark.parametrize("setting", ["claude", "google:gemini", "openai:"])
def test_a_malformed_setting_is_refused(setting: str) -> None:
    with pytest.raises(ValueError, match="expected 'anthropic:<model>' or 'openai:<model>'"):
        select_model(env={"LABKIT_MODEL": setting})


def test_a_live_model_needs_its_key() -> None:
    with pytest.raises(ValueError, match="needs OPENAI_API_KEY"):
        select_model(env={"LABKIT_MODEL": "openai:gpt-test"})


def test_offline_clients_are_strict_and_never_retry() -> None:
    client = make_client("openai", env={})
    assert isinstance(client, openai.AsyncOpenAI)
    assert client.api_key == "offline" and client.max_retries == 0 and client._strict_response_validation
    assert str(client.base_url) == "http://teaching-model.invalid/v1/"


def test_live_clients_go_to_the_provider_and_are_still_tapped(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    client = make_client("anthropic", sync=True, env={"LABKIT_MODEL": "anthropic:claude-test-1", **KEYS})
    assert isinstance(client, anthropic.Anthropic)
    assert str(client.base_url) == "https://api.anthropic.com" and client.api_key == "sk-ant-test"
    assert isinstance(client._client._transport, ModelTap)
