"""The facts of a run: traced runs, their traces, placement reports, profiles, comparisons.

The floor above `adapter/`: it imports no view (tests/test_code_structure.py checks the
floors); a result's Jupyter display hook hands the object to `views.notebook`, the one edge up.

Modules:

- `traced`: one traced run (`dp.placement`): its transfers from the partition graphs; report,
  statistics and Chrome trace as views of its `Trace`
- `trace`: a traced run's facts (`Trace`, `read_trace`): the one reader of timelines, validated,
  lanes folded into devices
- `trace_format`: the Chrome-trace vocabulary the reader (`trace`) and the writer (`traced`)
  share: event phases, `"<lane> Compute"` processes, thread-name events
- `report`: placement reports: requested and actual device per op, transfers
- `profile`: `run_profile`, `save_profile`, `Profile`, per-op statistics
- `comparison`: the numbers comparing two profiles
"""
