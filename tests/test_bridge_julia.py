"""DevPlace.jl's own test suite (julia/DevPlace/test/runtests.jl), as part of `make test`, and
Julia's rules as the host applies them (devplace.bridge.julia_semantics), checked against numpy
so that they hold on machines without Julia too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from julia_runner import PROJECT, TRANSPORTS, run_julia

import devplace as dp
from devplace.bridge import julia_semantics as js


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_devplace_jl_suite(tmp_path: Path, transport: str) -> None:
    done = run_julia(
        [str(PROJECT / "test" / "runtests.jl")], cwd=tmp_path, timeout=1100, transport=transport
    )
    output = done.stdout + done.stderr
    marks = [i for i in (output.find("Test Failed"), output.find("Error During Test")) if i >= 0]
    where = min(marks) if marks else max(len(output) - 6000, 0)
    assert done.returncode == 0, output[where : where + 6000]  # the first failure, in full
    assert "DevPlace.jl" in done.stdout and "Fail" not in done.stdout.split("Test Summary:")[-1]
    assert f"DevPlace.jl suite, transport: {transport}" in done.stdout  # none fell back


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
