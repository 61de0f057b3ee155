"""DevPlace.jl's own test suite (julia/DevPlace/test/runtests.jl), as part of `make test`, and
Julia's rules as the host applies them (devplace.bridge.julia_semantics), checked against numpy
so that they hold on machines without Julia too."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from julia_runner import PROJECT, TRANSPORTS, run_julia

import devplace as dp
from devplace.bridge import julia_semantics as js

TEST_DIR = PROJECT / "test"

#: DevPlace.jl's test files (runtests.jl's TEST_FILES) in groups of similar time (1 to 3 min
#: here; runtests.jl prints each file's), one Julia process each: pytest reports and times
#: each group, and Julia's start is paid 4 times, not 32.
SUITE_GROUPS = {
    "bridge": (
        "vectors.jl", "layering.jl", "overwrite.jl", "conversion.jl", "host.jl",
        "callbacks.jl", "errors.jl", "macros.jl", "badinput.jl",
    ),
    "api": (
        "api.jl", "indexing.jl", "tasks.jl", "seeds.jl", "tf1_programs.jl", "cluster.jl",
        "handles.jl", "display.jl",
    ),
    "adcme-core": (
        "adcme.jl", "adcme_api.jl", "adcme_api_ops.jl", "adcme_sparse.jl", "adcme_optim.jl",
    ),
    "adcme-kit": (
        "adcme_layers.jl", "adcme_io.jl", "adcme_compat.jl", "adcme_rbf.jl", "adcme_flow.jl",
        "adcme_ode.jl", "adcme_extra.jl", "adcme_kit.jl", "adcme_pcl.jl", "adcme_sqlite_ot.jl",
    ),
}  # fmt: skip


def runtests_files() -> list[str]:
    """runtests.jl's TEST_FILES, in order."""
    text = (TEST_DIR / "runtests.jl").read_text(encoding="utf-8")
    listed = re.search(r"^const TEST_FILES = \[\n(.*?)^\]", text, re.M | re.S)
    assert listed, "runtests.jl has no `const TEST_FILES = [` list"
    return re.findall(r'"([^"]+)"', listed.group(1))


def test_the_suite_groups_hold_every_julia_test_file_once() -> None:
    files = runtests_files()
    grouped = [f for group in SUITE_GROUPS.values() for f in group]
    on_disk = sorted(p.name for p in TEST_DIR.glob("*.jl") if p.name != "runtests.jl")
    assert sorted(files) == on_disk, "runtests.jl's TEST_FILES must list every test/*.jl"
    assert sorted(grouped) == sorted(files), "SUITE_GROUPS must hold each of TEST_FILES once"
    for group in SUITE_GROUPS.values():  # each group keeps the whole run's order
        assert list(group) == sorted(group, key=files.index)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("group", SUITE_GROUPS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_devplace_jl_suite(tmp_path: Path, transport: str, group: str) -> None:
    files = SUITE_GROUPS[group]
    done = run_julia(
        [str(TEST_DIR / "runtests.jl"), *files], cwd=tmp_path, timeout=800, transport=transport
    )
    output = done.stdout + done.stderr
    marks = [i for i in (output.find("Test Failed"), output.find("Error During Test")) if i >= 0]
    where = min(marks) if marks else max(len(output) - 6000, 0)
    assert done.returncode == 0, output[where : where + 6000]  # the first failure, in full
    assert "DevPlace.jl" in done.stdout and "Fail" not in done.stdout.split("Test Summary:")[-1]
    # none fell back to another transport, and every file of the group ran to its end
    assert f"DevPlace.jl suite, transport: {transport}, files: {' '.join(files)}" in done.stdout
    assert all(f"\n{file}: " in done.stdout for file in files), done.stdout[-3000:]


def _run(t: object) -> object:
    with dp.tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("dims", [(3, 4), (12,), (2, 6), (2, 3, 2), (None, 3)])
def test_reshape_is_column_major_like_julia(dims: tuple[int | None, ...]) -> None:
    a = np.arange(12.0).reshape(4, 3)
    want = a.reshape([-1 if d is None else d for d in dims], order="F")
    assert np.array_equal(_run(js.reshape(dp.constant(a), list(dims))), want)


def test_broadcast_lines_up_leading_dimensions() -> None:
    a = np.arange(6.0).reshape(2, 3)
    column = np.array([10.0, 20.0])
    assert np.array_equal(_run(js.broadcast("+", dp.constant(a), column)), a + column[:, None])
    assert np.array_equal(_run(js.broadcast("-", column, dp.constant(a))), column[:, None] - a)


def test_julia_numbers_take_the_tensors_dtype() -> None:
    x = dp.constant(np.float32(1.5))
    for other in (2.0, np.float64(2.0), 2, True, np.array([1.0, 2.0])):
        assert js.broadcast("max", other, x).dtype == dp.tf.float32
        assert js.mul(x, other).dtype == dp.tf.float32


def test_fetched_scalars_keep_their_dtype() -> None:
    f32, i32 = dp.constant(np.float32(1.1)), dp.constant(np.int32(3))
    with dp.Session() as sess:
        values = js.run(sess, [f32, (i32, f32)])
    assert type(values[0]) is np.float32 and values[0] == np.float32(1.1)
    assert type(values[1][0]) is np.int32 and type(values[1][1]) is np.float32


@pytest.mark.parametrize(
    ("returned", "words"),
    [
        ("cpu", ['returned "cpu"', "cannot read the part"]),
        ("/gpu:x", ['returned "/gpu:x"', "index"]),
        (None, ["returned nothing", 'or "" for no device']),
        (5, ["returned 5 (a Python int)", "not a device string"]),
    ],
)
def test_device_function_results_are_checked(returned: object, words: list[str]) -> None:
    def pick(op: object) -> object:
        return returned

    with pytest.raises(dp.DeviceSpecError) as info:
        with js.device(pick):
            dp.constant(1.0, name="x")
    for word in [*words, "device function pick", "op 'x'"]:
        assert word in str(info.value)
