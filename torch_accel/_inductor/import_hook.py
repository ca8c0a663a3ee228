"""Runs the registration when Dynamo and Inductor load, so ``import torch_accel`` imports
neither: register_dynamo() right after ``torch._dynamo.device_interface`` has executed, and
accel's Inductor backend the first time Inductor initialises its backends."""

import importlib.abc
import importlib.machinery
import sys

from .registration import register_dynamo, register_inductor_or_refuse
from .registration_status import STATUS, run_or_disable


def _on_common_loaded(common) -> None:
    """Wrap Inductor's backend initialisation so that ours registers first, on first use."""
    if not hasattr(common, "init_backend_registration"):
        STATUS["inductor"] = "disabled: Inductor has no init_backend_registration"
        return
    original = common.init_backend_registration

    def init_backend_registration():
        if STATUS["inductor"] == "not registered yet":
            register_inductor_or_refuse()
        return original()

    init_backend_registration.__wrapped__ = original
    common.init_backend_registration = init_backend_registration


_HOOKS = {
    "torch._dynamo.device_interface": lambda module: run_or_disable("dynamo", register_dynamo),
    "torch._inductor.codegen.common": _on_common_loaded,
}


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Runs _HOOKS[name](module) right after the module `name` has executed."""

    def find_spec(self, name, path, target=None):
        if name not in _HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        exec_module = spec.loader.exec_module

        def exec_then_hook(module):
            exec_module(module)
            _HOOKS[name](module)

        spec.loader.exec_module = exec_then_hook
        return spec


def arm() -> None:
    """Registers now what is already loaded, and hooks the imports of what is not."""
    if "torch._dynamo.device_interface" in sys.modules:
        run_or_disable("dynamo", register_dynamo)
    if "torch._inductor.codegen.common" in sys.modules:  # Inductor already loaded: no wrapping
        register_inductor_or_refuse()
    if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())
