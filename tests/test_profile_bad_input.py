"""Bad traces, bad picture paths and refused writes, through the Python API and the command line.

Every case must end in a devplace error (API) or exit status 1 with one line on stderr (CLI)
that names the input and the place inside it, never a traceback, and must write nothing.
The whole table runs through the API and `devplace.cli.main`; the cases a real process can
only show (endless input, deep nesting, the picture format) also run as `devplace` processes.
A property test mangles the H100 trace's events at random: read or refused, nothing else.
"""

import copy
import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_builders import flow, hand_trace, process

import devplace as dp
import devplace.facts.trace as trace_module
from devplace.cli import main
from devplace.core.atomic import FileWriteError
from devplace.core.errors import Error
from devplace.facts.trace import TraceError, read_trace
from devplace.views.plot import PictureError, plot_profile

DEVPLACE = os.path.join(os.path.dirname(sys.executable), "devplace")


def with_op(**fields):
    """A one-op trace whose op event (traceEvents[1]) has `fields` replaced."""
    event = {"ph": "X", "pid": 1, "tid": 0, "ts": 10, "dur": 5, "args": {"name": "a", "op": "Sin"}}
    return json.dumps({"traceEvents": [process(1, "/device:CPU:0 Compute"), {**event, **fields}]})


def flow_with(**fields):
    """A flow start and end (traceEvents[1] and [2]) with `fields` replaced in the start."""
    start, end = flow(7, "a", 1, 10, 1, 20)
    return [{**start, **fields}, end]


# (name, file content, text the error must hold)
BAD_TRACES = [
    ("args-number", with_op(args=5), "traceEvents[1].args is 5, expected an object"),
    ("args-name-list", with_op(args={"name": ["a"]}), "traceEvents[1].args.name is ['a']"),
    ("pid-list", with_op(pid=[1]), "traceEvents[1].pid is [1], expected an integer or a string"),
    ("pid-float", with_op(pid=1.5), "traceEvents[1].pid is 1.5"),
    ("dur-infinity", with_op(dur="INF").replace('"INF"', "Infinity"), "traceEvents[1].dur is inf"),
    ("dur-nan", with_op(dur="NAN").replace('"NAN"', "NaN"), "traceEvents[1].dur is nan"),
    ("dur-negative", with_op(dur=-3), "traceEvents[1].dur is -3, expected a number of µs from 0"),
    ("dur-huge", with_op(dur=1e300), "traceEvents[1].dur is 1e+300"),
    ("ts-nan", with_op(ts="NAN").replace('"NAN"', "NaN"), "traceEvents[1].ts is nan"),
    ("ts-string", with_op(ts="soon"), "traceEvents[1].ts is 'soon', expected a number of µs"),
    (
        "input-number",
        with_op(args={"name": "a", "op": "Sin", "input0": 5}),
        "traceEvents[1].args.input0 is 5, expected a string",
    ),
    (
        "flow-cat-list",
        json.dumps({"traceEvents": [process(1, "/device:CPU:0 Compute"), *flow_with(cat=["x"])]}),
        "traceEvents[1].cat is ['x'], expected an integer or a string",
    ),
    ("deep", "[" * 100_000 + "]" * 100_000, "nested deeper than the JSON reader allows"),
    ("binary", b"\x00\x00\x00\x00", "is not JSON: it starts with b'\\x00"),
    ("latin-1", b'{"traceEvents": ["\xff"]}', "is not UTF-8 text"),
    ("not-json", "{not json", "is not JSON: Expecting property name"),
]
CLI_CASES = {"pid-list", "dur-infinity", "deep"}


def write(folder, name, content):
    path = folder / f"{name}.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("name, content, problem", BAD_TRACES, ids=[c[0] for c in BAD_TRACES])
