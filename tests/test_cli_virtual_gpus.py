"""`devplace devices --virtual-gpus N` where there is no GPU: the reason, and a hint this
command can follow (not the Session's `soft=True`)."""

from conftest import requires_gpu, requires_no_gpu

from devplace.cli import main


@requires_no_gpu
def test_virtual_gpus_without_a_gpu_hints_what_the_command_can_do(capsys):
    assert main(["devices", "--virtual-gpus", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("devplace devices: error: Session: virtual_gpus=4 splits each GPU")
    assert "TensorFlow sees no GPU here" in err
    assert "soft=True" not in err
    assert "Hint: --virtual-gpus needs a GPU to split" in err


@requires_gpu
def test_virtual_gpus_with_a_gpu_lists_them(capsys):
    assert main(["devices", "--virtual-gpus", "2", "--json"]) == 0
    assert '"/device:GPU:1"' in capsys.readouterr().out
