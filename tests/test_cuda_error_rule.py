"""Every CUDA runtime call in the CUDA plugin goes through the one error rule of
csrc/runtime/cuda/error_rule.h: ACCEL_CUDA(...) (or ACCEL_CUDA_RETURN_IF_ERROR), probe(...)
for a call whose failure is an answer, checkLaunch after a kernel launch. A bare call could
leave a code in CUDA's last-error slot that the next launch check reports as its own.
Checked on the sources, so it holds for the plugin that no CI machine runs."""

import os
import re

from conftest import ROOT

PLUGIN_DIRS = [
    os.path.join(ROOT, "csrc", "runtime", "cuda"),
    os.path.join(ROOT, "csrc", "kernels", "cuda"),
]
RULE_FILE = "cuda_error.h"  # the wrappers themselves
WRAPPERS = {"ACCEL_CUDA", "ACCEL_CUDA_RETURN_IF_ERROR", "probe"}
CUDA_CALL = re.compile(r"\bcuda[A-Z]\w*\s*\(")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _enclosing_calls(text, pos):
    """The names of the calls whose parentheses enclose `pos`, innermost first."""
    names, depth = [], 0
    for i in range(pos - 1, -1, -1):
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_]\w*)\s*$", text[:i])
                names.append(m.group(1) if m else "")
            else:
                depth -= 1
        elif c in ";{}" and depth == 0:
            break
    return names


def bare_cuda_calls(text):
    text = COMMENT.sub("", text)
    bad = []
    for m in CUDA_CALL.finditer(text):
        if not WRAPPERS & set(_enclosing_calls(text, m.start())):
            bad.append(m.group(0).rstrip("( "))
    return bad


def test_every_cuda_call_goes_through_the_rule():
    bad = []
    for d in PLUGIN_DIRS:
        for name in sorted(os.listdir(d)):
            if name == RULE_FILE or not name.endswith((".h", ".cpp", ".cu", ".cuh")):
                continue
            with open(os.path.join(d, name)) as f:
                bad += [f"{name}: {call}" for call in bare_cuda_calls(f.read())]
    assert not bad, "CUDA calls outside ACCEL_CUDA/probe: " + ", ".join(bad)


def test_the_checker_sees_a_bare_call():
    src = """
    Error f() {
      ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
      if (!cuda::probe(cudaPointerGetAttributes(&a, p))) return x;
      const cudaError_t e = cudaStreamQuery(s);  // bare: NotReady stays in the slot
      return ACCEL_CUDA(
          cudaMemcpyAsync(d, s, n, k, h));
    }"""
    assert bare_cuda_calls(src) == ["cudaStreamQuery"]
