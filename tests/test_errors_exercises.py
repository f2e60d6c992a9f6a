"""Notebook 05's exercise checks really run the servers: right answers pass, typical wrong ones are explained."""

from __future__ import annotations

from typing import Any

import mcp_types

from labkit.lessons import check

RawRequest = mcp_types.Request[dict[str, Any], str]


def test_05_1_the_repaired_arguments_must_pass_the_rule_and_cover_last_night():
    assert check("05.1", {"service": "order-service", "since": "2026-10-29T20:00"}).passed
    refused = check("05.1", {"service": "order-service", "since": "2026-10-01T00:00"})
    assert not refused.passed and "at most 7 days" in refused.message
    short = check("05.1", {"service": "order-service", "since": "2026-10-30T02:00"})
    assert "does not cover last night" in short.message


def test_05_2_limits_are_checked_by_running_the_faulty_server_a_loop_and_the_canonical_task():
    assert check("05.2", {"call_timeout": 4.0, "max_result_chars": 4000, "round_cap": 5}).passed
    assert "too short" in check("05.2", {"call_timeout": 1.0, "max_result_chars": 4000, "round_cap": 5}).message
    assert "was not delivered" in check("05.2", {"call_timeout": 3.0, "max_result_chars": 4000, "round_cap": 2}).message


def test_05_3_one_request_must_break_the_shape_and_the_other_a_value():
    execution = RawRequest(
        method="tools/call", params={"name": "query_errors", "arguments": {"service": "order-service", "since": "soon"}}
    )
    protocol = RawRequest(method="tools/call", params={"name": "query_errors", "arguments": ["order-service"]})
    assert check("05.3", {"protocol error": protocol, "execution error": execution}).passed
    swapped = check("05.3", {"protocol error": execution, "execution error": protocol})
    assert not swapped.passed and "break its shape" in swapped.message
    other_method = RawRequest(method="tools/destroy", params={"name": "query_errors"})
    assert (
        "tools/call of query_errors"
        in check("05.3", {"protocol error": other_method, "execution error": execution}).message
    )