def test_bad_traces_are_refused_naming_the_file_and_the_place(
    tmp_path, capsys, name, content, problem
):
    path = write(tmp_path, name, content)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    message = str(info.value)
    assert isinstance(info.value, Error) and isinstance(info.value, ValueError)
    assert f"profile trace '{path}'" in message and problem in message
    assert "save_profile" in message  # the hint
    out = tmp_path / "out.png"
    assert main(["profile", "show", str(path), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and problem in err and str(path) in err
    assert not out.exists()


def run_cli(*argv, timeout=120, stdin=None):
    return subprocess.run(
        [DEVPLACE, *argv], capture_output=True, text=True, timeout=timeout, stdin=stdin
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, content, problem",
    [c for c in BAD_TRACES if c[0] in CLI_CASES],
    ids=[c[0] for c in BAD_TRACES if c[0] in CLI_CASES],  # the contents make ids too long for exec
)
def test_the_command_refuses_bad_traces_in_one_line(tmp_path, name, content, problem):
    path = write(tmp_path, name, content)
    done = run_cli("profile", "compare", str(path), str(path), "-o", str(tmp_path / "x.png"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("devplace profile"))
    assert str(path) in line and problem in line
    assert not (tmp_path / "x.png").exists()


@pytest.mark.slow
def test_endless_input_is_refused_after_the_size_limit():
    done = run_cli("profile", "show", "/dev/zero", "-o", "/tmp/never.png", timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "'/dev/zero': is not JSON: it starts with b'\\x00" in done.stderr


def test_an_endless_stream_stops_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_module, "MAX_TRACE_BYTES", 3 * 2**20)
    fifo = tmp_path / "endless.json"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed():
        try:  # the reader stops early on purpose: closing the pipe then breaks it too
            with open(fifo, "wb") as pipe:
                pipe.write(b"[")
                while not stop.is_set():
                    pipe.write(b" " * 65536)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with pytest.raises(TraceError, match=r"endless\.json': goes on past the limit of 3 MiB"):
        read_trace(fifo)
    stop.set()
    writer.join(timeout=10)
    assert not writer.is_alive()


def test_a_file_over_the_limit_is_refused_unread(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(trace_module.MAX_TRACE_BYTES + 1)  # sparse: nothing to read, by design
    with pytest.raises(TraceError, match=r"big\.json': is 256 MiB, above the limit of 256 MiB"):
        read_trace(big)


def readonly_folder(tmp_path):
    """A folder this process cannot write into (root writes anywhere but sysfs)."""
    if os.geteuid() == 0:
        return "/sys"
    folder = tmp_path / "readonly"
    folder.mkdir(mode=0o555)
    return str(folder)


BAD_OUTPUTS = [
    ("x.xyz", ".xyz is not a picture format; use one of .png, .svg, .pdf"),
    ("x.json", ".json is not a picture format; use one of .png, .svg, .pdf"),
    ("missing/x.png", "does not exist"),
    ("READONLY/x.png", "x.png'"),
]


@pytest.mark.parametrize("out, problem", BAD_OUTPUTS, ids=[o for o, _ in BAD_OUTPUTS])
def test_unusable_picture_paths_get_one_line_naming_them(tmp_path, capsys, out, problem):
    trace = tmp_path / "good.json"
    trace.write_text(json.dumps(hand_trace()))
    target = str(tmp_path / out).replace(str(tmp_path / "READONLY"), readonly_folder(tmp_path))
    with pytest.raises((PictureError, OSError)) as info:
        plot_profile(trace, target)
    assert target in str(info.value) and problem in str(info.value)
    for argv in (
        ["profile", "show", str(trace), "-o", target],
        ["profile", "compare", str(trace), str(trace), "-o", target],
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and target in err and problem in err
    assert not os.path.exists(target)


@pytest.mark.slow
def test_the_command_names_an_unsupported_format(tmp_path):
    trace = tmp_path / "good.json"
    trace.write_text(json.dumps(hand_trace()))
    done = run_cli("profile", "show", str(trace), "-o", str(tmp_path / "x.xyz"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "x.xyz': .xyz is not a picture format; use one of .png, .svg, .pdf" in done.stderr


REFUSED_WRITES = [
    ("READONLY/t.json", "Permission denied", "is not writable for this user"),
    ("folder", "Is a directory", "it is a folder: give a file name"),
]


@pytest.mark.parametrize("out, reason, fix", REFUSED_WRITES, ids=["permission denied", "a folder"])
def test_writes_the_os_refuses_name_the_path_the_reason_and_a_fix(tmp_path, out, reason, fix):
    (tmp_path / "folder").mkdir()
    target = str(tmp_path / out).replace(str(tmp_path / "READONLY"), readonly_folder(tmp_path))
    with dp.cpu(0):
        fetch = dp.constant(1.0) + 1
    sess = dp.Session()
    profile = dp.run_profile(sess, fetch)
    report = dp.placement(sess, fetch)
    for write in (profile.save, dp.save_profile, report.to_json, report.to_csv):
        with pytest.raises(FileWriteError) as info:
            write(target)
        assert isinstance(info.value, Error) and isinstance(info.value, OSError)
        message = str(info.value)
        assert f"cannot write {target!r}: {reason}. Hint: " in message and fix in message
    assert not os.path.isfile(target)


FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "seed-colocate-true.json").read_text())
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities included
    st.text(max_size=30),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["name", "op"]), st.integers() | st.text(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(FIXTURE["traceEvents"]) - 1),
            st.sampled_from(["ph", "pid", "tid", "ts", "dur", "args", "name", "id", "cat"]),
            ODD,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_mangled_event_is_read_or_refused_with_a_trace_error(edits):
    data = copy.deepcopy(FIXTURE)
    for index, key, value in edits:
        data["traceEvents"][index][key] = value
    try:
        trace = read_trace(data)
    except TraceError:
        return
    numbers = [trace.makespan_us, *trace.busy_us().values(), *trace.busy_us("kernel").values()]
    assert all(math.isfinite(n) and n >= 0 for n in numbers)
