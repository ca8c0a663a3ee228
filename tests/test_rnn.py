"""nn.LSTM, nn.GRU, nn.RNN and their cells on accel against CPU, on the same weights and inputs:
outputs, final states, and the gradients of the input, the weights and the initial states.

ATen's RNN layers run the fused-cell kernels on accel (csrc/aten/rnn_ops.cpp, kernels/rnn.h),
which CPU lacks, so every test also checks that nothing went through the CPU fallback.
float32 matches to 1e-5 (summation order differs: CPU adds the input projection of all steps
at once, accel per step). bfloat16, float16 and autocast are compared with CPU float32 on the same
rounded weights and inputs: accel computes each cell in float32 and rounds its outputs (bf16
eps 2^-8 = 3.9e-3), and roundings compound through the steps and layers, so the tolerance is
4e-2, ten times bf16's eps.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import torch_accel

FP32 = dict(rtol=1e-5, atol=1e-5)
BF16 = dict(rtol=4e-2, atol=4e-2)
SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6

MODES = {
    "lstm": lambda **kw: torch.nn.LSTM(INPUT, HIDDEN, **kw),
    "gru": lambda **kw: torch.nn.GRU(INPUT, HIDDEN, **kw),
    "rnn_tanh": lambda **kw: torch.nn.RNN(INPUT, HIDDEN, nonlinearity="tanh", **kw),
    "rnn_relu": lambda **kw: torch.nn.RNN(INPUT, HIDDEN, nonlinearity="relu", **kw),
}


def no_fallback():
    assert torch_accel.fallback_counts() == {}


def make(mode, seed=0, **kw):
    torch.manual_seed(seed)
    return MODES[mode](**kw)


def initial_state(module, batch, gen):
    """Random h0 (and c0) of the module's shapes."""
    layers = module.num_layers * (2 if module.bidirectional else 1)
    out = module.proj_size if getattr(module, "proj_size", 0) else module.hidden_size
    h = torch.randn(layers, batch, out, generator=gen)
    if isinstance(module, torch.nn.LSTM):
        return (h, torch.randn(layers, batch, module.hidden_size, generator=gen))
    return h


def as_list(h):
    return list(h) if isinstance(h, tuple) else [h]


def run(module, device, dtype, x, h0=None, lengths=None, autocast=False):
    """Forward and backward of a copy of `module` on device; returns outputs, final states and
    the gradients (input, initial states, every parameter), all on CPU in float32."""
    m = copy.deepcopy(module).to(device, torch.float32 if autocast else dtype)
    xd = x.detach().to(device, dtype).requires_grad_()
    hd = None
    if h0 is not None:
        hd = tuple(t.detach().to(device, dtype).requires_grad_() for t in as_list(h0))
        hd = hd if isinstance(h0, tuple) else hd[0]
    inp = xd
    if lengths is not None:
        inp = pack_padded_sequence(xd, lengths, batch_first=m.batch_first, enforce_sorted=False)
    with torch.autocast("accel", dtype=torch.bfloat16, enabled=autocast):
        out, h = m(inp, hd)
    if lengths is not None:
        out, _ = pad_packed_sequence(out, batch_first=m.batch_first)
    gen = torch.Generator().manual_seed(7)
    loss = (out.float() * torch.randn(out.shape, generator=gen).to(device)).sum()
    for t in as_list(h):
        loss = loss + (t.float() * torch.randn(t.shape, generator=gen).to(device)).sum()
    loss.backward()
    grads = [xd.grad] + ([t.grad for t in as_list(hd)] if hd is not None else [])
    grads += [p.grad for p in m.parameters()]
    return [t.detach().float().cpu() for t in [out, *as_list(h), *grads]]


def compare(module, x, h0=None, lengths=None, dtype=torch.float32, autocast=False):
    if dtype != torch.float32 or autocast:
        # The reference: CPU float32 on the values accel sees.
        low = torch.bfloat16 if autocast else dtype
        module = copy.deepcopy(module).to(low).float()
        x = x.to(low).float()
        if h0 is not None:
            rounded = tuple(t.to(low).float() for t in as_list(h0))
            h0 = rounded if isinstance(h0, tuple) else rounded[0]
    want = run(module, "cpu", torch.float32, x, h0, lengths)
    got = run(module, "accel", dtype, x, h0, lengths, autocast)
    tol = FP32 if dtype == torch.float32 and not autocast else BF16
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, i
        torch.testing.assert_close(g, w, **tol, msg=lambda m, i=i: f"result {i}: {m}")
    no_fallback()


