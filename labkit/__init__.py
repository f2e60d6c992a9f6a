"""labkit: the teaching lab's toolkit — record a run of an agent using MCP tools, and show it."""

from .events import ACTORS, Event, Trace
from .views import pretty, select, sequence_diagram, table

__all__ = ["ACTORS", "Event", "Trace", "pretty", "select", "sequence_diagram", "table"]
