"""labkit: the teaching lab's toolkit — record a run of an agent using MCP tools, and show it."""

from .events import ACTORS, Event, Trace
from .exercises import TODO, check
from .views import pretty, select, sequence_diagram, table

__all__ = ["ACTORS", "TODO", "Event", "Trace", "check", "pretty", "select", "sequence_diagram", "table"]
