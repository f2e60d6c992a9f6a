"""The trace: every message between the six actors, recorded as events, and the views drawn from them.

`Trace` holds the events; `TappedTransport` records the MCP frames of any SDK client transport and
`ModelTap` the model API's request and response bodies; `table`, `sequence_diagram`, `save_png`,
`group_steps` and `to_otlp` turn a run into a table, a diagram, steps or OpenTelemetry spans.
This wing imports nothing else of labkit.
"""

from ._events import ACTORS, Actor, Event, Trace
from ._mcp_tap import TappedTransport, frame_payload
from ._model_tap import OFFLINE_KEY, SIMULATED_MODEL, ModelTap, redact
from ._overlap import CallSpan, call_spans, overlap_saving
from ._otel import AGENT_NAME, save_otlp, to_otlp
from ._png import save_png
from ._steps import STEP_ACTORS, Step, count_steps, group_steps, steps_table
from ._summaries import fold, frame_kind, summarise_frame
from ._tokens import ESTIMATOR, estimate_tokens
from ._views import ACTOR_LABELS, Diagram, pretty, select, sequence_diagram, table

__all__ = [
    "ACTORS", "ACTOR_LABELS", "AGENT_NAME", "ESTIMATOR", "CallSpan", "call_spans", "overlap_saving", "OFFLINE_KEY", "SIMULATED_MODEL", "STEP_ACTORS", "Actor", "Diagram",
    "Event", "ModelTap", "Step", "TappedTransport", "Trace", "count_steps", "estimate_tokens", "fold", "frame_kind", "frame_payload",
    "group_steps", "pretty", "redact", "save_otlp", "save_png", "select", "sequence_diagram", "steps_table",
    "summarise_frame", "table", "to_otlp",
]
