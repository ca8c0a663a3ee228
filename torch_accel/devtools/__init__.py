"""Developer tools behind ``python -m torch_accel coverage`` and ``trace``: the OpInfo
conformance sweep (coverage.py) and the aten ops of one LoRA training step (op_trace.py).
The runtime package never imports them."""
