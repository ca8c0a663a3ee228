"""What the torch.compile hook registered: per part, "ok", "not registered yet" or why not."""

import warnings

STATUS = {
    "dynamo": "not registered yet",
    "inductor": "not registered yet",
    "cpp_wrapper": "not registered yet",
}

DISABLED_HINT = (
    "torch.compile(backend='inductor') is disabled on accel; backend='aot_eager' still works"
)


def run_or_disable(name, fn) -> None:
    """Runs the registration step fn; if it raises, records why under name and warns."""
    try:
        fn()
    except Exception as e:  # a torch whose internals moved: disable, never break the caller
        STATUS[name] = f"disabled: {type(e).__name__}: {e}"
        warnings.warn(f"torch_accel: {DISABLED_HINT} ({STATUS[name]})", stacklevel=3)
