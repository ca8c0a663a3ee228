"""The ``torch.backends`` entry point: ``import torch`` calls load(), which imports torch_accel.
It lives apart from the package's __init__ so that ``import torch_accel`` (which imports torch,
which calls this) finds a module that is already there instead of a half-initialised one."""


def load() -> None:
    import torch_accel  # noqa: F401
