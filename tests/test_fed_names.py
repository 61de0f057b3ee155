"""Fed tensors appear under the user's names (`x`, `x:0`) in every report, never under the
runtime's (`_arg_x_0_1:0`, whose suffix changes with the feeds)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import devplace as dp
from devplace.facts.trace import read_trace

tf = dp.tf


def _model() -> tuple[object, object, object]:
    with dp.cpu(0):
        x = tf.placeholder(tf.float32, [4, 4], name="x")
        labels = tf.placeholder(tf.float32, [4, 4], name="labels")
    with dp.cpu(1):
        y = tf.matmul(x, x, name="y") + labels
    return x, labels, y


def test_fed_placeholders_are_the_users_ops_and_transfers_their_tensors(tmp_path: Path) -> None:
    with tf.Graph().as_default():
        x, labels, y = _model()
        sess = dp.Session(cpus=2)
        feed = {x: np.ones((4, 4)), labels: np.ones((4, 4))}
        report = dp.placement(sess, y, feed_dict=feed)
        for name in ("x", "labels"):
            op = report[name]
            assert op.fed and op.op_type == "Placeholder" and op.actual == "/device:CPU:0"
            assert not op.moved
        assert {t.tensor for t in report.transfers} == {"x:0", "labels:0"}
        assert {t.tensor: t.consumers for t in report.transfers}["x:0"] == ("y",)
        text = str(report)
        assert "Placeholder (fed)" in text and "\nx:0 " in text
        dp.run_profile(sess, y, feed_dict=feed)
        path = dp.save_profile(tmp_path / "run.json")
        log = dp.tensorboard(sess, y, tmp_path / "tb", feed_dict=feed)
        views = [
            text,
            report.to_json(),
            report.to_csv(),
            str(dp.last_profile()),
            json.dumps(json.load(open(path))["devplace"]),
            repr(read_trace(path).transfers),
            str(log.placement),
        ]
        for view in views:
            assert "_arg_" not in view, view
        assert {t.tensor for t in read_trace(path).transfers} == {"x:0", "labels:0"}
        # the same names whatever else is fed
        again = dp.placement(sess, y, feed_dict={labels: np.ones((4, 4)), x: np.ones((4, 4))})
        assert [t.tensor for t in again.transfers] == [t.tensor for t in report.transfers]
