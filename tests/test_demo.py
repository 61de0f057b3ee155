"""The colocate demo: files written and readable, and colocation really moving gradient ops
(read from RunMetadata), with different transfer counts."""

import json

import matplotlib.image
import pytest

from devplace.demo import device_mapping, gradient_pairs, run_demo
from devplace.trace import read_trace


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    lines = []
    out = tmp_path_factory.mktemp("demo") / "nested" / "out"
    result = run_demo(out, repeat=2, echo=lines.append)
    return out, result, "\n".join(lines)


def test_writes_both_traces_and_one_picture(demo):
    out, result, _ = demo
    assert sorted(p.name for p in out.iterdir()) == ["colocate.png", "false.json", "true.json"]
    for name in ("true.json", "false.json"):
        data = json.loads((out / name).read_text())
        assert data["traceEvents"] and "transfers" in data["devplace"]
        assert read_trace(out / name).devices == ["/device:CPU:0", "/device:CPU:1"]
    image = matplotlib.image.imread(out / "colocate.png")
    assert image.ndim == 3 and image.shape[1] > 1000
    assert result.picture == str(out / "colocate.png")


def test_colocated_gradients_run_on_their_forward_ops_devices(demo):
    _, result, _ = demo
    colocated, default = result.runs[True].report, result.runs[False].report
    # The seeds' GPU:0 is the logical CPU:1 here; sin runs there in both runs.
    assert colocated.actual("Sin") == default.actual("Sin") == "/device:CPU:1"
    assert colocated.actual("Cos") == default.actual("Cos") == "/device:CPU:0"
    assert colocated.actual("Variable") == "/device:CPU:0"
    pairs = gradient_pairs(colocated)
    assert {f for _, f in pairs} == {"Sin", "Cos"}
    assert all(colocated.actual(g) == colocated.actual(f) for g, f in pairs)
    assert colocated.actual("gradients/Sin_grad/Cos") == "/device:CPU:1"
    # Not colocated: every gradient op goes to the default device, away from sin.
    assert {default.actual(g) for g, _ in gradient_pairs(default)} == {"/device:CPU:0"}
    assert result.runs[True].colocated_gradients == len(pairs)
    assert result.runs[False].colocated_gradients < len(gradient_pairs(default))


def test_transfer_counts_differ_and_the_traces_carry_them(demo):
    _, result, _ = demo
    colocated, default = result.runs[True].report, result.runs[False].report
    assert (colocated.transfer_count, colocated.transfer_bytes) == (5, 16)
    assert (default.transfer_count, default.transfer_bytes) == (2, 8)
    assert result.comparison.a.transfer_count == 5
    assert result.comparison.b.transfer_count == 2
    assert (result.comparison.a.transfer_bytes, result.comparison.b.transfer_bytes) == (16, 8)
    # both runs compute the same numbers: g + c = -sin(sin 1) cos 1 + cos(sin 1)
    assert result.runs[True].profile.values == pytest.approx(result.runs[False].profile.values)
    assert result.runs[True].profile.values == pytest.approx(0.2635043561, rel=1e-6)


def test_output_says_what_was_mapped_and_prints_both_placements(demo):
    _, result, text = demo
    assert "the seeds' /device:GPU:0 is mapped onto logical /device:CPU:1" in text
    assert "do not rank the two placements" in text
    assert "== colocate=true" in text and "== colocate=false" in text
    assert "5 cross-device transfers, 16 bytes" in text
    assert "2 cross-device transfers, 8 bytes" in text
    assert "cross-device transfers: 5 (16 bytes, 1 of them control edges)" in text
    assert "cross-device transfers: 2 (8 bytes); trace:" in text
    assert result.mapping == {"/device:GPU:0": "/device:CPU:1", "/device:CPU:0": "/device:CPU:0"}


def test_real_gpus_are_used_as_they_are():
    assert device_mapping(["/device:CPU:0", "/device:GPU:0"]) == {
        "/device:GPU:0": "/device:GPU:0",
        "/device:CPU:0": "/device:CPU:0",
    }


def test_an_output_path_that_is_a_file_is_refused(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("")
    with pytest.raises(NotADirectoryError, match="taken.* is not a folder"):
        run_demo(taken)
