// The random family of the kernel ABI: counter-based (Philox4x32-10) fills, the same source
// on host and CUDA, so a seeded run draws the same numbers on both drivers. Knows no torch.
#pragma once

#include <cstdint>

#include "kernels/kernel_abi.h"

namespace accel::kernels {

enum class RandomKind : int {
  Uniform,          // out = a + u * (b - a), u in [0, 1)
  Normal,           // out = a + b * z, z standard normal (Box-Muller)
  Bernoulli,        // out = u < a
  BernoulliTensor,  // out = u < p, p = operand 1
  Random,           // out = from + bits % range (range 0: the full 64-bit range)
  Dropout,          // keep = u < a; out = input * keep * b, mask = keep; operands: out, mask, input
};

// The Philox state a launch draws from: the generator's (seed, offset) when it was launched.
// Element group g (4 elements of a 32-bit draw, 2 of a 64-bit one) uses counter offset + g;
// the generator's offset then moves past every group (randomGroupsReserved).
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

struct RandomDesc {
  ElementwiseDesc elems;  // operand 0 is the output, in the tensor's logical element order
  RandomKind kind = RandomKind::Uniform;
  double a = 0, b = 1;
  int64_t from = 0;
  uint64_t range = 0;
  PhiloxState philox;
};

// How many counter values a launch over `numel` elements consumes, rounded up to a multiple
// of 4 as CUDA's generator does, so the next launch starts at a fresh counter.
uint64_t randomGroupsReserved(RandomKind kind, DType out, int64_t numel, uint64_t range);

struct RandomTable {
  rt::Error (*fill)(const RandomDesc& d, rt::Stream stream);
};

const RandomTable& randomTable();
const RandomTable& hostRandomTable();

}  // namespace accel::kernels
