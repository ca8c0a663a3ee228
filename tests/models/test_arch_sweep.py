"""About 80 transformers architectures beyond the zoo train a step and generate on accel as on
CPU, with no CPU fallback (arch_sweep.py)."""

import functools
import warnings

import pytest
from arch_sweep import KINDS, batch_for, build, run

CASES = [(kind, name) for kind, (_, names) in KINDS.items() for name in names.split()]


@functools.cache
def cpu_model(kind: str, name: str):
    import transformers

    transformers.logging.set_verbosity_error()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = build(name, KINDS[kind][0])
            batch = batch_for(kind, model)
            return model, batch, run(model, kind, batch, "cpu")
        except Exception as e:  # noqa: BLE001  a config the sweep cannot size: CPU fails too
            pytest.skip(f"{name} cannot be built at the sweep's sizes: {type(e).__name__}: {e}")


@pytest.mark.parametrize("kind,name", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_architecture_matches_cpu(kind, name):
    model, batch, (loss, norm, tokens, _) = cpu_model(kind, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got_loss, got_norm, got_tokens, fallback = run(model, kind, batch, "accel")
    assert fallback == {}, f"ops through the CPU fallback: {fallback}"
    assert got_loss == pytest.approx(loss, rel=1e-4, abs=1e-5)
    assert got_norm == pytest.approx(norm, rel=1e-3, abs=1e-5)
    assert got_tokens == tokens
