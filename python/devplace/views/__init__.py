"""The views: what people see of the facts (pictures, notebook displays, TensorBoard logs).

The top floor: it may import every floor below (`facts/`, `adapter/`, `core/`) and is imported
by none of them but through a display hook handing its object to `notebook`
(tests/test_code_structure.py checks the floors).

Modules:

- `plot`: pictures of saved or in-memory traces: reads them, compares two, draws (`drawing`)
  and writes the file, with a progress bar for large ones
- `drawing`: the drawing itself: a per-device Gantt chart of a `Trace`, two traces compared,
  as matplotlib figures of the objects it is handed (no facts module imported, so the notebook
  view can use it)
- `notebook`: rich display in Jupyter: the HTML tables and pictures devplace's objects show
  (their `_repr_*_` hooks call it), and for Julia's `show`
- `tensorboard_log`: `dp.tensorboard`: a traced run's graph (actual and requested devices) and
  `RunMetadata` written for TensorBoard's Graphs dashboard
"""
