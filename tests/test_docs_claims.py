"""What README.md and docs/placement.md tell a new reader holds, in the order they need it."""

import re

import pytest
from test_docs_blocks import REPO, blocks

import devplace as dp

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_an_unplaceable_op_fails_a_fetch_that_does_not_need_it_and_the_docs_say_so():
    with dp.cpu(0):
        y = dp.sin(dp.constant(1.0), name="y")
    with dp.cpu(1):
        dp.cos(dp.constant(2.0), name="unrelated")
    with pytest.raises(dp.DevicePlacementError, match="cannot place op 'unrelated'"):
        dp.run(dp.Session(cpus=1), y)
    placement = (REPO / "docs" / "placement.md").read_text(encoding="utf-8")
    assert "reachable from a fetch is placed" not in placement
    assert "The whole graph is placed at the first `run`" in placement


def test_readme_profiles_and_reports_one_fetch_built_once():
    first = next(b for b in blocks(REPO / "README.md") if b.language == "python").code
    profiled = re.findall(r"dp\.run_profile\(sess, ([^)]*)\)", first)
    reported = re.findall(r"dp\.placement\(sess, ([^)]*)\)", first)
    assert profiled == reported == ["fetch"]  # a name: `g + c` twice would build two adds


def test_readme_says_where_commands_live_before_using_them():
    two_commands = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    assert "`make setup`" in two_commands and "quarter of an hour" in two_commands
    assert README.index(".venv/bin/devplace") < README.index("`devplace devices`")
    julia = README.split("## Julia", 1)[1]
    assert julia.index("`make setup` (run by `make demo` and `make test`") < 200
