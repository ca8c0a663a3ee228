"""Developer tools behind ``python -m torch_accel coverage`` and ``trace``: the OpInfo
conformance sweep (coverage.py) and the aten ops of one LoRA training step (op_trace.py), with
the demo model's configuration they share with examples/lora_finetune.py (lora_model.py).
The runtime package never imports them."""
