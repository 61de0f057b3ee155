"""Every file devplace writes for a user reports a failed write as a `devplace.Error` naming the
path: a full disk (`/dev/full` gives ENOSPC), a failure seen only at fsync, a folder that is a
file. Devices are written in place, never replaced."""

import errno
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest
from trace_builders import hand_trace

import devplace as dp
from devplace.bridge.adcme import io as adcme_io
from devplace.cli import main
from devplace.cluster import Checkpointer, write_spec
from devplace.core import atomic
from devplace.core.atomic import FileWriteError
from devplace.views.plot import compare_profiles, plot_profile
from devplace.views.tensorboard_log import tensorboard_from_profile

FULL = "/dev/full"


@pytest.fixture(scope="module")
def written():
    """A profile and a placement report of a one-op graph, with the writers of both."""
    with dp.tf.Graph().as_default():
        with dp.cpu(0):
            fetch = dp.constant(1.0) + 1
        sess = dp.Session()
        profile = dp.run_profile(sess, fetch)
        report = dp.placement(sess, fetch)
    return profile, report


def writers(profile, report, folder):
    """(name, write(path)) for each file devplace writes for a user, by extension."""
    return [
        ("Profile.save", ".json", profile.save),
        ("save_profile", ".json", lambda p: dp.save_profile(p, profile)),
        ("to_json", ".json", report.to_json),
        ("to_csv", ".csv", report.to_csv),
        ("plot_profile", ".png", lambda p: plot_profile(profile.trace, p)),
        ("compare_profiles", ".svg", lambda p: compare_profiles(profile.trace, profile.trace, p)),
        ("write_spec", ".json", lambda p: write_spec({"worker": ["localhost:2222"]}, p)),
        ("psave", ".pkl", lambda p: adcme_io.psave({"a": 1}, p)),
        ("matwrite", ".mat", lambda p: adcme_io.matwrite(p, {"a": np.ones(2)})),
    ]


def disk_full(fd):
    """`os.fsync` on a disk that filled up after the writes were buffered."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_is_an_error_naming_the_path(written, tmp_path):
    for name, ext, write in writers(*written, tmp_path):
        link = tmp_path / f"full-{name}{ext}"
        link.symlink_to(FULL)  # a link is written through, as open() would
        targets = [str(link)] + ([FULL] if ext in (".json", ".pkl") else [])
        for target in targets:
            with pytest.raises(FileWriteError) as caught:
                write(target)
            said = str(caught.value)
            assert isinstance(caught.value, dp.Error), name
            assert f"cannot write {FULL!r}: No space left on device" in said, (name, said)
            assert target == FULL or f"(written through {target!r})" in said, (name, said)
            assert "Hint: the disk holding '/dev' is full" in said, name
        assert link.is_symlink()
    assert stat.S_ISCHR(os.stat(FULL).st_mode)


def test_the_commands_report_a_full_disk_in_one_line(tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(hand_trace()))
    link = tmp_path / "full.png"
    link.symlink_to(FULL)
    for argv in (
        ["profile", "show", str(trace), "-o", str(link)],
        ["profile", "compare", str(trace), str(trace), "-o", str(link)],
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "No space left on device" in err and FULL in err


@pytest.mark.slow
def test_a_device_or_a_pipe_is_written_in_place(written, tmp_path):
    profile, _ = written
    assert dp.save_profile(os.devnull, profile) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from devplace.core import atomic; atomic.write_text('/dev/stdout', 'hi')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (0, "hi"), done.stderr
    assert not list(tmp_path.iterdir())  # no file named after the pipe


def test_a_failure_seen_only_at_fsync_names_the_path_and_keeps_the_old_file(
    written, tmp_path, monkeypatch
):
    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    for name, ext, write in writers(*written, tmp_path):
        target = tmp_path / f"old-{name}{ext}"
        target.write_bytes(b"old")
        with pytest.raises(FileWriteError, match="No space left on device") as caught:
            write(str(target))
        assert str(target) in str(caught.value), name
        assert target.read_bytes() == b"old", name
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_tensorboard_log_that_cannot_be_written_is_an_error_naming_it(
    written, tmp_path, monkeypatch
):
    profile, _ = written
    trace = tmp_path / "t.json"
    dp.save_profile(trace, profile)
    logdir = tmp_path / "logs"
    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(FileWriteError, match="No space left on device") as caught:
        tensorboard_from_profile(trace, logdir)
    assert str(logdir) in str(caught.value)
    assert [p.name for p in logdir.iterdir()] == []  # no half-written event file, no scratch


def test_a_checkpoint_that_cannot_be_written_is_an_error_naming_it(tmp_path):
    with dp.tf.Graph().as_default():
        v = dp.tf.Variable(1.0, name="v")
        checkpoints = Checkpointer(tmp_path / "ckpt", sharded=False)
        sess = dp.Session()
        sess.run(v.initializer)
        assert checkpoints.save(sess, 1).endswith("model.ckpt-1")
        (tmp_path / "ckpt" / "model.ckpt-2.index").mkdir()  # the file cannot be put there
        with pytest.raises(FileWriteError) as caught:
            checkpoints.save(sess, 2)
        (tmp_path / "ckpt").rename(tmp_path / "moved")
        (tmp_path / "ckpt").write_text("a file where the folder was")
        with pytest.raises(FileWriteError) as gone:
            checkpoints.save(sess, 3)
    for step, error in ((2, caught), (3, gone)):
        said = str(error.value)
        assert f"cannot write checkpoint '{tmp_path / 'ckpt' / f'model.ckpt-{step}'}'" in said
        assert f"Hint: make '{tmp_path / 'ckpt'}' a folder you can write to" in said
    assert "Is a directory. Hint" in str(caught.value)


def test_a_path_under_a_file_says_it_is_a_file(written, tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(hand_trace()))
    for out in (trace / "x.png", trace / "deeper" / "x.png"):
        for argv in (
            ["profile", "show", str(trace), "-o", str(out)],
            ["profile", "compare", str(trace), str(trace), "-o", str(out)],
        ):
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert f"{str(trace)!r} is a file, not a folder" in err, err
            assert "does not exist" not in err
        with pytest.raises(FileWriteError, match="is a file, not a folder"):
            dp.save_profile(out.with_suffix(".json"), written[0])
