"""The trace: every message between the six actors, recorded as events, and the views drawn from them.

`Trace` holds the events; `TappedTransport` records the MCP frames of any SDK client transport and
`ModelTap` the model API's request and response bodies; `table`, `sequence_diagram`, `save_png`,
`group_steps` and `to_otlp` turn a run into a table, a diagram, steps or OpenTelemetry spans.
This wing imports nothing else of labkit.
"""

from ._encodings import base64_texts
from ._events import ACTORS, Actor, Event, Trace
from ._kinds import KIND_MEANINGS, Kind, Meta, Outcome
from ._labels import ACTOR_LABELS, EVENT_HEADINGS
from ._mcp_tap import TappedTransport, frame_payload
from ._model_tap import OFFLINE_KEY, REASON_HEADER, SIMULATED_MODEL, ModelTap, redact
from ._otel import AGENT_NAME, export_otlp, save_otlp, to_otlp
from ._overlap import CallSpan, call_spans, covered, overlap_saving
from ._png import save_png
from ._select import select
from ._steps import STEP_ACTORS, Step, count_steps, group_steps, steps_table
from ._summaries import fold, frame_kind, summarise_frame
from ._tokens import ESTIMATOR, estimate_tokens
from ._views import Diagram, headed, pretty, sequence_diagram, table

__all__ = [
    "ACTORS",
    "ACTOR_LABELS",
    "AGENT_NAME",
    "ESTIMATOR",
    "EVENT_HEADINGS",
    "KIND_MEANINGS",
    "OFFLINE_KEY",
    "REASON_HEADER",
    "SIMULATED_MODEL",
    "STEP_ACTORS",
    "Actor",
    "CallSpan",
    "Diagram",
    "Event",
    "Kind",
    "Meta",
    "ModelTap",
    "Outcome",
    "Step",
    "TappedTransport",
    "Trace",
    "base64_texts",
    "call_spans",
    "count_steps",
    "covered",
    "estimate_tokens",
    "export_otlp",
    "fold",
    "frame_kind",
    "frame_payload",
    "group_steps",
    "headed",
    "overlap_saving",
    "pretty",
    "redact",
    "save_otlp",
    "save_png",
    "select",
    "sequence_diagram",
    "steps_table",
    "summarise_frame",
    "table",
    "to_otlp",
]
