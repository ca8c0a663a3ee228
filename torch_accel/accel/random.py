"""Random number generators of the accel devices (the ``torch.cuda.random`` functions)."""

import torch

from .. import _C
from ._utils import _get_device_index

default_generators = tuple(_C._default_generator(i) for i in range(_C._device_count()))


def _gen(device):
    return default_generators[_get_device_index(device, optional=True)]


def get_rng_state(device="accel") -> torch.Tensor:
    return _gen(device).get_state()


def get_rng_state_all() -> list:
    return [g.get_state() for g in default_generators]


def set_rng_state(new_state: torch.Tensor, device="accel") -> None:
    _gen(device).set_state(new_state.clone(memory_format=torch.contiguous_format))


def set_rng_state_all(new_states) -> None:
    for gen, state in zip(default_generators, new_states):
        gen.set_state(state.clone(memory_format=torch.contiguous_format))


def manual_seed(seed: int) -> None:
    _gen(None).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for gen in default_generators:
        gen.manual_seed(int(seed))


def seed() -> None:
    _gen(None).seed()


def seed_all() -> None:
    s = _gen(None).seed()
    for gen in default_generators:
        gen.manual_seed(s)


def initial_seed() -> int:
    return _gen(None).initial_seed()
