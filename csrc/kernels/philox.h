// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"): a counter
// is hashed with a key into 4 independent 32-bit words. The bits depend only on (seed,
// counter), never on which thread or driver computes them.
#pragma once

#include <cstdint>

#include "kernels/macros.h"

namespace accel::kernels {

struct Philox4 {
  uint32_t x[4];
};

ACCEL_HD inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
}

// counter_hi is the counter's upper half: 0 for the fills, an element's call count for the
// rejection samplers (random_samplers.h).
ACCEL_HD inline Philox4 philox(uint64_t seed, uint64_t counter, uint64_t counter_hi = 0) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    const uint32_t lo0 = mulhilo(0xD2511F53u, c0, &hi0);
    const uint32_t lo1 = mulhilo(0xCD9E8D57u, c2, &hi1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// [0, 1) from 24 or 53 random bits (exactly representable, never 1).
ACCEL_HD inline float uniformFloat(uint32_t x) { return (x >> 8) * (1.0f / 16777216.0f); }
ACCEL_HD inline double uniformDouble(uint32_t lo, uint32_t hi) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 32) | lo;
  return (bits >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace accel::kernels
