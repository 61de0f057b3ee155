"""Large traces read and drawn by the fast paths give what the careful ones gave: the same text
for a generated trace as before the fast paths, the same `Trace` or the same error for any
mangled event, and a progress bar only where asked or on a terminal."""

import copy
import json
import math
from pathlib import Path

import pytest
from trace_builders import synthetic_trace

import devplace.facts.trace as trace_module
from devplace.cli import main
from devplace.facts.trace import TraceError, read_trace
from devplace.views.plot import plot_profile

CPUS = ["/device:CPU:0", "/device:CPU:1", "/device:GPU:0"]

# What `devplace profile show` and `compare` printed for synthetic_trace(3000, seed, 10) before
# the fast paths (per-event checks, the matplotlib patch per op).
SHOW = """\
{a}: 3000 ops on 3 devices, makespan 29.9 ms
  /device:CPU:0: 1016 ops, busy 18.3 ms
  /device:CPU:1: 995 ops, busy 17.7 ms
  /device:GPU:0: 989 ops, busy 18 ms
cross-device transfers: 300 (?)
"""
TABLE = """\
                        a.json         b.json
----------------------  -------------  -------------
makespan                29.9 ms        29.5 ms
cross-device transfers  300            300
transfer bytes          ?              ?
ops                     3000           3000
busy /device:CPU:0      18.3 ms (61%)  17.4 ms (59%)
busy /device:CPU:1      17.7 ms (59%)  17.6 ms (60%)
busy /device:GPU:0      18 ms (60%)    17.9 ms (61%)
"""
NUMBERS = {
    "a": ([18328.0, 17690.0, 18024.0], 29924.0, [1016, 995, 989]),
    "b": ([17385.0, 17616.0, 17913.0], 29541.0, [982, 1008, 1010]),
}


def test_a_generated_trace_prints_what_it_printed_before(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(synthetic_trace(3000, 1, 10)))
    b.write_text(json.dumps(synthetic_trace(3000, 2, 10)))
    assert main(["profile", "show", str(a), "-o", str(tmp_path / "x.png")]) == 0
    assert capsys.readouterr().out.startswith(SHOW.format(a=a))
    assert main(["profile", "compare", str(a), str(b), "-o", str(tmp_path / "y.png")]) == 0
    assert capsys.readouterr().out.startswith(TABLE)
    assert (
        main(["profile", "compare", str(a), str(b), "--json", "-o", str(tmp_path / "y.png")]) == 0
    )
    summary = json.loads(capsys.readouterr().out)
    for side, (busy, makespan, counts) in NUMBERS.items():
        assert summary[side]["busy_us"] == dict(zip(CPUS, busy, strict=True))
        assert summary[side]["makespan_us"] == makespan
        assert summary[side]["op_counts"] == dict(zip(CPUS, counts, strict=True))
        assert summary[side]["transfer_count"] == 300


FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "seed-colocate-true.json").read_text())
ODD = [None, True, False, 0, -1, 7, 1.5, 2**70, 1e18, -1e18, math.nan, math.inf, "", "x", [1], {}]
FIRST = {ph: next(i for i, e in enumerate(FIXTURE["traceEvents"]) if e["ph"] == ph) for ph in "Xs"}
EDITS = [
    *(
        (ph, key, value)
        for ph in "Xs"
        for key in ("ph", "pid", "tid", "ts", "dur", "args", "name", "id", "cat")
        for value in ODD
    ),
    *(("X", f"args.{key}", value) for key in ("name", "op", "bytes", "input0") for value in ODD),
]


def _read(data):
    try:
        return read_trace(data)
    except TraceError as err:
        return str(err)


@pytest.mark.parametrize("flows", [False, True], ids=["devplace section", "flow events"])
def test_the_quick_pass_reads_any_value_as_the_checked_one_does(flows):
    for ph, key, value in EDITS:
        data = copy.deepcopy(FIXTURE)
        if flows:  # transfers from the flow events, not devplace's section
            del data["devplace"]
        event = data["traceEvents"][FIRST[ph]]
        if key.startswith("args."):
            event["args"][key.removeprefix("args.")] = value
        else:
            event[key] = value
        quick = _read(data)
        originals = trace_module._quick_entry, trace_module._quick_flow
        trace_module._quick_entry = lambda event, lanes: None  # every event the checked way
        trace_module._quick_flow = lambda event: None
        try:
            checked = _read(data)
        finally:
            trace_module._quick_entry, trace_module._quick_flow = originals
        assert quick == checked, (ph, key, value)


def test_a_progress_bar_only_where_asked_or_on_a_terminal(tmp_path, capsys):
    trace = synthetic_trace(200, 1, 10)
    plot_profile(trace, tmp_path / "x.png", progress=True)
    assert "writing" in capsys.readouterr().err
    plot_profile(trace, tmp_path / "x.png")  # small, and no terminal here
    assert capsys.readouterr().err == ""
