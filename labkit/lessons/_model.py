"""The lab's model client: a real SDK client that reaches the simulated teaching model unless a real one is chosen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..host import Provider, model_client, select_model
from ..simulator import TeachingModel, teaching_transport
from ..trace import Trace

__all__ = ["make_client"]


def make_client(
    provider: Provider | None = None,
    *,
    trace: Trace | None = None,
    sync: bool = False,
    scenario: str | None = None,
    simulator: TeachingModel | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    """A real `anthropic`/`openai` SDK client recording into `trace` (notebook 00).

    Unless `LABKIT_MODEL` names a real model, it talks to the simulated teaching model: in process
    through an httpx2 transport (`simulator`, default a fresh one), or over HTTP at `base_url` (a
    `TeachingServer`); `scenario` picks a playbook via the `x-teaching-scenario` header.
    """
    live = select_model(provider, env).live
    offline = teaching_transport(simulator) if not live and base_url is None else None
    return model_client(
        provider, trace=trace, sync=sync, scenario=scenario, offline=offline, base_url=base_url, env=env
    )