VARIANTS = {
    "plain": dict(kw={}, state=False),
    "batch_first_no_bias": dict(kw=dict(batch_first=True, bias=False), state=False),
    "given_state": dict(kw={}, state=True),
    "batch_first_given_state": dict(kw=dict(batch_first=True), state=True),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("mode", MODES)
def test_rnn_matches_cpu(mode, bidirectional, layers, variant):
    v = VARIANTS[variant]
    m = make(mode, num_layers=layers, bidirectional=bidirectional, **v["kw"])
    gen = torch.Generator().manual_seed(1)
    shape = (BATCH, SEQ, INPUT) if m.batch_first else (SEQ, BATCH, INPUT)
    x = torch.randn(shape, generator=gen)
    compare(m, x, initial_state(m, BATCH, gen) if v["state"] else None)


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_lstm_proj_size(bidirectional, layers):
    m = make("lstm", num_layers=layers, bidirectional=bidirectional, proj_size=3)
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(SEQ, BATCH, INPUT, generator=gen)
    compare(m, x)
    compare(m, x, initial_state(m, BATCH, gen))


@pytest.mark.parametrize("state", [False, True], ids=["zero_state", "given_state"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("mode", MODES)
def test_packed_sequence(mode, bidirectional, state):
    """pack_padded_sequence with unsorted lengths (enforce_sorted=False), two layers."""
    m = make(mode, num_layers=2, bidirectional=bidirectional, batch_first=True)
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(4, SEQ, INPUT, generator=gen)
    lengths = torch.tensor([3, SEQ, 1, 4])
    compare(m, x, initial_state(m, 4, gen) if state else None, lengths=lengths)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_dropout_between_layers(mode):
    """dropout=0.5 in eval mode and dropout=0 in training are deterministic: CPU's values."""
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(SEQ, BATCH, INPUT, generator=gen)
    compare(make(mode, num_layers=3, dropout=0.5).eval(), x)
    compare(make(mode, num_layers=3, dropout=0.0).train(), x)


def test_dropout_in_training_drops():
    """dropout=0.5 while training: accel draws its own mask, so only its effect is checked:
    the output differs from the eval output, and the same seed repeats it."""
    m = make("lstm", num_layers=2, dropout=0.5).to("accel")
    x = torch.randn(SEQ, BATCH, INPUT).to("accel")
    torch.manual_seed(5)
    a = m(x)[0]
    torch.manual_seed(5)
    b = m(x)[0]
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert (a - m.eval()(x)[0]).abs().max().item() > 1e-3
    no_fallback()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("mode", MODES)
def test_reduced_precision(mode, dtype):
    m = make(mode, num_layers=2, bidirectional=True)
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(SEQ, BATCH, INPUT, generator=gen)
    compare(m, x, initial_state(m, BATCH, gen), dtype=dtype)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_autocast_bfloat16(mode):
    """Under torch.autocast("accel", bfloat16) the gates' matmuls and the fused cells run in
    bf16 (CUDA's autocast policy); parameters and their gradients stay float32."""
    m = make(mode, num_layers=2)
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(SEQ, BATCH, INPUT, generator=gen)
    compare(m, x, autocast=True)


CELLS = {
    "lstm_cell": torch.nn.LSTMCell,
    "gru_cell": torch.nn.GRUCell,
    "rnn_tanh_cell": lambda i, h, **kw: torch.nn.RNNCell(i, h, nonlinearity="tanh", **kw),
    "rnn_relu_cell": lambda i, h, **kw: torch.nn.RNNCell(i, h, nonlinearity="relu", **kw),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("case", ["batched", "unbatched", "no_bias_no_state"])
@pytest.mark.parametrize("cell", CELLS)
def test_cells(cell, case, dtype):
    torch.manual_seed(9)
    c = CELLS[cell](INPUT, HIDDEN, bias=case != "no_bias_no_state")
    gen = torch.Generator().manual_seed(10)
    batch = () if case == "unbatched" else (BATCH,)
    x = torch.randn(*batch, INPUT, generator=gen)
    state = None
    if case != "no_bias_no_state":
        state = torch.randn(*batch, HIDDEN, generator=gen)
        if cell == "lstm_cell":
            state = (state, torch.randn(*batch, HIDDEN, generator=gen))
    if dtype == torch.bfloat16:
        c = c.to(torch.bfloat16).float()
        x = x.to(torch.bfloat16).float()

    def step(device, dt):
        m = copy.deepcopy(c).to(device, dt)
        xd = x.detach().to(device, dt).requires_grad_()
        sd = None
        if state is not None:
            sd = tuple(t.detach().to(device, dt).requires_grad_() for t in as_list(state))
        out = m(xd, sd if isinstance(state, tuple) else (sd[0] if sd else None))
        outs = as_list(out)
        gen = torch.Generator().manual_seed(11)
        sum(
            (o.float() * torch.randn(o.shape, generator=gen).to(device)).sum() for o in outs
        ).backward()
        grads = [xd.grad] + ([t.grad for t in sd] if sd else []) + [p.grad for p in m.parameters()]
        return [t.detach().float().cpu() for t in outs + grads]

    tol = FP32 if dtype == torch.float32 else BF16
    for g, w in zip(step("accel", dtype), step("cpu", torch.float32), strict=True):
        torch.testing.assert_close(g, w, **tol)
    no_fallback()


def lm_losses(device, mode):
    """Three AdamW steps of a small LSTM/GRU language model; the losses."""
    torch.manual_seed(12)
    rnn = torch.nn.LSTM if mode == "lstm" else torch.nn.GRU
    emb, net, head = torch.nn.Embedding(40, 16), rnn(16, 24, num_layers=2), torch.nn.Linear(24, 40)
    params = [*emb.parameters(), *net.parameters(), *head.parameters()]
    for mod in (emb, net, head):
        mod.to(device)
    opt = torch.optim.AdamW(params, lr=1e-2)
    tokens = torch.randint(0, 40, (9, 4), generator=torch.Generator().manual_seed(13)).to(device)
    losses = []
    for _ in range(3):
        out, _ = net(emb(tokens[:-1]))
        loss = F.cross_entropy(head(out).flatten(0, 1), tokens[1:].flatten())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_language_model_training_has_no_fallback(mode):
    """A full training step (embedding, two-layer LSTM/GRU, cross-entropy, gradient clipping,
    AdamW) with the fallback turned into an error: three steps' losses are CPU's."""
    want = lm_losses("cpu", mode)
    torch_accel.set_fallback_mode("error")
    try:
        got = lm_losses("accel", mode)
    finally:
        torch_accel.set_fallback_mode("warn")
    torch.testing.assert_close(got, want, rtol=1e-4, atol=0)
    assert got[2] < got[0]  # it learns
    no_fallback()


def test_fused_cells_gradcheck():
    """The fused kernels' backward against finite differences, in float64 (which also checks
    the double backward's composite formulas against the same workspace)."""
    gen = torch.Generator().manual_seed(14)

    def args(gates):
        t = [torch.randn(2, gates * 3, generator=gen, dtype=torch.float64) for _ in range(2)]
        t += [torch.randn(2, 3, generator=gen, dtype=torch.float64)]
        t += [torch.randn(gates * 3, generator=gen, dtype=torch.float64) for _ in range(2)]
        return [a.to("accel").requires_grad_() for a in t]

    lstm = lambda *a: torch.ops.aten._thnn_fused_lstm_cell(*a)[:2]  # noqa: E731
    gru = lambda *a: torch.ops.aten._thnn_fused_gru_cell(*a)[0]  # noqa: E731
    assert torch.autograd.gradcheck(lstm, args(4))
    assert torch.autograd.gradcheck(gru, args(3))
    assert torch.autograd.gradgradcheck(lstm, args(4))
    assert torch.autograd.gradgradcheck(gru, args(3))
    no_fallback()


def test_bad_input_raises_like_cpu():
    for mode in MODES:
        m = make(mode)
        for device in ("cpu", "accel"):
            m.to(device)
            with pytest.raises(
                RuntimeError, match="input.size\\(-1\\) must be equal to input_size"
            ):
                m(torch.randn(SEQ, BATCH, INPUT + 1, device=device))
            bad_h = torch.randn(1, BATCH + 1, HIDDEN, device=device)
            state = (bad_h, bad_h) if mode == "lstm" else bad_h
            with pytest.raises(RuntimeError, match="Expected hidden.*size"):
                m(torch.randn(SEQ, BATCH, INPUT, device=device), state)
    for device in ("cpu", "accel"):
        cell = torch.nn.LSTMCell(INPUT, HIDDEN).to(device)
        with pytest.raises(RuntimeError, match="input has inconsistent input_size"):
            cell(torch.randn(BATCH, INPUT + 1, device=device))
        h = torch.randn(BATCH, HIDDEN + 1, device=device)
        with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size"):
            cell(torch.randn(BATCH, INPUT, device=device), (h, h))


def test_fused_cell_argument_errors():
    """The fused ops themselves, called directly: torch.cuda's checks and error types."""
    a = lambda *s, dt=torch.float32: torch.zeros(*s, device="accel", dtype=dt)  # noqa: E731
    with pytest.raises(RuntimeError, match="2-dimensional"):
        torch.ops.aten._thnn_fused_lstm_cell(a(2, 3, 8), a(2, 3, 8), a(2, 2))
    with pytest.raises(RuntimeError, match="same size"):
        torch.ops.aten._thnn_fused_lstm_cell(a(2, 8), a(2, 12), a(2, 2))
    with pytest.raises(RuntimeError, match="expected 'cx' of size \\[2, 2\\]"):
        torch.ops.aten._thnn_fused_lstm_cell(a(2, 8), a(2, 8), a(2, 3))
    with pytest.raises(RuntimeError, match="both be given"):
        torch.ops.aten._thnn_fused_gru_cell(a(2, 6), a(2, 6), a(2, 2), a(6), None)
    with pytest.raises(RuntimeError, match="argument #3 'cx' is BFloat16"):
        torch.ops.aten._thnn_fused_lstm_cell(a(2, 8), a(2, 8), a(2, 2, dt=torch.bfloat16))
    with pytest.raises(RuntimeError, match="'hx' is on cpu"):
        torch.ops.aten._thnn_fused_gru_cell(a(2, 6), a(2, 6), torch.zeros(2, 2))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.ops.aten._thnn_fused_gru_cell(*(a(2, s, dt=torch.long) for s in (6, 6, 2)))
    # The device stays usable.
    hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(a(2, 8), a(2, 8), a(2, 2))
    assert hy.shape == cy.shape == (2, 2) and ws.shape == (2, 8)
    assert cy.abs().sum().item() == 0
    no_fallback()
