"""Every result devplace returns prints one line as `repr` and a bounded table as `str`,
however big the graph (and Julia shows the same text)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import devplace as dp
from devplace.bridge.julia_semantics import display, summary
from devplace.facts.comparison import compare
from devplace.facts.traced import TracedRun

tf = dp.tf
#: Ops of the graph: far more than any table shows.
CHAIN = 1500
MAX_LINES = 200
MAX_CHARS = 20_000


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One of each public result type, made on a graph of thousands of ops on two devices."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [8], name="x")
        y = x
        for i in range(CHAIN):
            with dp.cpu(i % 2):
                y = tf.add(y, float(i), name=f"step{i}")
        sess = dp.Session(cpus=2, optimize=False)
        feed = {x: np.ones(8, np.float32)}
        profile = dp.run_profile(sess, y, feed_dict=feed)
        path = tmp_path_factory.mktemp("printed") / "run.json"
        dp.save_profile(path)
        trace = dp.read_trace(path)
        found = {
            "Profile": profile,
            "TracedRun": TracedRun.of(sess, y, feed),
            "Trace": trace,
            "PlacementReport": dp.placement(sess, y, feed_dict=feed),
            "Comparison": compare(trace, path),
            "AutoPlacement": dp.autoplace(
                y, devices=["/cpu:0", "/cpu:1"], strategy="round_robin", feed_dict=feed
            ),
            "TensorBoardLog": dp.tensorboard(
                sess, y, tmp_path_factory.mktemp("tb"), feed_dict=feed
            ),
            "Session": sess,
            "LocalCluster": dp.LocalCluster(ps=1, workers=1),
        }
    return found


@pytest.mark.parametrize(
    "name",
    [
        "Profile",
        "TracedRun",
        "Trace",
        "PlacementReport",
        "Comparison",
        "AutoPlacement",
        "TensorBoardLog",
        "Session",
        "LocalCluster",
    ],
)
def test_repr_is_one_line_and_str_a_bounded_table(results: dict[str, object], name: str) -> None:
    obj = results[name]
    line, text = repr(obj), str(obj)
    assert "\n" not in line and len(line) < 300, line[:500]
    assert name in line.split("(")[0], line
    assert len(text.splitlines()) <= MAX_LINES and len(text) <= MAX_CHARS, text[:500]
    assert "_arg_" not in line + text  # fed tensors by the user's names
    # Julia's show is the one line, its REPL display the line then Python's print
    assert summary(obj) == line
    if text != line:
        assert display(obj) == f"{line}\n{text}"


def test_the_tables_say_how_many_more_and_where_every_one_is(
    results: dict[str, object],
) -> None:
    report = results["PlacementReport"]
    assert isinstance(report, dp.PlacementReport)
    text = str(report)
    assert f"... and {len(report.ops) - 50} more ops (to_csv() has every one)" in text
    assert len(report.ops) > CHAIN
    assert "(to_json() lists every one)" in text
    assert len(report.table(limit=None).splitlines()) > CHAIN  # all rows when asked
    for name in ("Profile", "TracedRun", "Trace"):
        more = re.search(r"\.\.\. and (\d+) more ops \(\S+ has every one\)", str(results[name]))
        assert more and int(more[1]) > CHAIN - 50, name
    profile = results["Profile"]
    assert str(profile).startswith("run_profile: median of 1 traced run, step ")
    assert "slowest ops" in str(profile)


def test_ipython_shows_the_table(results: dict[str, object]) -> None:
    report = results["PlacementReport"]
    shown: list[str] = []

    class Printer:
        def text(self, text: str) -> None:
            shown.append(text)

    report._repr_pretty_(Printer(), False)  # type: ignore[attr-defined]
    assert shown == [str(report)]
