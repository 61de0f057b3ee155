"""The TensorFlow adapter: TF1 graph mode, devices, scopes, sessions and their options.

The floor above `core/`: it imports nothing of devplace's facts or views (tests/
test_code_structure.py checks the floors). `_tf` is the one module that imports TensorFlow.

Modules:

- `_tf`: importing TensorFlow once: TF1 graph mode, TF's log kept off the console
  (`DEVPLACE_TF_LOG=1` shows it), `EagerExecutionError`; the one door to TF's private parts
  (named functions; `INTERNALS`)
- `_tflog`: TensorFlow's C++ log lines held off the console while sessions are made and run
- `_fdcapture`: capturing what C++ writes to file descriptors 1 and 2 (the placement log)
- `tf1_legacy`: TF1 names TensorFlow 2 dropped, back on `dp.tf` (`tf.layers`,
  `tf.nn.rnn_cell` from tf_keras); `RemovedApiError` for `tf.contrib` and `tf.estimator`
- `devices`: device strings: parse, canonical form, runtime names, match, merge (as TF does)
- `scopes`: device scopes (`cpu`, `gpu`, `device`) and device functions (`assign_to_device`,
  `round_robin`, `greedy_by_bytes`, `by_op_type`)
- `differentiation`: `gradients` and Jacobians, colocated with their forward ops on request
- `layers`: batch normalisation from `tf.nn` ops, its updates in `UPDATE_OPS`
- `feeds`: `feed_dict=`, TensorFlow's name, accepted wherever devplace takes `feed=`
- `session`: `Session`, `init`, `run`, placement errors, the placement log
- `session_options`: session options as data: type, range, how each sets the config, its doc
- `gpu_memory`: GPU memory options are process-wide: later sessions are told so
- `virtual_gpus`: each GPU split into logical GPUs (`virtual_gpus=`), the no-GPU error
- `no_gpu`: why a session sees no GPU, in words ending with TensorFlow's own
- `values`: fetched values in plain Python form, for the Julia bridge
"""
