"""The model zoo: small transformers architectures with random init (nothing is downloaded),
dropout off, float32, and the training run each test compares between CPU and accel.

``ZOO`` maps a model name to its case: a builder (a CPU model, deterministic for a seed) and
a batch maker. ``train(case, device)`` runs the first forward/backward and three AdamW steps
on a copy of the model and returns what the tests compare. The accel run is under the
fallback's "error" mode (TORCH_ACCEL_FALLBACK=error): an op without a native kernel fails it.
"""

import copy
import dataclasses
from collections.abc import Callable

import torch

import torch_accel

VOCAB = 96
BATCH, SEQ = 2, 12
STEPS = 3


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _token_batch(seed: int = 1) -> dict:
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=_generator(seed))
    return {"input_ids": ids, "labels": ids}


def _seq2seq_batch(seed: int = 1) -> dict:
    g = _generator(seed)
    return {
        "input_ids": torch.randint(0, VOCAB, (BATCH, SEQ), generator=g),
        "labels": torch.randint(0, VOCAB, (BATCH, SEQ // 2), generator=g),
    }


def _image_batch(size: int, labels: int, seed: int = 1) -> dict:
    g = _generator(seed)
    return {
        "pixel_values": torch.randn(BATCH, 3, size, size, generator=g),
        "labels": torch.randint(0, labels, (BATCH,), generator=g),
    }


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(
        GPT2Config(
            vocab_size=VOCAB,
            n_positions=64,
            n_embd=32,
            n_layer=2,
            n_head=2,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            bos_token_id=0,
            eos_token_id=0,
            pad_token_id=0,
        )
    )


def _llama_kwargs() -> dict:
    return dict(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(**_llama_kwargs()))


def _mixtral():
    from transformers import MixtralConfig, MixtralForCausalLM

    # output_router_logits adds the load-balancing loss, whose expert counts go through
    # histc on an int tensor off CPU (CPU has no int histc kernel).
    return MixtralForCausalLM(
        MixtralConfig(
            **_llama_kwargs(),
            num_local_experts=4,
            num_experts_per_tok=2,
            output_router_logits=True,
            router_aux_loss_coef=0.02,
        )
    )


def _qwen2_moe():
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    # Routed experts beside a gated shared expert, and the load-balancing loss.
    return Qwen2MoeForCausalLM(
        Qwen2MoeConfig(
            **_llama_kwargs(),
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
            output_router_logits=True,
            router_aux_loss_coef=0.02,
        )
    )


def _qwen3_next():
    from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

    # A gated delta rule (linear attention: a causal convolution, chunked UT systems solved by
    # linalg.solve_triangular) beside full attention, routed experts and a shared expert.
    return Qwen3NextForCausalLM(
        Qwen3NextConfig(
            **_llama_kwargs(),
            head_dim=8,
            linear_key_head_dim=8,
            linear_value_head_dim=8,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            linear_conv_kernel_dim=4,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
            layer_types=["linear_attention", "full_attention"],
        )
    )


def _bloom():
    from transformers import BloomConfig, BloomForCausalLM

    # ALiBi: no position embeddings, a per-head linear bias on the attention scores.
    return BloomForCausalLM(
        BloomConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            n_layer=2,
            n_head=4,
            hidden_dropout=0.0,
            attention_dropout=0.0,
            bos_token_id=0,
            eos_token_id=0,
            pad_token_id=0,
        )
    )


def _bert():
    from transformers import BertConfig, BertForMaskedLM

    return BertForMaskedLM(
        BertConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            pad_token_id=0,
        )
    )


def _deberta_v2():
    from transformers import DebertaV2Config, DebertaV2ForMaskedLM

    # Disentangled attention: content-to-position and position-to-content terms over
    # log-bucketed relative positions.
    return DebertaV2ForMaskedLM(
        DebertaV2Config(
            vocab_size=VOCAB,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            pad_token_id=0,
            relative_attention=True,
            position_buckets=8,
            pos_att_type=["p2c", "c2p"],
        )
    )


def _t5():
    from transformers import T5Config, T5ForConditionalGeneration

    return T5ForConditionalGeneration(
        T5Config(
            vocab_size=VOCAB,
            d_model=32,
            d_kv=8,
            d_ff=64,
            num_layers=2,
            num_heads=4,
            dropout_rate=0.0,
            pad_token_id=0,
            eos_token_id=1,
            decoder_start_token_id=0,
        )
    )


