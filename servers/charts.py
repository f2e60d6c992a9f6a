"""The charts server: `render_error_trend` draws a service's hourly errors and saves the PNG in a chart space."""

from __future__ import annotations

import base64
import io
import threading
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.elicitation import AcceptedElicitation, render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    ImageContent,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from servers._report import report
from servers._wiring import (
    data_dir,
    declares_form_elicitation,
    foreseen_failures,
    missing_form_elicitation,
    new_server,
    run,
)
from servers.i18n import N_, _
from servers.systems.chart_space import Space, recorded_save, remember_save, save_chart
from servers.systems.log_store import (
    SERVICE_HELP,
    SINCE_HELP,
    UNTIL_HELP,
    HourlyCount,
    LogStore,
    format_hour,
    parse_window,
    peak,
)

__all__ = ["QUESTION", "ChartSaved", "SpaceChoice", "build_server", "render_trend_png"]

QUESTION = N_("Save the chart to your personal space or the team space?")  # asked in the learner's language
WIDTH, HEIGHT, DPI = 640, 320, 100
LAB_STYLE = Path(__file__).resolve().parent.parent / "lab.mplstyle"  # fonts with a CJK fallback
_SPACE_KEY = "space"
_ROUND_ONE_STATE = "render_error_trend/asked-space/v2/"
"""The plaintext of round one's requestState, then the save's idempotency key (sealed, so clients cannot pick it)."""
_BAD_ANSWER = "chart not saved: the answer must pick space 'personal' or 'team'"


class SpaceChoice(BaseModel):
    # Labelled as the class is made: a server's language is set once, by LABKIT_LANG, before it starts.
    space: Space = Field(
        default="personal",
        title=_("Space"),
        description=_("personal: only you can see it; team: everyone on the team can"),
    )


class ChartSaved(BaseModel):
    space: Space = Field(description="The space the chart was saved in")
    path: str = Field(description="Where the PNG is, relative to the data folder")
    service: str
    since: str = Field(description="Start of the window, local time UTC+08:00")
    until: str = Field(description="End of the window (exclusive), local time UTC+08:00")
    total: int = Field(description="ERROR lines in the window")
    peak_hour: str | None = Field(description="Hour with the most errors, or null when there were none")
    points: list[HourlyCount] = Field(description="The plotted values, one per hour")


def render_trend_png(service: str, points: list[HourlyCount]) -> bytes:
    """A 640x320 bar chart of errors per hour, the peak hour in red; same input, same bytes. A ToolError naming the
    font to install when a label has characters no font of the lab's style has (they would be drawn as empty boxes)."""
    # Imported here: matplotlib adds ~0.3 s to a server start that most sessions never need.
    from matplotlib import rc_context, rcParams
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    busiest = peak(points)
    end = datetime.fromisoformat(points[-1].hour) + timedelta(hours=1)
    title = _("{service}: errors per hour, {start} to {end}").format(
        service=service, start=points[0].hour.replace("T", " "), end=f"{end:%Y-%m-%d %H:%M}"
    )
    x_label, y_label = _("hour starting (local time, UTC+08:00)"), _("errors")
    peak_label = _("peak {errors}").format(errors=busiest.errors) if busiest is not None else ""
    step = max(1, len(points) // 12)
    ticks = [point.hour[5:].replace("T", "\n") for point in points][::step]
    with rc_context(fname=LAB_STYLE):  # a Chinese label is drawn in a CJK font, not as boxes
        if missing := _undrawable([title, x_label, y_label, peak_label, *ticks]):
            raise ToolError(
                _(
                    "chart not drawn: no font on this machine has the characters {missing} of its labels (the lab's "
                    "style asks for {fonts}); install one (Debian and Ubuntu: fonts-noto-cjk) or start the server "
                    "with LABKIT_LANG=en"
                ).format(missing=missing, fonts=", ".join(rcParams["font.family"]))
            )
        figure = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        axes = figure.subplots()
        colours = ["#c0392b" if point is busiest else "#4c72b0" for point in points]
        axes.bar(range(len(points)), [point.errors for point in points], color=colours)
        axes.set_xticks(range(0, len(points), step), ticks)
        axes.tick_params(labelsize=7)
        axes.set_title(title, fontsize=9)
        axes.set_xlabel(x_label, fontsize=8)
        axes.set_ylabel(y_label, fontsize=8)
        if busiest is not None:
            axes.annotate(
                peak_label,
                (points.index(busiest), busiest.errors),
                fontsize=7,
                ha="center",
                va="bottom",
                xytext=(0, 2),
                textcoords="offset points",
            )
        axes.margins(y=0.15)
        figure.tight_layout()
        buffer = io.BytesIO()
        FigureCanvasAgg(figure).print_png(buffer, metadata={"Software": None})
        return buffer.getvalue()


def _undrawable(texts: list[str]) -> str:
    """The characters of `texts` that no font of the style in force has: matplotlib looks for each character in the
    fonts of `font.family` in turn, and draws one that none of them has as an empty box."""
    from matplotlib import font_manager, rcParams
    from matplotlib.ft2font import FT2Font

    missing = {character for text in texts for character in text if character.isprintable() and not character.isspace()}
    for family in rcParams["font.family"]:
        if not missing:
            break
        try:
            path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        except ValueError:
            continue  # not on this machine
        has = FT2Font(path).get_charmap()
        missing = {character for character in missing if ord(character) not in has}
    return "".join(sorted(missing))


def _chart_name(service: str, start: datetime, end: datetime) -> str:
    return f"{service}_{start:%Y%m%dT%H%M}_{end:%Y%m%dT%H%M}"


def _not_chosen(action: str) -> ToolError:
    return ToolError(f"chart not saved: the question {_(QUESTION)!r} was answered with {action!r}, not a space")


def _chosen_space(answer: object) -> Space:
    """The space picked in a 2026-07-28 input response, or a ToolError saying why there is none."""
    if not isinstance(answer, ElicitResult) or answer.action != "accept":
        raise _not_chosen(answer.action if isinstance(answer, ElicitResult) else "no elicitation answer")
    try:
        return SpaceChoice.model_validate(answer.content).space
    except ValidationError:
        raise ToolError(_BAD_ANSWER) from None


async def _ask_space_legacy(ctx: Context) -> Space:
    """Ask with a server-to-client elicitation/create request (2025-11-25 era)."""
    # The spec forbids sending a request type the client did not declare; say so instead of failing on the wire.
    if not declares_form_elicitation(ctx):
        raise ToolError(f"chart not saved: this client cannot answer the question {_(QUESTION)!r} (no elicitation)")
    try:
        answer = await ctx.elicit(_(QUESTION), SpaceChoice)
    except ValueError:
        raise ToolError(_BAD_ANSWER) from None
    if isinstance(answer, AcceptedElicitation):
        return answer.data.space
    raise _not_chosen(answer.action)


def _already_saved(saved: ChartSaved) -> CallToolResult:
    """The answer to a second use of one requestState (a replay, or a retry after a lost reply): no second save."""
    text = f"Already saved: this answer was used before, so nothing was written again. The chart is {saved.path}."
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=saved.model_dump(mode="json")
    )


