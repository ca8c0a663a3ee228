"""One HF Trainer + peft LoRA run on a zoo model, as a user launches it: the device comes from
accelerate (ACCELERATE_TORCH_DEVICE=accel for accel, use_cpu for CPU); `--bf16` trains under
bfloat16 autocast (TrainingArguments(bf16=True)). Prints one JSON line:
the device the Trainer chose, the logged losses, and the fallback counts."""

import json
import os
import sys
import tempfile

import torch
from zoo import VOCAB, build

import torch_accel

STEPS = 3


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        ids = torch.randint(1, VOCAB, (12,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": ids, "labels": ids}


def main(device: str, bf16: bool = False) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import Trainer, TrainingArguments

    torch.manual_seed(0)
    lora = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    model = get_peft_model(build("llama"), lora)
    args = TrainingArguments(
        output_dir=tempfile.mkdtemp(),
        max_steps=STEPS,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=device == "cpu",
        bf16=bf16,
        seed=0,
        data_seed=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=Tokens())
    chosen = str(trainer.args.device)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    params = sorted({str(p.device) for p in model.parameters()})
    line = json.dumps(
        {
            "device": chosen,
            "params": params,
            "losses": losses,
            "fallback": torch_accel.fallback_counts(),
        }
    )
    # One write with its newline: under torchrun the ranks share one pipe, and unbuffered
    # print() writes the text and the newline apart, so two ranks' lines could interleave.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ACCELERATE_TORCH_DEVICE", "cpu"),
        bf16="--bf16" in sys.argv,
    )
