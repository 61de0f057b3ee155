"""Ctrl-C during ADCME's `BFGS!` in DevPlace.jl: a real SIGINT to a Julia process optimizing.

The call throws `InterruptException`, the host and the session stay, and the variables hold the
last step scipy accepted (the best values so far), not the start and not a trial point.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time

import pytest
from julia_runner import PROJECT, TRANSPORTS, julia_env, require_julia

pytestmark = pytest.mark.slow

SCRIPT = """
using DevPlace
Base.exit_on_sigint(false)
reset_default_graph(); sess = Session()
n = 400
x = Variable(zeros(n))
loss = sum(100 * (x[2:end] - x[1:end-1]^2)^2 + (1 - x[1:end-1])^2)   # Rosenbrock: many steps
init(sess)
println("START ", run(sess, loss)); flush(stdout)
slow = ARGS[1] == "slow"
cb = (vs, it, l) -> (println("STEP-LOSS ", l); flush(stdout); slow && sleep(0.05))
try
    BFGS!(sess, loss, 100000; callback = cb)
    println("FINISHED")
catch err
    println("CAUGHT ", typeof(err))
end
println("AFTER ", run(sess, loss))
"""


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("callback", ["slow", "fast"])
def test_ctrl_c_stops_bfgs_with_the_variables_at_the_last_accepted_step(
    callback: str, transport: str, tmp_path
) -> None:
    script = tmp_path / "interrupt.jl"
    script.write_text(SCRIPT)
    env = julia_env(transport)
    proc = subprocess.Popen(
        [require_julia(), f"--project={PROJECT}", str(script), callback],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + 300
    while sum(line.startswith("STEP-LOSS") for line in list(lines)) < 10:
        assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=120)
    finally:
        proc.kill()
    reader.join(timeout=10)
    out = "".join(lines)
    assert proc.returncode == 0, out + proc.stderr.read()[-3000:]
    assert "CAUGHT InterruptException" in out and "FINISHED" not in out, out[-2000:]
    start = float(re.search(r"^START (\S+)$", out, re.MULTILINE).group(1))
    steps = [float(v) for v in re.findall(r"^STEP-LOSS (\S+)$", out, re.MULTILINE)]
    after = float(re.search(r"^AFTER (\S+)$", out, re.MULTILINE).group(1))
    assert after < start
    # The variables hold the last step accepted before the interrupt reached the host: the
    # step whose callback was printed last, or the one accepted while the interrupt was on its
    # way (its callback cut short), which is the loss of one of the last evaluations, never a
    # trial point beyond them.
    evaluated = [float(v) for v in re.findall(r"^iter \d+, current loss=(\S+)$", out, re.M)]
    assert after <= steps[-1] * (1 + 1e-12), (after, steps[-3:])
    nearest = min(abs(after - s) for s in evaluated[-4:])
    assert nearest <= 1e-12 * max(1.0, abs(after)), (after, evaluated[-4:], steps[-3:])
