"""Schemas are data: a server's schema is checked with what it holds, and nothing it names is ever fetched."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._i18n import _
from ._jsonschema import jsonschema_module

if TYPE_CHECKING:
    import jsonschema

__all__ = ["outside_references", "schema_problems"]

_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def outside_references(schema: Any, where: str = "") -> list[tuple[str, str]]:
    """Every place a schema points outside itself, as (where, what): a `$ref` that is not a `#` fragment, an
    `$id` naming a document, a `$schema` that is not a meta-schema the host holds (notebook 07).

    The host resolves none of them: a tool whose schemas hold one is flagged when listed and its calls fail
    closed, so a server cannot make the host send a request anywhere (with data in the URL) by naming it.
    """
    found: list[tuple[str, str]] = []
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            path = f"{where}.{key}" if where else key
            if isinstance(value, str) and _outside(key, value):
                found.append((path, value))
            elif key not in ("const", "default", "enum", "examples"):  # values, not schemas
                found.extend(outside_references(value, path))
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            found.extend(outside_references(item, f"{where}[{index}]"))
    return found


def _outside(key: str, value: str) -> bool:
    if key in _REFERENCES or key == "$id":
        return not value.startswith("#")
    if key == "$schema":
        from jsonschema_specifications import REGISTRY  # the meta-schemas jsonschema ships: held, not fetched

        return value.rstrip("#") not in REGISTRY
    return False


def schema_problems(schema: Mapping[str, Any], instance: Any) -> list[str]:
    """Why `instance` does not match `schema`, checked against the schema alone (notebook 02).

    The validator gets an empty `referencing.Registry` (no retrieval): a reference outside the schema is a
    problem, never a request. jsonschema's default would fetch remote `$ref`s over the network.
    """
    outside = outside_references(schema)
    if outside:
        return [
            _("the schema refers outside itself ({where}: {what}); the host fetches nothing a server names").format(
                where=where, what=what
            )
            for where, what in outside
        ]
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    module = jsonschema_module()
    validator = module.validators.validator_for(schema, default=module.Draft202012Validator)(
        schema, registry=Registry()
    )
    try:
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    except Unresolvable as error:
        return [_("the schema refers to something it does not hold: {error}").format(error=error)]
    except RecursionError:  # a `$ref` that leads back to itself before any keyword checks the instance
        return [_("the schema refers to itself without end: no instance can be checked against it")]
    return [_describe(error) for error in errors]


def _describe(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.path)
    return f"{where}: {error.message}" if where else error.message
