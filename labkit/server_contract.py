"""The host↔server environment contract: each variable the host sets for a lab server, and the server reads (README).

The one place these names are spelled, on both sides: the host's `labkit.processes.server_env` and the lab's
servers (`servers/_wiring.py`, `servers/_report.py`, `servers/i18n.py`, `servers/_protected.py`) import them from
here. Standard library only, and importing it loads no wing of labkit: a server's start pays for nothing else.
"""

from __future__ import annotations

__all__ = [
    "AUTH_ISSUER_ENV",
    "DATA_DIR_ENV",
    "EVENTS_FILE_ENV",
    "HOST_SECRET_ENV",
    "LANGUAGE_ENV",
    "MAX_RESULT_BYTES_ENV",
    "REQUEST_STATE_KEY_ENV",
    "REQUEST_STATE_TTL_ENV",
    "TRUSTED_CA_ENV",
    "WORKDIR_ENV",
]

DATA_DIR_ENV = "LABKIT_DATA_DIR"
"""The folder of the business systems every server of a run shares (named even when it is the default)."""
WORKDIR_ENV = "LABKIT_WORKDIR"
"""The folder a lab server starts in, when the host's environment names one (else the repository)."""
LANGUAGE_ENV = "LABKIT_LANG"
"""The learner's language, `en` or `zh_CN`: a server draws and answers in it."""
EVENTS_FILE_ENV = "LABKIT_EVENTS_FILE"
"""The file a lab server reports its inside work to; the host records it into the trace."""
MAX_RESULT_BYTES_ENV = "LABKIT_MAX_RESULT_BYTES"
"""The most a server sends as one tool result; the host's supervisor lets that much (plus the envelope) through."""
REQUEST_STATE_KEY_ENV = "LABKIT_REQUEST_STATE_KEY"
"""The key replicas of one business server share to seal request state (notebook 04); business servers only."""
REQUEST_STATE_TTL_ENV = "LABKIT_REQUEST_STATE_TTL"
"""How long a sealed request state lasts, in seconds."""
HOST_SECRET_ENV = "LABKIT_HOST_SECRET"
"""The secret a lab server started with `--http` demands in each request's URL: only its host can call it."""
AUTH_ISSUER_ENV = "LABKIT_AUTH_ISSUER"
"""The authorization server a protected lab server trusts (notebook 09); set, the host adds no secret."""
TRUSTED_CA_ENV = "LABKIT_TRUSTED_CA"
"""A certificate authority's file (PEM): the authorization server trusts it, and only it, when it fetches a client's
metadata document over HTTPS (notebook 09); unset, it trusts the system's authorities."""
