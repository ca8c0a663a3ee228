"""The torch.compile hook for accel: Dynamo's device interface and Inductor's code generation.

Nothing here imports Dynamo or Inductor: ``install()`` (called by ``import torch_accel``) only
arranges for the registration (registration.py) to run when they load (import_hook.py). A
torch whose Inductor lacks the APIs used here (api_probes.py) disables compilation on accel
with a clear message (``status()``) instead of breaking the import.
"""

from . import import_hook
from .registration_status import STATUS as _STATUS


def status() -> dict:
    """What the hook registered: {'dynamo', 'inductor', 'cpp_wrapper'} -> 'ok' or why not."""
    return dict(_STATUS)


def install() -> None:
    import_hook.arm()
