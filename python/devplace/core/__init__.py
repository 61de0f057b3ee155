"""The lowest floor: plain Python every other floor and package uses, no TensorFlow.

It imports nothing of devplace outside itself (tests/test_code_structure.py checks the floors).

Modules:

- `errors`: `devplace.Error` and `devplace.DevplaceWarning`, the roots of devplace's errors and
  warnings; the bad-argument errors; `user_stacklevel`, so a warning names the user's line
- `formatting`: how numbers are written for people (counts with their noun, durations, byte
  sizes, the fetch line): one format for every view
- `printed`: what results print: one line for `repr`, a table of at most `MAX_ROWS` rows for
  `str` (then how many more), IPython's table
- `atomic`: the one atomic file writer, for every file devplace writes for a user (failures as
  `FileWriteError` naming the path)
- `_json`: JSON read by orjson where it reads a text as the `json` module does
- `_gc`: the cyclic garbage collector paused while bulk data is built
- `_lazy`: public names that load on first use, so `import devplace` and `--help` stay cheap
"""