def build_server() -> MCPServer:
    store = LogStore(data_dir())
    mcp = new_server("charts", "Draws error-trend charts from the shop's logs and saves them in a chart space.")

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    async def render_error_trend(
        service: Annotated[str, Field(description=SERVICE_HELP)],
        since: Annotated[str, Field(description=SINCE_HELP)],
        ctx: Context,
        until: Annotated[str | None, Field(description=UNTIL_HELP)] = None,
    ) -> Annotated[CallToolResult, ChartSaved] | InputRequiredResult:
        """Draw a bar chart of a service's errors per hour and save it as a PNG in the user's chosen space.

        Use it after the numbers are known, when the user wants a picture of the trend. Do not use it to
        find the numbers themselves (query_errors on the logs server does that); it writes a file.
        Before saving it asks the user: personal space or team space.

        Returns the chart as a PNG image, a one-line text, and structured content:
        space, path, service, since, until, total, peak_hour and points ([{hour, errors}]).
        """
        try:
            start, end = parse_window(since, until)
        except ValueError as error:
            raise ToolError(str(error)) from None
        with foreseen_failures():
            known = store.services()
        if service not in known:
            raise ToolError(f"unknown service {service!r}; known services: {', '.join(known)}")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (ctx.input_responses or {}).get(_SPACE_KEY)
            if answer is None:
                if not declares_form_elicitation(ctx):
                    raise missing_form_elicitation(_(QUESTION))
                schema = render_elicitation_schema(SpaceChoice)
                question = ElicitRequestFormParams(message=_(QUESTION), requested_schema=schema)
                return InputRequiredResult(
                    input_requests={_SPACE_KEY: ElicitRequest(params=question)},
                    request_state=_ROUND_ONE_STATE + uuid.uuid4().hex,
                )
            if not (ctx.request_state or "").startswith(_ROUND_ONE_STATE):
                raise ToolError("chart not saved: send the answer back with the requestState of the first round")
            save_key = (ctx.request_state or "").removeprefix(_ROUND_ONE_STATE)
            if (earlier := recorded_save(data_dir(), save_key)) is not None:
                return _already_saved(ChartSaved.model_validate(earlier))
            space = _chosen_space(answer)
        else:
            save_key = None
            space = await _ask_space_legacy(ctx)

        with foreseen_failures():
            points = store.hourly_errors(service, start, end)
        png = await anyio.to_thread.run_sync(render_trend_png, service, points)  # keep serving while drawing
        try:
            written = save_chart(data_dir(), space, _chart_name(service, start, end), png)
        except OSError as error:
            folder = data_dir() / "spaces" / space
            raise ToolError(f"chart not saved: cannot write into {folder} ({error.strerror})") from None
        path = written.relative_to(data_dir()).as_posix()
        report(
            "server",
            "system",
            "server.render",
            _("renders the {service} chart and saves it in the {space} space").format(service=service, space=space),
            {"space": space, "path": path, "bytes": len(png)},
        )
        busiest = peak(points)
        saved = ChartSaved(
            space=space,
            path=path,
            service=service,
            since=format_hour(start),
            until=format_hour(end),
            total=sum(point.errors for point in points),
            peak_hour=busiest.hour if busiest else None,
            points=points,
        )
        if save_key is not None:
            remember_save(data_dir(), save_key, saved.model_dump(mode="json"))
        summary = f"Saved the {service} error chart ({saved.total} errors, peak {saved.peak_hour}) to {saved.path}."
        return CallToolResult(
            content=[
                ImageContent(type="image", data=base64.b64encode(png).decode(), mime_type="image/png"),
                TextContent(type="text", text=summary),
            ],
            structured_content=saved.model_dump(mode="json"),
        )

    return mcp


def import_matplotlib() -> None:
    """Import what the first chart needs; the server runs this on a background thread as it starts."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    from matplotlib.figure import Figure  # noqa: F401


if __name__ == "__main__":
    # Off the request path: the import overlaps the client's handshake instead of delaying the first chart.
    threading.Thread(target=import_matplotlib, name="import-matplotlib", daemon=True).start()
    run(build_server)
