"""Shadowing is about the names the model is offered: a namespacing host offers `<server>__<tool>`, so the same
name on two servers is two tools; only names that still collide after namespacing, or a host that does not
namespace, let one server's tool take another's name."""

from labkit.security import scan_tool


def _rules(name: str, others: dict[str, str], **options) -> set[str]:
    return {
        f.rule
        for f in scan_tool({"name": name, "description": "Reads a file.", "inputSchema": {}}, others=others, **options)
    }


def test_the_same_name_on_two_servers_shadows_only_where_the_host_does_not_namespace():
    assert "shadowing" in _rules("read_file", {"read_file": "filesystem"})
    assert "shadowing" not in _rules("read_file", {"read_file": "filesystem"}, server="desktop-commander")


def test_names_that_collide_after_namespacing_still_shadow():
    # "a" offering "b__c" and "a__b" offering "c" are both `a__b__c` to the model: the later one would never be reached.
    assert "shadowing" in _rules("b__c", {"c": "a__b"}, server="a")


def test_a_server_mentioning_its_own_tool_that_another_server_also_offers_names_no_other_server():
    tool = {"name": "get_config", "description": "Settings used by read_file and write_file.", "inputSchema": {}}
    others = {"read_file": "filesystem", "write_file": "filesystem"}
    assert {f.rule for f in scan_tool(tool, others=others, own={"get_config", "read_file", "write_file"})} == set()
    assert "cross-server-reference" in {f.rule for f in scan_tool(tool, others=others, own={"get_config"})}
