"""Real `anthropic` / `openai` SDK clients, pointed at a real model or at an offline endpoint, always tapped."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx2

from .._i18n import _
from ..errors import ConfigError
from ..trace import OFFLINE_KEY, SIMULATED_MODEL, ModelTap, Trace

__all__ = ["ENV_VAR", "ModelSelection", "Provider", "import_sdk_meanwhile", "model_client", "select_model"]

Provider = Literal["anthropic", "openai"]
ENV_VAR = "LABKIT_MODEL"
_KEY_VARS: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
_OFFLINE_HOST = "http://teaching-model.invalid"  # .invalid never resolves: nothing can leak to a real host
_VERSION_PREFIX: dict[str, str] = {"anthropic": "", "openai": "/v1"}  # OpenAI's base URL carries /v1, Anthropic's not
# Sized for a classroom, not the SDKs' 600 s: a model that stops answering is an error within a minute.
_TIMEOUT = httpx2.Timeout(60.0, connect=10.0)
_LIVE_RETRIES = 2  # the offline model never retries: its failures are the lesson


@dataclass(frozen=True)
class ModelSelection:
    """Which model a provider's client talks to: the simulator, or a real one named in `LABKIT_MODEL` (notebook 00)."""

    provider: Provider
    model: str
    live: bool


def select_model(provider: Provider | None = None, env: Mapping[str, str] | None = None) -> ModelSelection:
    """Read `LABKIT_MODEL=anthropic:<model>` or `openai:<model>`; unset, all clients are simulated (notebook 00)."""
    env = os.environ if env is None else env
    setting = env.get(ENV_VAR, "").strip()
    if not setting:
        return ModelSelection(provider or "anthropic", SIMULATED_MODEL, live=False)
    chosen, _colon, model = setting.partition(":")
    if chosen not in _KEY_VARS or not model:
        raise ConfigError(
            _("{var}={setting!r}: expected 'anthropic:<model>' or 'openai:<model>'").format(
                var=ENV_VAR, setting=setting
            )
        )
    if provider and provider != chosen:
        return ModelSelection(provider, SIMULATED_MODEL, live=False)
    if not env.get(_KEY_VARS[chosen]):
        raise ConfigError(
            _("{var}={setting!r} needs {key} to be set").format(var=ENV_VAR, setting=setting, key=_KEY_VARS[chosen])
        )
    return ModelSelection(chosen, model, live=True)  # type: ignore[arg-type]


def model_client(
    provider: Provider | None = None,
    *,
    trace: Trace | None = None,
    sync: bool = False,
    scenario: str | None = None,
    offline: Any = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    """A real SDK client (`AsyncAnthropic`/`AsyncOpenAI`, or sync) recording into `trace` (notebook 00).

    With a real model selected it talks to the provider. Offline it talks to `base_url` over HTTP,
    or through `offline`, an httpx2 transport that answers as a model (the lab passes the simulator's,
    so the host reaches the simulated model only the way it would reach a provider); `scenario`
    becomes the `x-teaching-scenario` header.
    """
    env = os.environ if env is None else env
    selection = select_model(provider, env)
    trace = trace if trace is not None else Trace()
    network = httpx2.HTTPTransport if sync else httpx2.AsyncHTTPTransport
    if selection.live:
        inner: Any = network()
        options: dict[str, Any] = {"api_key": env[_KEY_VARS[selection.provider]], "max_retries": _LIVE_RETRIES}
    else:
        if offline is None and base_url is None:
            raise ValueError(
                _("no model is selected ({var} is unset): pass base_url= or an offline transport").format(var=ENV_VAR)
            )
        inner = network() if base_url else offline
        options = {
            "api_key": OFFLINE_KEY,
            "base_url": (base_url or _OFFLINE_HOST) + _VERSION_PREFIX[selection.provider],
            "max_retries": 0,
            "_strict_response_validation": True,
            "default_headers": {"x-teaching-scenario": scenario} if scenario else None,
        }
    http_client = (httpx2.Client if sync else httpx2.AsyncClient)(transport=ModelTap(inner, trace), timeout=_TIMEOUT)
    return _client_class(selection.provider, sync)(http_client=http_client, timeout=_TIMEOUT, **options)


def import_sdk_meanwhile(provider: Provider) -> None:
    """Start importing the provider's SDK on a thread of its own, if it is not imported yet (notebook 00).

    `anthropic` takes about two seconds to import (its ~1,500 pydantic models); a run that starts its
    servers first and makes its client after spends those seconds while the servers start. The client's
    own import then waits for this one to finish (Python's import lock), or reports its error.
    """
    if provider not in sys.modules:
        threading.Thread(target=_import_quietly, args=(provider,), name=f"import {provider}", daemon=True).start()


def _import_quietly(module: str) -> None:
    # The client's own import raises the error where it is used.
    with contextlib.suppress(Exception):
        importlib.import_module(module)


def _client_class(provider: Provider, sync: bool) -> type:
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic if sync else anthropic.AsyncAnthropic
    import openai

    return openai.OpenAI if sync else openai.AsyncOpenAI
