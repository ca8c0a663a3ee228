"""Every transformers architecture a user might bring, tried on accel as on CPU (wider than
zoo.py, lighter: one step, no optimizer): for each model type of KINDS, a small config with
random init (nothing is downloaded, dropout off), one forward and backward on the same batch
on CPU and on accel, and greedy `generate` where the head has one. test_arch_sweep.py holds a
row to: the loss within relative 1e-4, the gradient norm within 1e-3, the same tokens, and no
op through the CPU fallback. A model whose config this sweep cannot size (it fails on CPU
too) is skipped with the reason.
"""

import copy

import torch

import torch_accel

KINDS = {
    "causal": (
        "AutoModelForCausalLM",
        "opt gpt_neox phi mistral qwen2 gemma2 gemma3_text stablelm olmo olmo2 cohere starcoder2 "
        "bloom mpt xglm biogpt mamba falcon_mamba granite granitemoe persimmon qwen3_moe "
        "nemotron exaone4 helium",
    ),
    "masked": (
        "AutoModelForMaskedLM",
        "roberta albert electra distilbert deberta xlm-roberta mpnet funnel squeezebert convbert "
        "longformer big_bird nystromformer yoso fnet mra ernie roformer megatron-bert rembert "
        "data2vec-text ibert flaubert xlm",
    ),
    "seq2seq": (
        "AutoModelForSeq2SeqLM",
        "mbart pegasus blenderbot blenderbot-small led m2m_100 mt5 umt5 plbart nllb-moe pegasus_x "
        "bigbird_pegasus prophetnet",
    ),
    "vision": (
        "AutoModelForImageClassification",
        "mobilenet_v1 mobilenet_v2 efficientnet regnet dinov2 beit poolformer mobilevit swinv2 "
        "focalnet data2vec-vision hiera ijepa vit_msn",
    ),
    "ctc": (
        "AutoModelForCTC",
        "hubert wav2vec2-conformer data2vec-audio sew sew-d unispeech unispeech-sat wavlm",
    ),
}

SMALL = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=2,
    head_dim=16,
    intermediate_size=64,
    vocab_size=96,
    max_position_embeddings=64,
    d_model=32,
    n_embd=32,
    n_layer=2,
    n_head=2,
    num_layers=2,
    num_heads=2,
    d_ff=64,
    d_kv=16,
    num_decoder_layers=2,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    embedding_size=32,
    num_experts=4,
    num_local_experts=4,
    num_experts_per_tok=2,
    moe_intermediate_size=32,
    shared_expert_intermediate_size=32,
    state_size=8,
    attention_window=[4, 4],
    block_size=4,
    num_conv_pos_embeddings=16,
    num_conv_pos_embedding_groups=2,
    conv_dim=[16, 16],
    conv_stride=[5, 2],
    conv_kernel=[10, 3],
    num_feat_extract_layers=2,
    image_size=32,
    patch_size=4,
    num_labels=3,
    depths=[1, 1, 1, 1],
    hidden_sizes=[16, 24, 32, 40],
    embed_dim=16,
    depth_multiplier=0.25,
    window_size=2,
)
OFF = ("dropout", "drop_path", "drop_connect", "layerdrop", "_prob")


def build(model_type: str, auto: str):
    """The small random-init model of model_type under transformers' auto class `auto`."""
    import transformers

    cfg = transformers.AutoConfig.for_model(model_type)
    for key, value in SMALL.items():
        if hasattr(cfg, key):
            current = getattr(cfg, key)
            if isinstance(current, list) and isinstance(value, list):
                value = value[: len(current)]
            elif isinstance(current, list):
                value = [value] * len(current)
            try:
                setattr(cfg, key, value)
            except Exception:  # noqa: BLE001  a field this model sizes otherwise
                pass
    for key, value in list(vars(cfg).items()):
        if any(s in key for s in OFF):
            if isinstance(value, float):
                setattr(cfg, key, 0.0)
            elif isinstance(value, list):
                setattr(cfg, key, [0.0] * len(value))
    torch.manual_seed(0)
    return getattr(transformers, auto).from_config(cfg).train()


def batch_for(kind: str, model) -> dict:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 96, (2, 12), generator=g)
    if kind == "vision":
        size = getattr(model.config, "image_size", 32)
        size = size if isinstance(size, int) else size[0]
        channels = getattr(model.config, "num_channels", 3)
        return {
            "pixel_values": torch.randn(2, channels, size, size, generator=g),
            "labels": torch.tensor([0, 2]),
        }
    if kind == "ctc":
        return {
            "input_values": torch.randn(2, 1600, generator=g),
            "labels": torch.randint(1, 20, (2, 5), generator=g),
        }
    if kind == "seq2seq":
        return {"input_ids": ids, "labels": ids[:, :6].contiguous()}
    return {"input_ids": ids, "labels": ids}


def run(model, kind: str, batch: dict, device: str):
    """(loss, gradient norm, greedy tokens or None, fallback counts) of one step on device."""
    m = copy.deepcopy(model).to(device)
    torch_accel.reset_fallback_counts()
    out = m(**{k: v.to(device) for k, v in batch.items()})
    out.loss.backward()
    norm = sum(p.grad.double().norm() ** 2 for p in m.parameters() if p.grad is not None) ** 0.5
    tokens = None
    if kind in ("causal", "seq2seq"):
        with torch.no_grad():
            tokens = m.generate(
                batch["input_ids"][:1, :5].to(device), max_new_tokens=5, do_sample=False
            ).tolist()
    return out.loss.item(), norm.item(), tokens, dict(torch_accel.fallback_counts())
