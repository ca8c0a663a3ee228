"""Runs a callback on a third-party module right after it loads, or at once if it has: how
torch_accel adjusts the few libraries that know a fixed list of devices (transformers'
bfloat16 check, accelerate's distributed types) without importing them itself."""

import importlib.abc
import sys
from collections.abc import Callable


class _AfterLoad(importlib.abc.MetaPathFinder):
    def __init__(self, fullname: str, callback: Callable):
        self.fullname = fullname
        self.callback = callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.fullname:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            self.callback(module)

        spec.loader.exec_module = exec_module
        return spec


def after_import(fullname: str, callback: Callable) -> None:
    """callback(module) once `fullname` has run: now if it already has, else as it loads."""
    module = sys.modules.get(fullname)
    if module is not None:
        callback(module)
    else:
        sys.meta_path.insert(0, _AfterLoad(fullname, callback))
