"""The `devplace` command line: help everywhere, pictures and tables, clear file errors."""

import json
import os
import subprocess
import sys

import matplotlib.image
import pytest

import devplace as dp
from devplace.cli import main
from devplace.trace import read_trace

DEVPLACE = os.path.join(os.path.dirname(sys.executable), "devplace")


def saved_profile(path, cpus):
    graph = dp.tf.Graph()
    with graph.as_default():
        with dp.cpu(cpus - 1):
            y = dp.sin(dp.tf.ones([20, 20]), name="y")
        with dp.cpu(0):
            z = dp.reduce_sum(y, name="z")
        sess = dp.Session(cpus=cpus, optimize=False, graph=graph)
        return dp.save_profile(path, dp.run_profile(sess, z))


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    return saved_profile(folder / "two.json", 2), saved_profile(folder / "three.json", 3)


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], "demo"),
        (["demo"], "--out DIR"),
        (["profile"], "compare"),
        (["profile", "show"], "OUT.png"),
        (["profile", "compare"], "--labels"),
        (["devices"], "--cpus N"),
        (["cluster"], "up"),
        (["place"], "--strategy"),
    ],
)
def test_every_command_has_help(capsys, argv, expected):
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    assert expected in capsys.readouterr().out


def test_profile_without_a_subcommand_prints_usage(capsys):
    assert main(["profile"]) == 2
    assert "show" in capsys.readouterr().err


def test_show_draws_the_trace_and_prints_its_devices(traces, tmp_path, capsys):
    out = tmp_path / "two.png"
    assert main(["profile", "show", str(traces[0]), "-o", str(out)]) == 0
    assert matplotlib.image.imread(out).shape[1] > 1000
    text = capsys.readouterr().out
    trace = read_trace(traces[0])
    for device in ("/device:CPU:0", "/device:CPU:1"):
        count = sum(op.device == device for op in trace.ops)
        assert f"{device}: {count} ops" in text
    assert {op.name: op.device for op in trace.ops}["y"] == "/device:CPU:1"
    assert "cross-device transfers: 1 (1.6 KiB)" in text


def test_compare_prints_the_table_and_json(traces, tmp_path, capsys):
    out = tmp_path / "both.png"
    argv = ["profile", "compare", str(traces[0]), str(traces[1]), "-o", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["two.json", "three.json"]
    assert any(line.split()[:3] == ["busy", "/device:CPU:2", "-"] for line in lines)
    assert main([*argv, "--json", "--labels", "first", "second"]) == 0
    numbers = json.loads(capsys.readouterr().out)
    assert numbers["a"]["label"] == "first" and numbers["b"]["label"] == "second"
    assert numbers["a"]["transfer_bytes"] == numbers["b"]["transfer_bytes"] == 1600
    # a device that ran nothing has no process in the trace, hence no lane
    assert numbers["b"]["devices"] == ["/device:CPU:0", "/device:CPU:2"]
    assert matplotlib.image.imread(out).shape[1] > 1000


@pytest.mark.parametrize(
    "content, problem",
    [
        (None, "no such file"),
        ("{not json", "is not JSON"),
        ('{"traceEvents": []}', "has no '<device> Compute' processes"),
    ],
)
def test_bad_trace_files_are_named(traces, tmp_path, capsys, content, problem):
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    out = str(tmp_path / "x.png")
    assert main(["profile", "show", str(bad), "-o", out]) == 1
    err = capsys.readouterr().err
    assert f"devplace profile show: error: profile trace '{bad}': {problem}" in err
    assert main(["profile", "compare", str(traces[0]), str(bad), "-o", out]) == 1
    assert f"'{bad}': {problem}" in capsys.readouterr().err
    assert not os.path.exists(out)


def test_devices_lists_what_a_session_sees(capsys):
    assert main(["devices", "--cpus", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert all(r["type"] == "CPU" and r["memory_bytes"] > 0 for r in rows)
    assert main(["devices", "--cpus", "2"]) == 0
    text = capsys.readouterr().out
    assert "/device:CPU:1  CPU" in text and "MiB" in text
    with pytest.raises(SystemExit):
        main(["devices", "--cpus", "two"])
    assert "expected a whole number >= 0, got 'two'" in capsys.readouterr().err


def test_demo_writes_into_the_out_folder(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--repeat", "1"]) == 0
    assert sorted(os.listdir(out)) == ["colocate.png", "false.json", "true.json"]
    text = capsys.readouterr().out
    assert "5 cross-device transfers, 16 bytes" in text
    assert "2 cross-device transfers, 8 bytes" in text
    with pytest.raises(SystemExit):
        main(["demo", "--repeat", "0"])
    assert "expected a positive whole number, got '0'" in capsys.readouterr().err


def test_demo_into_a_file_fails_with_a_message(tmp_path, capsys):
    taken = tmp_path / "file"
    taken.write_text("")
    assert main(["demo", "--out", str(taken)]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_console_script_runs(traces, tmp_path):
    out = tmp_path / "script.png"
    done = subprocess.run(
        [DEVPLACE, "profile", "show", str(traces[0]), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "picture:" in done.stdout and out.exists()
    missing = subprocess.run(
        [DEVPLACE, "profile", "show", str(tmp_path / "none.json"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 1
    assert "none.json': no such file" in missing.stderr
