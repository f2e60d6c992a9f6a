"""The logs server: `query_errors` checks input, caller and rate, reads the log store and cleans what it returns."""

from __future__ import annotations

import argparse
import re
import time
from collections import defaultdict, deque
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from servers._report import report
from servers._wiring import caller_name, data_dir, foreseen_failures, new_server, run
from servers.i18n import _
from servers.systems.log_store import (
    SERVICE_HELP,
    SINCE_HELP,
    UNTIL_HELP,
    HourlyCount,
    LogStore,
    TopError,
    format_hour,
    parse_window,
    peak,
)

__all__ = ["ErrorReport", "RateLimiter", "build_report", "build_server", "clean_text", "summarize"]

MAX_MESSAGE_CHARS = 160
TOP_ERRORS = 5
_ANSI_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


class ErrorReport(BaseModel):
    service: str = Field(description="The service that was queried")
    since: str = Field(description="Start of the window, local time UTC+08:00")
    until: str = Field(description="End of the window (exclusive), local time UTC+08:00")
    total: int = Field(description="ERROR lines in the window")
    peak_hour: str | None = Field(description="Hour with the most errors, or null when there were none")
    peak_errors: int = Field(description="Errors in the peak hour")
    hourly: list[HourlyCount] = Field(description="Errors per hour, empty hours included")
    top_errors: list[TopError] = Field(description=f"The {TOP_ERRORS} most frequent error codes, most frequent first")


class RateLimiter:
    """At most `limit` calls per caller in any sliding window of `window` seconds."""

    def __init__(self, limit: int, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self._clock = limit, window, clock
        self._calls: defaultdict[str, deque[float]] = defaultdict(deque)

    def admit(self, caller: str) -> float | None:
        """Record a call and return None, or refuse it and return the seconds until the next free slot."""
        now, calls = self._clock(), self._calls[caller]
        while calls and calls[0] <= now - self.window:
            calls.popleft()
        if len(calls) >= self.limit:
            return calls[0] + self.window - now
        calls.append(now)
        return None


def clean_text(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Drop ANSI escapes and control characters (log lines are data, not terminal input) and cap the length."""
    text = " ".join(_CONTROL_CHARS.sub(" ", _ANSI_ESCAPE.sub("", text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def build_report(store: LogStore, service: str, start: datetime, end: datetime) -> ErrorReport:
    hourly = store.hourly_errors(service, start, end)
    busiest = peak(hourly)
    top = [
        error.model_copy(update={"message": clean_text(error.message)})
        for error in store.top_errors(service, start, end, TOP_ERRORS)
    ]
    return ErrorReport(
        service=service,
        since=format_hour(start),
        until=format_hour(end),
        total=sum(point.errors for point in hourly),
        peak_hour=busiest.hour if busiest else None,
        peak_errors=busiest.errors if busiest else 0,
        hourly=hourly,
        top_errors=top,
    )


def summarize(report: ErrorReport) -> str:
    """A few lines a person or a model can read; the same numbers as the structured content."""
    lines = [f"{report.service}: {report.total} errors from {report.since} to {report.until} (UTC+08:00)."]
    if report.peak_hour is not None:
        lines.append(f"Peak hour {report.peak_hour} with {report.peak_errors} errors.")
    lines.append("Errors per hour: " + ", ".join(f"{p.hour[5:10]} {p.hour[11:]} {p.errors}" for p in report.hourly))
    lines += [f"Top error {e.code} x{e.count}: {e.message}" for e in report.top_errors]
    return "\n".join(lines)


def build_server(allowed_services: Collection[str] | None = None, rate_limit: int = 30) -> MCPServer:
    """`allowed_services`: what any caller may read (None: all); `rate_limit`: calls per minute per caller."""
    store = LogStore(data_dir())
    limiter = RateLimiter(rate_limit)
    mcp = new_server("logs", "Read-only error logs of the shop's services (fixed clock 2026-10-30 09:00).")

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    def query_errors(
        service: Annotated[str, Field(description=SERVICE_HELP)],
        since: Annotated[str, Field(description=SINCE_HELP)],
        ctx: Context,
        until: Annotated[str | None, Field(description=UNTIL_HELP)] = None,
    ) -> Annotated[CallToolResult, ErrorReport]:
        """Count a service's ERROR log lines per hour and list its most frequent errors in a time window.

        Use it to find out when and why a service's errors rose, e.g. "why did order-service fail last night?".
        Do not use it for request volumes, latency or business data such as orders; it only reads error logs.

        Returns a short text summary plus structured content: total, peak_hour, peak_errors, hourly
        ([{hour, errors}]) and top_errors ([{code, message, count}], at most 5, messages cleaned and shortened).
        """
        caller = caller_name(ctx)
        if (wait := limiter.admit(caller)) is not None:
            raise ToolError(f"rate limit: at most {rate_limit} calls per minute for {caller!r}; retry in {wait:.0f} s")
        try:
            start, end = parse_window(since, until)
        except ValueError as error:
            raise ToolError(str(error)) from None
        with foreseen_failures():
            known = store.services()
        readable = [name for name in known if allowed_services is None or name in allowed_services]
        if service not in readable:
            problem = f"caller {caller!r} may not read" if service in known else "unknown service"
            raise ToolError(f"{problem} {service!r}; services you can read: {', '.join(readable)}")
        window = _("{start} to {end}").format(start=format_hour(start), end=format_hour(end))
        report(
            "server",
            "system",
            "server.query",
            _("input, caller {caller!r} and rate checked; asks the log store for {service} errors {window}").format(
                caller=caller, service=service, window=window
            ),
            {"service": service, "since": since, "until": until, "caller": caller},
        )
        with foreseen_failures():
            found = build_report(store, service, start, end)
        report(
            "system",
            "server",
            "system.answer",
            _("log store: {total} {service} errors {window}, peak {peak_hour} ({peak_errors})").format(
                total=found.total,
                service=service,
                window=window,
                peak_hour=found.peak_hour,
                peak_errors=found.peak_errors,
            ),
            {"total": found.total, "peak_hour": found.peak_hour},
        )
        return CallToolResult(
            content=[TextContent(type="text", text=summarize(found))],
            structured_content=found.model_dump(mode="json"),
        )

    return mcp


def _add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow",
        dest="allowed_services",
        action="append",
        metavar="SERVICE",
        help="a service callers may read; repeat for several (default: all)",
    )
    parser.add_argument("--rate-limit", type=int, default=30, help="calls per minute per caller (default 30)")


if __name__ == "__main__":
    run(build_server, _add_flags)
