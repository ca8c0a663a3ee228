"""The pre-flight report: ops of a training step that would fall back, found on fake tensors."""

import gc

import torch

import torch_accel
from conftest import run_python
from torch_accel import preflight


class WithSpecialOp(torch.nn.Module):
    """A model with an op that has no accel kernel (airy_ai) next to native ones."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(8))

    def forward(self, x):
        return torch.special.airy_ai(x) * self.scale + x


def test_reports_the_fallback_op_without_touching_the_device():
    model = WithSpecialOp()
    x = torch.randn(4, 8)
    gc.collect()  # earlier tests' garbage must not be freed in the middle of the measurement
    allocated = torch.accel.memory_allocated()

    def step():
        m = model.to("accel")
        loss = m(x.to("accel")).sum()
        loss.backward()

    report = preflight.run(step)
    assert report.fallback["aten::special_airy_ai.out"] == 1
    assert report.calls["aten::mul.Tensor"] >= 1
    assert "aten::mul.Tensor" not in report.fallback  # native
    assert torch.accel.memory_allocated() == allocated  # fake tensors only
    assert torch_accel.fallback_counts() == {}  # nothing actually ran on the CPU fallback
    assert "aten::special_airy_ai.out" in report.format()


def test_cli_on_the_lora_example():
    proc = run_python(
        "import sys\nfrom torch_accel.__main__ import main\n"
        "sys.exit(main(['preflight', 'examples/lora_finetune.py',\n"
        "               '--hidden', '32', '--batch-size', '2']))",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "pre-flight:" in proc.stdout and "distinct ops" in proc.stdout
