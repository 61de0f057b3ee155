"""The `devplace` command line: help everywhere, pictures and tables, clear file errors."""

import json
import os
import subprocess
import sys

import matplotlib.image
import pytest
from conftest import GPUS, HAS_GPU, requires_gpu, requires_no_gpu
from test_demo import TRANSFERS

import devplace as dp
from devplace.cli import main
from devplace.cli.devices import tensorflow_gpu_messages, why_no_gpu
from devplace.core.formatting import format_bytes
from devplace.facts.trace import read_trace

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
        count = sum(op.device == device for op in trace.graph_ops)
        assert f"{device}: {count} op" in text
    assert {op.name: op.device for op in trace.ops}["y"] == "/device:CPU:1"
    assert "cross-device transfers: 1 (1.6 KiB)" in text
    assert "fetched to the client: 1 tensor, 4 bytes, from /device:CPU:0" in text


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
    assert [r["name"] for r in rows] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2", *GPUS]
    assert [r["type"] for r in rows] == ["CPU"] * 3 + ["GPU"] * len(GPUS)
    assert all(r["memory_bytes"] > 0 for r in rows)
    assert main(["devices", "--cpus", "2"]) == 0
    text = capsys.readouterr().out
    assert "/device:CPU:1  CPU" in text and "MiB" in text
    memory = format_bytes(rows[1]["memory_bytes"])  # as every view writes bytes
    assert f"/device:CPU:1  CPU   {memory}\n" in text
    assert ("no GPU:" in text) is not HAS_GPU
    with pytest.raises(SystemExit):
        main(["devices", "--cpus", "two"])
    assert "expected a whole number >= 0, got 'two'" in capsys.readouterr().err


def test_devices_with_too_many_cpus_is_one_line_naming_the_option(capsys):
    assert main(["devices", "--cpus", "99999999999"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("devplace devices: error: cannot make a session:")
    assert "cpus must be an integer" in line and "99999999999" in line


@requires_no_gpu
def test_devices_says_why_there_is_no_gpu_in_tensorflows_words(capsys):
    assert main(["devices"]) == 0
    text = capsys.readouterr().out
    if not dp.tf.test.is_built_with_cuda():
        assert "CPU-only build" in text and "devplace[gpu]" in text
    elif not os.path.exists("/proc/driver/nvidia/version"):
        assert "no NVIDIA driver" in text
        assert "TensorFlow: Could not find cuda drivers on your machine" in text
    assert "dp.Session(soft=True)" in text


@requires_gpu
def test_devices_lists_gpus_with_memory(capsys):
    assert main(["devices", "--json"]) == 0
    gpus = [r for r in json.loads(capsys.readouterr().out) if r["type"] == "GPU"]
    assert [r["name"] for r in gpus] == GPUS
    assert all(r["memory_bytes"] > 2**28 for r in gpus)
    assert main(["devices", "--gpus", "0"]) == 0
    assert "no GPU: --gpus 0 asked for none" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(
    not dp.tf.test.is_built_with_cuda() or os.path.exists("/proc/driver/nvidia/version"),
    reason="needs TensorFlow's CUDA build on a machine without an NVIDIA driver",
)
def test_full_verbosity_child_reports_the_missing_driver():
    messages = tensorflow_gpu_messages()
    assert "Could not find cuda drivers on your machine, GPU will not be used." in messages


@pytest.mark.parametrize(
    "case, expected",
    [
        (dict(built_with_cuda=False), "CPU-only build"),
        (dict(visible=""), "CUDA_VISIBLE_DEVICES='' hides every GPU"),
        (dict(driver=False), "no NVIDIA driver"),
        (
            dict(messages=["Could not load dynamic library 'libcudnn.so.9'; dlerror: not found"]),
            "CUDA libraries failed to load; pip install 'devplace[gpu]'",
        ),
        (dict(), "found no usable GPU"),
        (dict(gpus=0), "--gpus 0 asked for none"),
    ],
)
def test_no_gpu_reasons(case, expected):
    facts = dict(gpus=None, built_with_cuda=True, driver=True, visible=None, messages=[])
    facts.update(case)
    text = why_no_gpu(**facts)
    assert text.startswith("no GPU: ") and expected in text
    for message in facts["messages"]:
        assert f"TensorFlow: {message}" in text


@pytest.mark.slow
def test_help_never_loads_tensorflow():
    code = (
        "import contextlib, io, sys\n"
        "from devplace.cli import SUBCOMMANDS, build_parser\n"
        "parser = build_parser()\n"
        "for argv in [[], *([name] for name in SUBCOMMANDS)]:\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        parser.parse_args([*argv, '--help'])\n"
        "print(sorted(m for m in ('tensorflow', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_demo_writes_into_the_out_folder(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--repeat", "1"]) == 0
    assert sorted(os.listdir(out)) == ["colocate.png", "false.json", "true.json"]
    text = capsys.readouterr().out
    colocated, default = TRANSFERS[True], TRANSFERS[False]
    assert "{} cross-device transfers, {} bytes".format(*colocated) in text
    assert "{} cross-device transfers, {} bytes".format(*default) in text
    with pytest.raises(SystemExit):
        main(["demo", "--repeat", "0"])
    assert "expected a positive whole number, got '0'" in capsys.readouterr().err


def test_demo_into_a_file_fails_with_a_message(tmp_path, capsys):
    taken = tmp_path / "file"
    taken.write_text("")
    assert main(["demo", "--out", str(taken)]) == 1
    assert "is not a folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, names",
    [
        (["demo", "--output", "d2"], ("devplace demo: error", "--output: did you mean --out?")),
        (["profile", "show", "t.json", "-o", "t.png", "--tittle", "x"], ("did you mean --title?",)),
        (["demo", "extra"], ("devplace demo: error: unrecognized arguments: extra",)),
    ],
)
def test_an_unknown_option_is_refused_by_its_command_naming_the_closest(
    argv, names, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert all(name in err for name in names), err
    assert not list(tmp_path.iterdir())  # nothing run, nothing written


@pytest.mark.slow
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
