"""An op that cannot be placed fails every run of its graph: the error says so, where the op was
made, every op that cannot be placed, and how to recover."""

from __future__ import annotations

import inspect

import pytest

import devplace as dp

tf = dp.tf


def _here() -> int:
    """The caller's line."""
    return inspect.stack()[1].lineno


def test_an_unfetched_bad_op_is_named_with_where_it_was_made_and_every_other() -> None:
    with tf.Graph().as_default():
        loss = tf.constant(1.0, name="loss")
        with tf.device("/device:GPU:7"):
            bad, line = tf.multiply(2.0, loss, name="bad"), _here()  # never fetched
        with tf.device("/device:CPU:5"):
            tf.multiply(3.0, loss, name="later")
        sess = dp.Session()
        with pytest.raises(dp.DevicePlacementError) as caught:
            sess.run(loss)
        message = str(caught.value)
        assert "'bad' is not among the fetches nor needed by them" in message
        assert "every run of this graph fails" in message
        assert f"'bad' on /device:GPU:7 (made at {__file__}:{line})" in message
        assert (
            f"'later' on /device:CPU:5 (made at {__file__}:" in message
        )  # every one, not the first
        assert "soft=True" in message and "fresh graph" in message
        # the way out it names works
        assert dp.Session(soft=True).run(loss) == 1.0
        # fetching the bad op itself: no word of "not among the fetches"
        with pytest.raises(dp.DevicePlacementError) as caught:
            sess.run(bad)
        assert "not among the fetches" not in str(caught.value)


def test_a_device_scope_julia_enters_records_julia_s_file_and_line() -> None:
    """The bridge's `enter` request carries where Julia opened the block: the device scope it
    opens, and so every op made in it, says that line (placement errors name it for ops made
    from Julia, whose Python frames are all the bridge's)."""
    from devplace.adapter._tf import device_scope_sites
    from devplace.bridge.requests import CODES, OPERATIONS

    enter, leave = (OPERATIONS[CODES[name]][1] for name in ("enter", "exit"))
    with tf.Graph().as_default():
        outer, inner = tf.device("/device:CPU:0"), tf.device("/device:GPU:7")
        enter(outer, "/home/me/model.jl", 12)
        enter(inner, "/home/me/model.jl", 13)
        op = tf.constant(1.0).op
        leave(inner, None)
        assert leave(outer, None) is False
        assert device_scope_sites(op) == [("/home/me/model.jl", 13), ("/home/me/model.jl", 12)]
        # a manager that opens no device scope is entered as before
        names = tf.name_scope("s")
        assert enter(names, "/home/me/model.jl", 14) == "s/"
        leave(names, None)
