"""ADCME's rules that take more than one TensorFlow call, for DevPlace.jl (one request each).

DevPlace.jl gives ADCME's API (`julia/DevPlace/src/adcme/`); where ADCME's meaning needs several
TF ops (1-based indices, shapes, loops, scipy in the host), the rule is one function here, so a
Julia call is one request to the host. The modules match the Julia files one to one:
`adcme/ops.jl` calls `devplace.bridge.adcme.ops` through `bridge_rule("adcme.ops", name, ...)`
(`adcme/calls.jl`), and so on for `variable`, `core`, `gpu`, `random`, `io`, `optim`, `layers`
and `sparse`. `calls` holds what every rule shares (how Julia's indices arrive); the sparse
solve's factorizations and the sparse assemblers keep their state in the host in `factorizations`
and `assemblers`.
"""
