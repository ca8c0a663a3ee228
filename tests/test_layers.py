"""The layers keep their word (docs/architecture.md, "Layers"): no include runs from a lower
layer to a higher one, and runtime/, kernels/ and allocator/ include no ATen or torch header
(torch/headeronly and c10's header-only Half/BFloat16 are allowed). C++ headers live under
csrc/. Checked on the sources, so it holds for builds that no CI machine runs (the CUDA
plugin)."""

import os
import re

import pytest

from conftest import ROOT

CSRC = os.path.join(ROOT, "csrc")
# Bottom up; a layer may include itself and the layers before it.
ORDER = ["runtime", "kernels", "allocator", "comm", "core", "distributed", "aten", "python"]
TORCH_FREE = {"runtime", "kernels", "allocator", "comm"}
ALLOWED_TORCH = re.compile(r"^(torch/headeronly/|c10/util/(Half|BFloat16)\.h$)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".in")


def _files(layer):
    for dirpath, _, names in os.walk(os.path.join(CSRC, layer)):
        for name in names:
            if name.endswith(SOURCES):
                yield os.path.join(dirpath, name)


def _includes(path):
    with open(path) as f:
        return INCLUDE.findall(f.read())


@pytest.mark.parametrize("layer", ORDER)
def test_no_include_runs_up(layer):
    allowed = set(ORDER[: ORDER.index(layer) + 1])
    bad = []
    for path in _files(layer):
        for kind, name in _includes(path):
            top = name.split("/")[0]
            if kind == '"' and (top not in allowed or ".." in name):
                bad.append(f"{os.path.relpath(path, ROOT)}: {name}")
    assert not bad, "includes that leave the layer's reach:\n" + "\n".join(bad)


@pytest.mark.parametrize("layer", sorted(TORCH_FREE))
def test_torch_free_layers(layer):
    bad = []
    for path in _files(layer):
        for kind, name in _includes(path):
            top = name.split("/")[0]
            if kind == "<" and top in ("ATen", "torch", "c10", "pybind11", "Python.h"):
                if not ALLOWED_TORCH.match(name):
                    bad.append(f"{os.path.relpath(path, ROOT)}: <{name}>")
    assert not bad, "torch headers in a torch-free layer:\n" + "\n".join(bad)


def test_cpp_headers_live_under_csrc():
    stray = []
    for top in ("torch_accel", "tests", "benchmarks", "examples", "scripts"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            if os.sep + "cpp" in dirpath:  # the C++ tests and benchmarks of the layers
                continue
            stray += [os.path.join(dirpath, n) for n in names if n.endswith((".h", ".hpp"))]
    assert not stray, stray


def test_the_checker_sees_a_violation(tmp_path):
    """The scan itself must be able to fail: an upward include is recognised."""
    fake = tmp_path / "x.h"
    fake.write_text('#include "aten/fallback.h"\n#include <ATen/Tensor.h>\n')
    found = _includes(str(fake))
    assert ('"', "aten/fallback.h") in found and ("<", "ATen/Tensor.h") in found
