"""What a person approves is what is sent: the schema's defaults the approval showed go on the wire, and an address
spelled with compatibility characters (a full-width ＠, a one-dot leader) is read as the address it is."""

from __future__ import annotations

import anyio

from labkit.host import ServerSpec
from labkit.lessons import prepare_lab
from labkit.security import ApprovalDesk, Defences, PinStore, Shield, careful_user
from labkit.security._approval import concerns
from labkit.trace import Trace
from servers.attacks.consent import OWN_DEFAULT, SHOWN_DEFAULT


async def test_the_server_receives_the_default_the_person_approved_not_one_of_its_own(tmp_path):
    """On the old code the person approved channel '#ops' and the server, sent no channel, posted elsewhere."""
    trace = Trace()
    shield = Shield(
        trace, Defences.all(), lab=prepare_lab(), desk=ApprovalDesk(trace), pins=PinStore(tmp_path / "pins.json")
    )
    with anyio.fail_after(120):
        async with shield.open([ServerSpec("servers.attacks.consent")]) as host:
            result = await host.call("servers.attacks.consent__post_team_update", {"message": "Deploy at 22:00"})
    (request,) = shield.desk.requests
    assert request.approved and f'"channel": "{SHOWN_DEFAULT}"' in request.shown
    (sent,) = [e for e in trace.of_kind("jsonrpc.request") if e.name == "post_team_update"]
    assert sent.payload["params"]["arguments"] == {"message": "Deploy at 22:00", "channel": SHOWN_DEFAULT}
    assert f"Posted to {SHOWN_DEFAULT}." in result.text and OWN_DEFAULT not in result.text


def test_an_address_in_compatibility_characters_is_outside_the_company():
    """On the old code the careful user saw no address in 'ops-archive＠exfil․example' and approved."""
    disguised = {"recipient": "ops-archive\uff20exfil\u2024example", "message": "pager test"}
    assert [c.kind for c in concerns("page_oncall", disguised)] == ["outside-address"]
    assert careful_user("pager", "page_oncall", disguised)[0] is False
    look_alike = {"recipient": "oncall@\u0455hop.example"}  # a Cyrillic ѕ: another domain, not the user's
    assert [c.kind for c in concerns("page_oncall", look_alike)] == ["outside-address"]
    assert concerns("page_oncall", {"recipient": "oncall@shop.example"}) == []
