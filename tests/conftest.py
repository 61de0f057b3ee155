"""Shared fixtures: every test builds its graph in a fresh default graph."""

import pytest

import devplace as dp


@pytest.fixture(autouse=True)
def fresh_graph():
    """A new default graph for each test, so op names and collections never leak."""
    graph = dp.tf.Graph()
    with graph.as_default():
        yield graph


def ran_on(report, name):
    """The device op `name` actually ran on, from a placement report (RunMetadata)."""
    return report.actual(name)
