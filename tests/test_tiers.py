"""The fast tier's rule (tests/tiers.py): a test not marked slow that starts a process, forks or
starts a TensorFlow server fails, naming itself and the fix; a slow one may."""

from __future__ import annotations

import pytest

HEADER = "import os, subprocess, sys\nimport pytest\nimport devplace as dp\n"


def run_inner(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    """Run the test module `body` with the tier rule, in this process."""
    pytester.makepyfile(test_inner=HEADER + body)
    return pytester.runpytest("-p", "tiers", "-p", "no:cacheprovider")


@pytest.mark.parametrize(
    ("start", "what"),
    [
        ("subprocess.run([sys.executable, '-c', 'pass'])", "a process: "),
        ("os.system('true')", "a process (os.system)"),
        ("os.posix_spawnp('true', ['true'], os.environ)", "a process (os.posix_spawnp)"),
        ("dp.tf.distribute.Server.create_local_server()", "a TensorFlow server (a cluster)"),
    ],
)
def test_a_fast_test_that_starts_a_process_or_server_fails_naming_the_fix(
    pytester: pytest.Pytester, start: str, what: str
) -> None:
    result = run_inner(pytester, f"def test_starts():\n    {start}\n")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"*test_inner.py::test_starts is in the fast tier but started {what}*mark it slow*"]
    )


def test_a_fixture_that_starts_a_process_fails_the_fast_test_using_it(
    pytester: pytest.Pytester,
) -> None:
    body = (
        "@pytest.fixture(scope='module')\n"
        "def julia():\n    return subprocess.run(['true'])\n"
        "def test_uses(julia):\n    pass\n"
    )
    result = run_inner(pytester, body)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*test_uses is in the fast tier but started a process: true*"])


def test_a_fast_test_that_swallows_the_refusal_still_fails(pytester: pytest.Pytester) -> None:
    body = (
        "def test_hides():\n"
        "    try:\n        subprocess.run(['true'])\n    except BaseException:\n        pass\n"
    )
    result = run_inner(pytester, body)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_hides is in the fast tier but started a process: true*"])


def test_slow_tests_may_start_processes_by_mark_on_the_test_or_module(
    pytester: pytest.Pytester,
) -> None:
    start = "    assert subprocess.run(['true']).returncode == 0\n"
    result = run_inner(pytester, "@pytest.mark.slow\ndef test_marked():\n" + start)
    result.assert_outcomes(passed=1)
    pytester.makepyfile(
        test_module=HEADER + "pytestmark = pytest.mark.slow\ndef test_in():\n" + start
    )
    pytester.runpytest("-p", "tiers", "test_module.py").assert_outcomes(passed=1)
