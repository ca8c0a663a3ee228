"""The demo model: a small Llama-style causal LM (transformers, random init) with LoRA adapters
(peft) on every attention and MLP projection. examples/lora_finetune.py trains it and
op_trace.py traces one training step of it; both take its configuration from here."""

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def llama_config(vocab_size: int, hidden: int, layers: int, max_positions: int) -> dict:
    """The arguments of the base model's ``transformers.LlamaConfig``."""
    return dict(
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        vocab_size=vocab_size,
        intermediate_size=2 * hidden,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
    )


def lora_config(rank: int):
    """The adapters: ``peft.LoraConfig`` of the given rank on LORA_TARGETS."""
    from peft import LoraConfig

    return LoraConfig(
        r=rank,
        lora_alpha=2 * rank,
        lora_dropout=0.0,
        target_modules=LORA_TARGETS,
        task_type="CAUSAL_LM",
    )
