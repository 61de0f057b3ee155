"""Julia tasks' TensorFlow scopes kept apart on the host's one thread (`bridge/tasks.py`).

Here the test's thread plays two Julia tasks, switching between them as the host does when
requests come from another task; DevPlace.jl's side is `julia/DevPlace/test/tasks.jl`.
"""

from __future__ import annotations

import devplace as dp
from devplace.bridge.tasks import switch_task

tf = dp.tf


def test_each_task_builds_under_its_own_scopes(fresh_graph) -> None:
    with tf.device("/cpu:1"), tf.name_scope("one"):
        a = tf.constant(1.0)
        switch_task(1, 2)  # task 2's first request: none of task 1's scopes
        assert tf.get_default_graph() is not fresh_graph
        assert tf.constant(0.0).device == ""
        session = tf.Session(graph=tf.Graph())
        with tf.Graph().as_default() as g2, tf.variable_scope("two"), session.as_default():
            b = tf.constant(2.0)
            v = tf.get_variable("v", shape=())
            switch_task(2, 1)  # task 1 again, inside its own blocks
            assert tf.get_default_graph() is fresh_graph
            assert tf.get_default_session() is None
            assert tf.get_variable_scope().name == ""
            c = tf.constant(3.0) + a  # in task 2's graph this would fail: not the same graph
            assert c.graph is fresh_graph
            assert c.device == "/device:CPU:1" and c.op.name.startswith("one/")
            switch_task(1, 2)
            assert tf.get_default_graph() is g2 and tf.get_default_session() is session
            d = tf.constant(4.0) + b
            assert d.device == "" and d.op.name.startswith("two/") and v.name == "two/v:0"
        session.close()
        switch_task(2, 1)  # task 2 left its blocks; task 1 leaves its own
    assert tf.get_default_graph() is fresh_graph
    e = tf.constant(5.0)
    assert e.device == "" and e.op.name == "Const"  # outside "one/"
    switch_task(1, 2)  # task 2 has no scopes left anywhere
    assert tf.get_variable_scope().name == "" and tf.get_default_session() is None
    assert tf.constant(6.0).device == ""
    switch_task(2, 1)


def test_a_task_never_seen_starts_at_the_root_variable_scope(fresh_graph) -> None:
    with tf.variable_scope("outer"):
        switch_task(1, 3)
        assert tf.get_variable_scope().name == ""
        assert tf.get_variable("w", shape=()).name == "w:0"
        switch_task(3, 1)
        assert tf.get_variable_scope().name == "outer"
        assert tf.get_variable("w", shape=()).name == "outer/w:0"
