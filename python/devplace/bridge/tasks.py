"""TensorFlow's scopes kept per Julia task, so that each task builds under its own.

TensorFlow keeps what a `with` block opens per thread (the default graph and session stacks,
name and variable scopes) or per graph (device, colocation and control-dependency scopes), and
the host serves every Julia task on its one thread. DevPlace.jl sends `switch_task` before a
request from another task than the last one; the host puts the last task's state aside and
installs the new task's. A Julia task thus behaves as a TF thread that shares the global default
graph: a scope one task opens (`@cpu`, `@pywith g.as_default()`, `tf.name_scope`, ...) never
reaches another task's ops, and leaving it restores that task's own state. Switches happen
between requests only (DevPlace.jl holds the bridge for a whole request, callbacks included),
so what is put aside is exactly what outlives a request: the `with` blocks Julia has open.
"""

from __future__ import annotations

import weakref
from typing import Any

from devplace.adapter._tf import (
    default_graph_stack,
    default_session_stack,
    graph_context_switches,
    graph_scope_stacks,
    set_graph_scope_stacks,
    tf,
    variable_scope_store,
)

__all__ = ["switch_task"]


class _TaskState:
    """One task's scopes while another task runs: its default graphs and the context switches
    that entered them, its default sessions, and per graph its stacks and variable scope."""

    __slots__ = ("graph_switches", "graphs", "sessions", "states")

    def __init__(self) -> None:
        self.graphs: list[Any] = []
        self.graph_switches: list[Any] = []
        self.sessions: list[Any] = []
        self.states: dict[Any, tuple[Any, ...]] = {}


_saved: dict[int, _TaskState] = {}
#: Every graph seen as a default graph at a switch: where a task's scopes can be.
_known: weakref.WeakSet[Any] = weakref.WeakSet()
#: Each graph's root variable scope, the one a task with no variable scope open is in.
_root_scopes: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def switch_task(old: int, new: int) -> None:
    """Put Julia task `old`'s TensorFlow scopes aside and install task `new`'s (none open for a
    task not seen before)."""
    graph_stack = default_graph_stack()
    switches = graph_context_switches()
    sessions = default_session_stack()
    mine = _TaskState()
    # Entering a default graph pushes one context switch; those below the task's are TF's own.
    own = len(switches.stack) - len(graph_stack.stack)
    base = switches.stack[:own]
    mine.graphs, mine.graph_switches = graph_stack.stack, switches.stack[own:]
    mine.sessions = sessions.stack
    _known.update(graph_stack.stack)
    _known.add(graph_stack.get_default())
    graphs = list(_known)
    for graph in graphs:
        state = _graph_state(graph)
        if not _at_rest(state):
            mine.states[graph] = state
    if mine.graphs or mine.sessions or mine.states:
        _saved[old] = mine
    else:
        _saved.pop(old, None)

    theirs = _saved.pop(new, None) or _TaskState()
    graph_stack.stack = theirs.graphs
    switches.stack = base + theirs.graph_switches
    sessions.stack = theirs.sessions
    for graph in graphs:
        _set_graph_state(graph, theirs.states.get(graph))


def _graph_state(graph: Any) -> tuple[Any, ...]:
    store = variable_scope_store(graph)
    scope = store.current_scope if store is not None else None
    if scope is not None and scope.name == "":
        _root_scopes[graph] = scope
    return (*graph_scope_stacks(graph), scope)


def _at_rest(state: tuple[Any, ...]) -> bool:
    *stacks, scope = state
    return not any(len(s) for s in stacks) and (scope is None or scope.name == "")


def _set_graph_state(graph: Any, state: tuple[Any, ...] | None) -> None:
    """Install `state` in `graph`; None: the state of a task with no scope open in it."""
    set_graph_scope_stacks(graph, None if state is None else state[:-1])
    store = variable_scope_store(graph)
    if store is not None:
        scope = None if state is None else state[-1]
        if scope is None:
            scope = _root_scopes.get(graph) or tf.VariableScope(False)
            _root_scopes[graph] = scope
        store.current_scope = scope
