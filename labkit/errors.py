"""The lab's own errors: `LabError`, and one subclass per cause a learner can act on (notebook 02)."""

from __future__ import annotations

__all__ = ["AuthError", "ConfigError", "LabError"]


class LabError(Exception):
    """Every error the lab raises for a cause of its own; `except LabError` catches them all (notebook 02).

    Each subclass keeps the built-in it refines where one fits (`ValueError` for input the lab cannot use,
    `RuntimeError` for a server that failed), so code that caught the built-in still does:
    `ServerStartError` (`labkit.processes`): a server could not be started, or ended before it answered;
    `ServerEnded` (`labkit.processes`): a server that had answered ended before its session did;
    `ServerMessageTooLarge` (`labkit.processes`): a stdio server sent a message over the host's limit;
    `ConfigError`: a config the host cannot use; `AuthError`: a server's authorization failed;
    `SkillError` (`labkit.skills`): a SKILL.md that breaks the format.
    """


class ConfigError(LabError, ValueError):
    """A config the host cannot use as written; the message names the file, the server and the cause (notebook 08)."""


class AuthError(LabError):
    """A server's authorization failed: the message names the server, the step (discovery, token, refresh) and why."""
