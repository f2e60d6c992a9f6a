"""The host: it starts or reaches MCP servers, offers their tools to a model, and decides every call.

`Host` holds one MCP client per server (`ServerSpec`: a lab server, any stdio command, an HTTP URL,
or a whole `mcpServers` config with `Host.from_config`), runs the model loop and checks the answer
before delivery; the gate, the guards and the audit decide and record each call. The user's side
(forms, scripted users), the MCP→provider tool mapping and the real SDK model clients live here too.
A server's process (its start, supervisor, sandbox and limits) is `labkit.processes`; its names are handed on here.
This wing imports `labkit.trace` and `labkit.processes` only: never the simulator, never the lab's servers.
"""

from ..processes import (
    MAX_RESULT_BYTES_ENV,
    REPO_ROOT,
    TRANSPORTS,
    WARM_START_ENV,
    WORKDIR_ENV,
    Confinement,
    LabTempDir,
    ServerMessageTooLarge,
    ServerSpec,
    ServerStartError,
    confinement,
    free_port,
    http_server,
    max_message_bytes,
    network_env,
    sandboxed,
    server_env,
    stdio_params,
)
from ._audit import AuditEntry, AuditLog, argument_hash
from ._config import CONFIG_KEYS, ConfigError, McpConfig, load_config, read_config, specs_from_config
from ._connector import ERAS, HOST_INFO, Elicitor
from ._conversation import THINKING_BUDGET, Conversation, ToolCall, ToolResult, Turn
from ._gate import Approver, GateDecision, GatePolicy, check_call, deny_all, needs_approval
from ._guards import Guard, LocalTool, LocalToolResult
from ._host import Asker, Host, RunResult, lab_workspace
from ._http_record import AuthorizationRefused, HttpRecorder, HttpRefused, redact_credential
from ._jsonschema import jsonschema_module
from ._mapping import Api, ConvertedTool, McpCall, convert_tool, convert_tools, to_mcp_call, wire_tool
from ._model_clients import ENV_VAR, ModelSelection, Provider, import_sdk_meanwhile, model_client, select_model
from ._oauth import ClientCredentials, SignIn, client_metadata_document
from ._pool import HOST_SERVER, Route, ServerPool, namespaced_name
from ._progress import Progress, progress
from ._progress_updates import ProgressUpdates
from ._provider_names import NameMap, provider_name
from ._rerun import Waited, wait_for_click
from ._router import ToolRouter, result_as_data, truncate
from ._schema_refs import outside_references, schema_problems
from ._strict_schema import drop_nulls, strict_schema
from ._transports import http_transport, memory_transport, sse_transport, stdio_transport
from ._user import (
    SCRIPTED_USER_ENV,
    elicitation_callback,
    scripted_answers,
    scripted_form,
    scripted_user_active,
    widget_form,
)
from ._waiting import WaitingForm

__all__ = [
    "CONFIG_KEYS",
    "ENV_VAR",
    "ERAS",
    "HOST_INFO",
    "HOST_SERVER",
    "MAX_RESULT_BYTES_ENV",
    "REPO_ROOT",
    "SCRIPTED_USER_ENV",
    "THINKING_BUDGET",
    "TRANSPORTS",
    "WARM_START_ENV",
    "WORKDIR_ENV",
    "Api",
    "Approver",
    "Asker",
    "AuditEntry",
    "AuditLog",
    "AuthorizationRefused",
    "ClientCredentials",
    "ConfigError",
    "Confinement",
    "Conversation",
    "ConvertedTool",
    "Elicitor",
    "GateDecision",
    "GatePolicy",
    "Guard",
    "Host",
    "HttpRecorder",
    "HttpRefused",
    "LabTempDir",
    "LocalTool",
    "LocalToolResult",
    "McpCall",
    "McpConfig",
    "ModelSelection",
    "NameMap",
    "Progress",
    "ProgressUpdates",
    "Provider",
    "Route",
    "RunResult",
    "ServerMessageTooLarge",
    "ServerPool",
    "ServerSpec",
    "ServerStartError",
    "SignIn",
    "ToolCall",
    "ToolResult",
    "ToolRouter",
    "Turn",
    "Waited",
    "WaitingForm",
    "argument_hash",
    "check_call",
    "client_metadata_document",
    "confinement",
    "convert_tool",
    "convert_tools",
    "deny_all",
    "drop_nulls",
    "elicitation_callback",
    "free_port",
    "http_server",
    "http_transport",
    "import_sdk_meanwhile",
    "jsonschema_module",
    "lab_workspace",
    "load_config",
    "max_message_bytes",
    "memory_transport",
    "model_client",
    "namespaced_name",
    "needs_approval",
    "network_env",
    "outside_references",
    "progress",
    "provider_name",
    "read_config",
    "redact_credential",
    "result_as_data",
    "sandboxed",
    "schema_problems",
    "scripted_answers",
    "scripted_form",
    "scripted_user_active",
    "select_model",
    "server_env",
    "specs_from_config",
    "sse_transport",
    "stdio_params",
    "stdio_transport",
    "strict_schema",
    "to_mcp_call",
    "truncate",
    "wait_for_click",
    "widget_form",
    "wire_tool",
]
