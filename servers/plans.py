"""The plans server (seed 003): `get_plan` says how many accounts a subscription plan allows."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from servers._wiring import new_server, run

__all__ = ["PLANS", "PlanInfo", "build_server", "look_up_plan"]


class PlanInfo(BaseModel):
    plan: str = Field(description="family or personal")
    max_accounts: int = Field(description="How many accounts may share the plan")
    monthly_price_cny: float = Field(description="Price per month in yuan (CNY)")
    description: str


PLANS = {
    "family": PlanInfo(
        plan="family",
        max_accounts=6,
        monthly_price_cny=38.0,
        description="One bill for a household; each member keeps their own account and history.",
    ),
    "personal": PlanInfo(
        plan="personal",
        max_accounts=3,
        monthly_price_cny=18.0,
        description="For one person on up to three of their own devices.",
    ),
}

_PLAN_HELP = 'The plan name in lower case, "family" or "personal", e.g. "family".'


def look_up_plan(plan: str) -> PlanInfo:
    """The plan's limits, or ValueError naming the valid plans. The plan data is a teaching example."""
    if plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r}; valid plans: {', '.join(PLANS)}")
    return PLANS[plan]


def build_server() -> MCPServer:
    mcp = new_server("plans", "Subscription plans: how many accounts each plan allows, and its price.")

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    def get_plan(plan: Annotated[str, Field(description=_PLAN_HELP)]) -> PlanInfo:
        """Look up a subscription plan: the maximum number of accounts, the monthly price and a description.

        Use it when a user asks how many accounts or devices a plan allows or what it costs.
        Do not use it to change or cancel a plan; it only reads.

        Returns {plan, max_accounts, monthly_price_cny, description}, e.g. family -> max_accounts 6.
        """
        try:
            return look_up_plan(plan)
        except ValueError as error:
            raise ToolError(str(error)) from None

    return mcp


if __name__ == "__main__":
    run(build_server)
