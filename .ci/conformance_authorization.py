"""The harness's authorization-server scenarios against the lab's: `python ... NODE HARNESS_JS [OPTION...]`.

Starts the lab's authorization server (servers/auth.py) as notebook 09 does, registers a client for the
harness's callback (as an administrator would: the harness takes a client ID), runs the harness's
`authorization --url ISSUER --client-id ID --port PORT` and the options given, and plays the user: when
the harness prints the authorization URL, its browser signs in as alice on the consent page and follows
the redirect back to the harness. Then the harness's scenarios once more, its client ID the URL
of a client ID metadata document (served over HTTPS by the lab's client site, whose throwaway authority the
authorization server is told to trust), so the harness signs in with a client nobody registered. The harness's
output is passed on; exits with the first failing run's status.
"""

from __future__ import annotations

import subprocess
import sys

import httpx2
from pydantic import AnyHttpUrl

from labkit.lessons._remote import authorization_server, client_site
from labkit.processes import free_port

USER = "alice"


def sign_in(authorization_url: str) -> None:
    """The browser: the consent page (the authorization server redirects to it), allow as USER, then the redirect
    back to the harness's callback, which answers once it has the code."""
    with httpx2.Client(follow_redirects=True, timeout=30) as browser:
        page = browser.get(authorization_url)
        page.raise_for_status()
        form = {"request": page.url.params["request"], "decision": "allow", "user": USER}
        browser.post(str(page.url.copy_with(query=None)), data=form).raise_for_status()


def harness_run(issuer: str, port: int, client_id: str, command: list[str]) -> int:
    """The harness against `issuer` as the client `client_id`, its callback on `port`; the user plays along."""
    # The issuer as the lab's servers advertise it (servers/_protected.py, through the SDK's settings): an origin
    # with the root path's slash, which is what its metadata says (RFC 8414 wants them identical).
    identifier = str(AnyHttpUrl(issuer))
    command = [*command, "--url", identifier, "--port", str(port), "--client-id", client_id]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as run:
        assert run.stdout is not None
        for line in run.stdout:
            sys.stdout.write(line)
            if line.startswith(f"{issuer}/authorize?"):  # the harness's request, printed for a person
                sign_in(line.strip())
    return run.returncode


def main(node: str, harness: str, *options: str) -> int:
    port = free_port()
    client = {
        "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
        "client_name": "conformance harness",
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "none",
    }
    with client_site() as site, authorization_server(trusted_ca=site.ca_file) as issuer:
        registered = httpx2.post(f"{issuer}/register", json=client, timeout=30)
        registered.raise_for_status()
        command = [node, harness, "authorization", *options]
        first = harness_run(issuer, port, registered.json()["client_id"], command)
        document = f"{site.origin}/conformance-harness/client.json"
        site.publish(document.removeprefix(site.origin), {**client, "client_id": document})
        second = harness_run(issuer, port, document, command)  # the code grant reads the metadata scenario's answer
        return first or second


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
