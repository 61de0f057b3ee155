"""The colocate demo: files written and readable, and colocation really moving gradient ops
(read from RunMetadata), with different transfer counts.

Expectations follow the machine: with a GPU the seeds' GPU:0 is that GPU and unpinned ops go
there (measured on an H100: 6 transfers / 20 bytes colocated, 4 / 16 not, because `add` runs on
the GPU and its result crosses back); without one GPU:0 is the logical CPU:1 and unpinned ops
stay on CPU:0 (5 / 16 and 2 / 8).
"""

import json
import re

import matplotlib.image
import pytest
from conftest import DEFAULT_DEVICE, GPUS, HAS_GPU

from devplace.demo import device_mapping, gradient_ops, gradient_pairs, run_demo
from devplace.facts.comparison import LOGICAL_CPU_CAVEAT
from devplace.facts.trace import read_trace

SEED_GPU = GPUS[0] if HAS_GPU else "/device:CPU:1"
#: (count, bytes) of cross-device transfers, colocated and not.
# With a GPU, `add` runs there too, and its result crosses back to the CPU for the next op
# (a fetch to the client is no transfer: 6 and 4 on an H100 before that rule, 5 on an H200 after).
TRANSFERS = {True: (5, 16), False: (3, 12)} if HAS_GPU else {True: (5, 16), False: (2, 8)}


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
        assert read_trace(out / name).devices == sorted(["/device:CPU:0", SEED_GPU])
    image = matplotlib.image.imread(out / "colocate.png")
    assert image.ndim == 3 and image.shape[1] > 1000
    assert result.picture == str(out / "colocate.png")


def test_colocated_gradients_run_on_their_forward_ops_devices(demo):
    _, result, _ = demo
    colocated, default = result.runs[True].report, result.runs[False].report
    # The seeds' GPU:0 (the logical CPU:1 without a GPU); sin runs there in both runs.
    assert colocated.actual("Sin") == default.actual("Sin") == SEED_GPU
    assert colocated.actual("Cos") == default.actual("Cos") == "/device:CPU:0"
    assert colocated.actual("Variable") == "/device:CPU:0"
    pairs = gradient_pairs(colocated)
    assert {f for _, f in pairs} == {"Sin", "Cos"}
    assert all(colocated.actual(g) == colocated.actual(f) for g, f in pairs)
    assert colocated.actual("gradients/Sin_grad/Cos") == SEED_GPU
    # Not colocated: every gradient op goes to the default device.
    assert {default.actual(g) for g, _ in gradient_pairs(default)} == {DEFAULT_DEVICE}
    assert result.runs[True].colocated_gradients == len(pairs)
    assert result.runs[False].colocated_gradients < len(gradient_pairs(default))


def test_transfer_counts_differ_and_the_traces_carry_them(demo):
    _, result, _ = demo
    colocated, default = result.runs[True].report, result.runs[False].report
    assert (colocated.transfer_count, colocated.transfer_bytes) == TRANSFERS[True]
    assert (default.transfer_count, default.transfer_bytes) == TRANSFERS[False]
    summaries = result.comparison.a, result.comparison.b
    assert [(s.transfer_count, s.transfer_bytes) for s in summaries] == [
        TRANSFERS[True],
        TRANSFERS[False],
    ]
    assert all(s.devices == tuple(sorted(["/device:CPU:0", SEED_GPU])) for s in summaries)
    # both runs compute the same numbers: g + c = -sin(sin 1) cos 1 + cos(sin 1)
    assert result.runs[True].profile.values == pytest.approx(result.runs[False].profile.values)
    assert result.runs[True].profile.values == pytest.approx(0.2635043561, rel=1e-6)


def test_output_says_what_was_mapped_and_prints_both_placements(demo):
    _, result, text = demo
    (count_t, bytes_t), (count_f, bytes_f) = TRANSFERS[True], TRANSFERS[False]
    assert "== colocate=true" in text and "== colocate=false" in text
    assert f"{count_t} cross-device transfers, {bytes_t} bytes" in text
    assert f"{count_f} cross-device transfers, {bytes_f} bytes" in text
    assert f"cross-device transfers: {count_t} ({bytes_t} bytes, 1 of them control edges)" in text
    assert f"cross-device transfers: {count_f} ({bytes_f} bytes); trace:" in text
    assert result.mapping == {"/device:GPU:0": SEED_GPU, "/device:CPU:0": "/device:CPU:0"}
    if HAS_GPU:
        assert "the seeds' /device:GPU:0 is this machine's GPU" in text
        assert LOGICAL_CPU_CAVEAT not in text
    else:
        assert "the seeds' /device:GPU:0 is mapped onto logical /device:CPU:1" in text
        assert " ".join(LOGICAL_CPU_CAVEAT.split()[:6]) in text


def test_each_count_is_one_count_in_the_text_the_table_and_the_picture(demo):
    out, result, text = demo
    traced = read_trace(out / "true.json")
    # the devices line names the devices of the sessions the runs used (those the traces show)
    assert f"devices the demo's sessions see: {', '.join(result.session_devices)}" in text
    assert set(traced.devices) <= set(result.session_devices)
    if not HAS_GPU:  # the second logical CPU device is the sessions' own
        assert result.session_devices == ["/device:CPU:0", "/device:CPU:1"]
    for colocate, name in ((True, "true.json"), (False, "false.json")):
        report, trace = result.runs[colocate].report, read_trace(out / name)
        summary = result.comparison.a if colocate else result.comparison.b
        # "ops" in the comparison and the picture count the table's rows (the graph's ops)
        assert summary.op_count == len(report.ops) == len(trace.graph_ops)
        assert sum(summary.op_counts.values()) == len(report.ops)
        # gradient ops: the picture hatches every op under gradients/, the text counts the same
        drawn = sum(op.name.startswith("gradients/") for op in trace.graph_ops)
        pairs = gradient_pairs(report)
        assert drawn == len(gradient_ops(report)) > len(pairs) == 5
        colocated = result.runs[colocate].colocated_gradients
        assert (
            f"gradient ops: {drawn}, of which 5 differentiate a forward op and {colocated}/5 "
            "ran on its device" in text
        )
        assert not report.optimized_away  # nothing fed, nothing folded (optimize=False)
    counts = [len(result.runs[c].report.ops) for c in (True, False)]
    assert re.search(rf"^ops +{counts[0]} +{counts[1]}$", text, re.MULTILINE)


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
