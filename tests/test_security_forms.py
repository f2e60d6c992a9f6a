"""Every form says who asks: the server and its trust; a URL-mode request shows the page's host apart and is never
opened; an untrusted server's form asking for a secret is declined; answers carrying a host secret are not sent."""

from __future__ import annotations

from typing import Any

import anyio

from labkit.host import Host, ServerSpec
from labkit.host._connector import FORM_ABOUT
from labkit.lessons import TOKEN_CANARY, prepare_lab
from labkit.security import Defences, PinStore, Shield
from labkit.trace import Trace, table
from servers.untrusted.phish import LOGIN_URL

PHISH = ServerSpec("untrusted.phish")


class Person:
    """Answers every form with `answers`, noting what it was shown and what the form said about who asks."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.shown: list[tuple[str, dict[str, Any], str]] = []

    async def __call__(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        self.shown.append((message, schema, FORM_ABOUT.get()))
        return dict(self.answers)


async def _call(tool: str, person: Person, tmp_path, shielded: bool) -> tuple[Trace, str]:
    trace = Trace()
    with anyio.fail_after(120):
        if shielded:
            shield = Shield(
                trace,
                Defences.all(),
                lab=prepare_lab(),
                pins=PinStore(tmp_path / "pins.json"),
                secrets={"OPS_DEPLOY_TOKEN": TOKEN_CANARY},
            )
            async with shield.open([PHISH], era="2025-11-25", elicit=person) as host:
                result = await host.pool.client("untrusted.phish").call_tool(tool, {})
        else:
            async with Host(trace, [PHISH], era="2025-11-25", elicit=person) as host:
                result = await host.pool.client("untrusted.phish").call_tool(tool, {})
    return trace, result.content[0].text


async def test_a_url_request_shows_the_page_host_apart_and_the_host_opens_nothing(tmp_path):
    person = Person({"consent": True})
    trace, said = await _call("verify_identity", person, tmp_path, shielded=False)
    ((message, schema, _about),) = person.shown
    assert "login.shop-example.net" in message and LOGIN_URL in message and "does not open it" in message
    assert "untrusted.phish" in message and "Please confirm it is you." in message
    assert (
        list(schema["properties"]) == ["consent"]
        and "login.shop-example.net" in schema["properties"]["consent"]["title"]
    )
    (form,) = trace.of_kind("host.form")
    assert form.meta["url_host"] == "login.shop-example.net" and said == "identity: accept"


async def test_no_consent_is_a_decline(tmp_path):
    _, said = await _call("verify_identity", Person({"consent": False}), tmp_path, shielded=False)
    assert said == "identity: decline"


async def test_a_form_names_the_server_and_says_the_host_does_not_trust_it(tmp_path):
    person = Person({"consent": False})
    await _call("verify_identity", person, tmp_path, shielded=True)
    ((_, _, about),) = person.shown
    assert "untrusted.phish" in about and "does NOT trust" in about


async def test_an_untrusted_form_asking_for_a_key_is_declined_before_the_person_sees_it(tmp_path):
    person = Person({"api_key": "sk-live-anything"})
    trace, said = await _call("connect_account", person, tmp_path, shielded=True)
    assert person.shown == [] and said == "account: decline"
    refused = [e for e in trace.of_kind("host.form") if e.meta.get("outcome") == "refused"]
    assert refused and "api_key" in refused[0].summary


async def test_the_same_form_unshielded_reaches_the_person_and_the_key_is_sent(tmp_path):
    person = Person({"api_key": "sk-live-anything"})
    _, said = await _call("connect_account", person, tmp_path, shielded=False)
    assert len(person.shown) == 1 and said == "account: accept"


async def test_an_answer_carrying_a_host_secret_is_not_sent_and_not_kept_in_the_trace(tmp_path):
    person = Person({"consent": True, "note": TOKEN_CANARY})
    trace, said = await _call("verify_identity", person, tmp_path, shielded=True)
    assert said == "identity: decline"
    assert not [e for e in trace if TOKEN_CANARY in str(e.payload) or TOKEN_CANARY in e.summary]


async def test_a_secret_asked_for_in_the_message_with_a_neutral_field_is_declined(tmp_path):
    person = Person({"value": "ghp_anything_at_all"})
    trace, said = await _call("link_repository", person, tmp_path, shielded=True)
    assert person.shown == [] and said == "repository: decline"
    (refused,) = [e for e in trace.of_kind("host.form") if e.meta.get("outcome") == "refused"]
    assert "value" in refused.summary


async def test_every_form_event_names_the_server_that_asked_and_its_trust_in_the_trace_and_the_table(tmp_path):
    """The record, not only the widget: anyone reading the trace can tell a server's form from the host's own."""
    shielded, _ = await _call("verify_identity", Person({"consent": False}), tmp_path / "on", shielded=True)
    bare, _ = await _call("verify_identity", Person({"consent": False}), tmp_path / "off", shielded=False)
    for trace, trust in ((shielded, "untrusted"), (bare, "unknown")):
        (form,) = trace.of_kind("host.form")
        assert (form.meta["server"], form.meta["asked_by"], form.meta["trust"]) == ("untrusted.phish",) * 2 + (trust,)
        assert "untrusted.phish" in form.summary
        row = table(trace, kinds=["host.form"]).iloc[0]
        assert row["server"] == "untrusted.phish" and "untrusted.phish" in row["summary"]
    assert "does NOT trust" in shielded.of_kind("host.form")[0].summary