def _vit():
    from transformers import ViTConfig, ViTForImageClassification

    return ViTForImageClassification(
        ViTConfig(
            image_size=16,
            patch_size=4,
            num_channels=3,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            num_labels=5,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    )


def _swin():
    from transformers import SwinConfig, SwinForImageClassification

    # Shifted windows: roll, window partition views and the relative position bias table.
    return SwinForImageClassification(
        SwinConfig(
            image_size=32,
            patch_size=4,
            embed_dim=16,
            depths=[1, 1],
            num_heads=[2, 2],
            window_size=4,
            num_labels=5,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            drop_path_rate=0.0,
        )
    )


def _resnet():
    from transformers import ResNetConfig, ResNetForImageClassification

    return ResNetForImageClassification(
        ResNetConfig(
            num_channels=3,
            embedding_size=8,
            hidden_sizes=[8, 16],
            depths=[1, 1],
            layer_type="basic",
            num_labels=5,
        )
    )


WHISPER_MELS, WHISPER_FRAMES = 8, 32


def _whisper():
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    return WhisperForConditionalGeneration(
        WhisperConfig(
            vocab_size=VOCAB,
            num_mel_bins=WHISPER_MELS,
            encoder_layers=2,
            decoder_layers=2,
            d_model=32,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            # The encoder's two convolutions (the second with stride 2) halve the frames.
            max_source_positions=WHISPER_FRAMES // 2,
            max_target_positions=32,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=1,
            decoder_start_token_id=2,
            begin_suppress_tokens=None,
        )
    )


def _audio_batch(seed: int = 1) -> dict:
    g = _generator(seed)
    return {
        "input_features": torch.randn(BATCH, WHISPER_MELS, WHISPER_FRAMES, generator=g),
        "labels": torch.randint(3, VOCAB, (BATCH, SEQ // 2), generator=g),
    }


WAV2VEC2_SAMPLES = 1600


def _wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

    # A convolutional feature encoder (group norm), a weight-normed positional convolution, and
    # the CTC loss. Time masking (numpy's random draws) and layer drop are off.
    return Wav2Vec2ForCTC(
        Wav2Vec2Config(
            vocab_size=24,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            conv_dim=(16, 16),
            conv_stride=(5, 4),
            conv_kernel=(10, 4),
            num_conv_pos_embeddings=8,
            num_conv_pos_embedding_groups=4,
            hidden_dropout=0.0,
            attention_dropout=0.0,
            activation_dropout=0.0,
            feat_proj_dropout=0.0,
            final_dropout=0.0,
            layerdrop=0.0,
            mask_time_prob=0.0,
            pad_token_id=0,
            ctc_loss_reduction="mean",
        )
    )


def _ctc_batch(seed: int = 1) -> dict:
    g = _generator(seed)
    return {
        "input_values": torch.randn(BATCH, WAV2VEC2_SAMPLES, generator=g),
        "labels": torch.randint(1, 24, (BATCH, 5), generator=g),
    }


@dataclasses.dataclass(frozen=True)
class Case:
    build: Callable[[], torch.nn.Module]
    batch: Callable[[], dict]


ZOO = {
    "gpt2": Case(_gpt2, _token_batch),
    "llama": Case(_llama, _token_batch),
    "mixtral": Case(_mixtral, _token_batch),
    "bert": Case(_bert, _token_batch),
    "t5": Case(_t5, _seq2seq_batch),
    "vit": Case(_vit, lambda: _image_batch(16, 5)),
    "resnet": Case(_resnet, lambda: _image_batch(32, 5)),
    "whisper": Case(_whisper, _audio_batch),
    "qwen2_moe": Case(_qwen2_moe, _token_batch),
    "qwen3_next": Case(_qwen3_next, _token_batch),
    "bloom": Case(_bloom, _token_batch),
    "deberta_v2": Case(_deberta_v2, _token_batch),
    "swin": Case(_swin, lambda: _image_batch(32, 5)),
    "wav2vec2": Case(_wav2vec2, _ctc_batch),
}


def build(name: str, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = ZOO[name].build()
    model.train()  # dropout is configured off; batch norm uses (and updates) batch stats
    return model


def tied_groups(model: torch.nn.Module) -> list[list[str]]:
    """The parameter names sharing one Parameter, for every Parameter (sorted)."""
    groups: dict[int, list[str]] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append(name)
    return sorted(sorted(g) for g in groups.values())


@dataclasses.dataclass
class Run:
    names: list[str]  # named_parameters() after the move (tied ones once)
    tied: list[list[str]]
    grads: dict  # the first backward's gradients, on CPU (None where there is none)
    losses: list[float]  # the loss before each of the STEPS AdamW steps
    fallback: dict  # aten op -> calls through the CPU fallback


class FallbackMode:
    """Sets the CPU fallback's mode for a block."""

    def __init__(self, mode: str):
        self.mode = mode

    def __enter__(self):
        self.saved = torch_accel.fallback_mode()
        torch_accel.set_fallback_mode(self.mode)

    def __exit__(self, *exc):
        torch_accel.set_fallback_mode(self.saved)


def train(name: str, model: torch.nn.Module, device: str, bf16: bool = False) -> Run:
    """The first backward and STEPS AdamW steps of a copy of ``model`` on ``device``, in
    float32 or under bfloat16 autocast."""
    model = copy.deepcopy(model).to(device)
    batch = {k: v.to(device) for k, v in ZOO[name].batch().items()}
    # foreach=True: what AdamW picks by itself on accel (a foreach device).
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    torch_accel.reset_fallback_counts()
    losses, grads = [], None
    with FallbackMode("error" if device != "cpu" else torch_accel.fallback_mode()):
        for _ in range(STEPS):
            with torch.autocast(torch.device(device).type, torch.bfloat16, enabled=bf16):
                loss = model(**batch).loss
            loss.backward()
            if grads is None:
                grads = {
                    n: None if p.grad is None else p.grad.detach().cpu()
                    for n, p in model.named_parameters()
                }
            losses.append(loss.item())
            opt.step()
            opt.zero_grad(set_to_none=True)
    return Run(
        names=[n for n, _ in model.named_parameters()],
        tied=tied_groups(model),
        grads=grads,
        losses=losses,
        fallback=torch_accel.fallback_counts() if device != "cpu" else {},
    )
