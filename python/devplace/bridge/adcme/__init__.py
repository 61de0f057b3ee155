"""ADCME's rules that take more than one TensorFlow call, for DevPlace.jl (one request each).

DevPlace.jl gives ADCME's API (`julia/DevPlace/src/adcme/`); where ADCME's meaning needs several
TF ops (1-based indices, shapes, loops, scipy in the host), the rule is one function here, so a
Julia call is one request to the host. The modules match the Julia files of the same names:
`adcme/ops.jl` calls `devplace.bridge.adcme.ops` through `bridge_rule("adcme.ops", name, ...)`
(`adcme/calls.jl`), and so on.

Modules:

- `calls`: what every rule shares: the one index rule (`zero_based`: Julia values arrive
  0-based, tensors 1-based), `F64` and `as_f64` (Python floats never rounded to float32)
- `variable`, `core`, `gpu`, `ops`: variables and derivatives, control flow and graph
  look-ups, GPU facts, operators (scatter, tril, repeat, rolling sums, ...)
- `random`: random variables by TensorFlow's own random ops, `categorical`, `choice`, log
  densities
- `sparse`: sparse matrices as `tf.SparseTensor`s; the sparse solve, `factorize` and
  `SparseAssembler` ops (scipy in the host through `py_func`) with gradients
- `factorizations`, `assemblers`: what those ops keep in the host: LU factors by key, the rows
  of open assemblers
- `optim`: the optimizers: `PackedProblem` under TF1's `ScipyOptimizerInterface`,
  `CustomOptimizer`, tensorflow_probability's graph BFGS
- `extra`: `register`'s `tf.custom_gradient` over Julia functions, `sleep_for`'s sleeping op
- `layers`, `io`: layers (`fully_connected`'s variables by TF1's names, Jacobians per sample,
  dropout) and files (.mat files by ADCME's keys, pickles, TensorBoard summary writers)
- `kit`: ADCME's views: the figures of `lineview`, `meshview`, the gradient tests, animations
- `sqlite`, `ot`: SQLite databases over `sqlite3` (each `execute` atomic) and optimal transport
  (Sinkhorn/Greenkhorn loops, `emd` by scipy's HiGHS, `dtw`, `ot_plot1D`'s figure)
"""
