// The random family: counter-based (Philox4x32-10) fills, written once, so a seeded run draws
// the same numbers on host and CUDA. randomGroup(d, g) computes and stores the elements of
// group g; a launch runs it over the groups in parallel.
#pragma once

#include <cmath>

#include "kernels/dtype.h"
#include "kernels/elementwise.h"
#include "kernels/philox.h"
#include "kernels/portable_math.h"
#include "kernels/random_samplers.h"

namespace accel::kernels {

enum class RandomKind : int {
  Uniform,          // out = a + u * (b - a), u in [0, 1)
  Normal,           // out = a + b * z, z standard normal (Box-Muller)
  Bernoulli,        // out = u < a
  BernoulliTensor,  // out = u < p, p = operand 1
  Random,           // out = from + bits % range (range 0: the full 64-bit range)
  Dropout,          // keep = u < a; out = input * keep * b, mask = keep; operands: out, mask, input
  Exponential,      // out = -log(v) / a, v = 1 - u in (0, 1]; v near 1 takes log = -b (never 0)
  Cauchy,           // out = a + b * tan(pi * (v - 1/2)), v = 1 - u in (0, 1]
  Gamma,            // out = Gamma(alpha = operand 1), at least b (the dtype's smallest normal)
  Poisson,          // out = Poisson(rate = operand 1)
  Binomial,         // out = Binomial(count = operand 1, prob = operand 2)
};

// The kinds drawn by rejection: one element per group, on its own stream (random_samplers.h).
ACCEL_HD inline bool drawsByRejection(RandomKind kind) {
  return kind == RandomKind::Gamma || kind == RandomKind::Poisson || kind == RandomKind::Binomial;
}

// The Philox state a launch draws from: the generator's (seed, offset) when it was launched.
// Element group g (4 elements of a 32-bit draw, 2 of a 64-bit one) uses counter offset + g;
// the generator's offset then moves past every group (randomGroupsReserved).
//
// In a graph capture the state must change on every replay, so the kernel reads it from device
// memory at run time: `captured` then points to {seed, base offset}, and `offset` is the
// launch's offset within the graph (CUDA's graph-safe philox state works the same way).
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const uint64_t* captured = nullptr;
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
inline uint64_t randomGroupsReserved(RandomKind kind, DType out, int64_t numel, uint64_t range);

struct RandomTable {
  rt::Error (*fill)(const RandomDesc& d, rt::Stream stream);
  template <class Exec>
  static RandomTable make();
};

const RandomTable& randomTable();  // the build of the driver in use

// A group is one Philox call: 4 elements of 32-bit draws, 2 of 64-bit ones (double values,
// and integers whose range needs more than 32 bits).
ACCEL_HD inline int elementsPerGroup(RandomKind kind, DType out, uint64_t range) {
  if (drawsByRejection(kind)) return 1;
  if (kind == RandomKind::Random) return (range == 0 || range > (uint64_t{1} << 32)) ? 2 : 4;
  if (kind == RandomKind::Dropout || kind == RandomKind::Bernoulli ||
      kind == RandomKind::BernoulliTensor)
    return 4;
  return out == DType::Double ? 2 : 4;
}

// A group's Box-Muller pairs (one double pair, or two float pairs), computed once per pair:
// element `lane` is radius[lane / 2] * trig[lane], trig holding the pair's cos then its sin.
struct NormalGroup {
  double radius[2];
  double trig[4];
};

ACCEL_HD inline NormalGroup normalGroup(const Philox4& r, bool wide) {
  NormalGroup n{};
  if (wide) {
    const double u1 = 1.0 - uniformDouble(r.x[0], r.x[1]);  // (0, 1]: log is finite
    const double u2 = uniformDouble(r.x[2], r.x[3]);
    n.radius[0] = sqrt(-2.0 * portableLog(u1));
    portableSinCos(6.283185307179586 * u2, &n.trig[1], &n.trig[0]);
    return n;
  }
  for (int pair = 0; pair < 2; ++pair) {
    const float u1 = 1.0f - uniformFloat(r.x[2 * pair]);
    const float u2 = uniformFloat(r.x[2 * pair + 1]);
    n.radius[pair] = sqrtf(-2.0f * static_cast<float>(portableLog(u1)));
    portableSinCos(6.2831853f * u2, &n.trig[2 * pair + 1], &n.trig[2 * pair]);
  }
  return n;
}

// Element i's sample as double (32-bit kinds compute in float, as CUDA does for float). Host
// and CUDA draw bit-identical values: each multiply-add is an explicit fma (nvcc would
// otherwise contract `a + u * (b - a)` and the host compiler not), and log/sin/cos come from
// portable_math.h rather than the two sides' libraries.
ACCEL_HD inline double sampleAt(const RandomDesc& d, const Philox4& r, const NormalGroup& normal,
                                int lane, int per_group, const int64_t (&off)[kMaxOperands]) {
  const bool wide = per_group == 2;
  switch (d.kind) {
    case RandomKind::Uniform: {
      if (wide) {
        const double u = uniformDouble(r.x[2 * lane], r.x[2 * lane + 1]);
        return fma(u, d.b - d.a, d.a);
      }
      const float u = uniformFloat(r.x[lane]);
      return fmaf(u, static_cast<float>(d.b - d.a), static_cast<float>(d.a));
    }
    case RandomKind::Normal: {
      // Box-Muller: the pair's first element takes cos, the second sin.
      if (wide) return fma(d.b * normal.radius[0], normal.trig[lane], d.a);
      const float z =
          static_cast<float>(normal.radius[lane / 2]) * static_cast<float>(normal.trig[lane]);
      return fmaf(static_cast<float>(d.b), z, static_cast<float>(d.a));
    }
    case RandomKind::Exponential: {
      // CUDA's transform: b is half the output dtype's epsilon, so no draw rounds to 0.
      const double v = wide ? 1.0 - uniformDouble(r.x[2 * lane], r.x[2 * lane + 1])
                            : static_cast<double>(1.0f - uniformFloat(r.x[lane]));
      const double log_v = v >= 1.0 - d.b ? -d.b : portableLog(v);
      return -log_v / d.a;
    }
    case RandomKind::Cauchy: {
      // tan(pi (v - 1/2)) = -cos(pi v) / sin(pi v), from portable_math's sin and cos.
      const double v = wide ? 1.0 - uniformDouble(r.x[2 * lane], r.x[2 * lane + 1])
                            : static_cast<double>(1.0f - uniformFloat(r.x[lane]));
      double sin_v, cos_v;
      portableSinCos(3.141592653589793 * v, &sin_v, &cos_v);
      return fma(d.b, -cos_v / sin_v, d.a);
    }
    case RandomKind::Bernoulli:
      return uniformFloat(r.x[lane]) < static_cast<float>(d.a) ? 1.0 : 0.0;
    case RandomKind::BernoulliTensor: {
      const float p = loadAs<float>(d.elems.op[1].data + off[1], d.elems.op[1].dtype);
      return uniformFloat(r.x[lane]) < p ? 1.0 : 0.0;
    }
    default: return 0;
  }
}

// Element i of a rejection kind, on the stream at counter `counter`.
ACCEL_HD inline void rejectionSample(const RandomDesc& d, int64_t i, uint64_t seed,
                                     uint64_t counter) {
  const ElementwiseDesc& e = d.elems;
  int64_t off[kMaxOperands];
  offsetsOf(e, i, off);
  ElementStream stream(seed, counter);
  const double x = loadAs<double>(e.op[1].data + off[1], e.op[1].dtype);
  double v;
  if (d.kind == RandomKind::Gamma) {
    v = sampleGamma(x, d.b, stream);
  } else if (d.kind == RandomKind::Poisson) {
    v = samplePoisson(x, stream);
  } else {
    v = sampleBinomial(x, loadAs<double>(e.op[2].data + off[2], e.op[2].dtype), stream);
  }
  storeAs<double>(e.op[0].data + off[0], e.op[0].dtype, v);
}

ACCEL_HD inline void randomGroup(const RandomDesc& d, int64_t g) {
  const int per_group = elementsPerGroup(d.kind, d.elems.op[0].dtype, d.range);
  const uint64_t* captured = d.philox.captured;
  const uint64_t seed = captured != nullptr ? captured[0] : d.philox.seed;
  const uint64_t base = (captured != nullptr ? captured[1] : 0) + d.philox.offset;
  if (drawsByRejection(d.kind)) {
    if (g < d.elems.numel) rejectionSample(d, g, seed, base + static_cast<uint64_t>(g));
    return;
  }
  const Philox4 r = philox(seed, base + static_cast<uint64_t>(g));
  const NormalGroup normal =
      d.kind == RandomKind::Normal ? normalGroup(r, per_group == 2) : NormalGroup{};
  const ElementwiseDesc& e = d.elems;
  for (int lane = 0; lane < per_group; ++lane) {
    const int64_t i = g * per_group + lane;
    if (i >= e.numel) return;
    int64_t off[kMaxOperands];
    offsetsOf(e, i, off);
    char* out = e.op[0].data + off[0];
    if (d.kind == RandomKind::Random) {
      const uint64_t bits = per_group == 2
                                ? (static_cast<uint64_t>(r.x[2 * lane + 1]) << 32) | r.x[2 * lane]
                                : r.x[lane];
      const uint64_t v = d.range == 0 ? bits : bits % d.range;
      storeAs<int64_t>(out, e.op[0].dtype, static_cast<int64_t>(static_cast<uint64_t>(d.from) + v));
    } else if (d.kind == RandomKind::Dropout) {
      const bool keep = uniformFloat(r.x[lane]) < static_cast<float>(d.a);
      const float x = loadAs<float>(e.op[2].data + off[2], e.op[2].dtype);
      storeAs<float>(out, e.op[0].dtype, keep ? x * static_cast<float>(d.b) : 0.0f);
      storeAs<bool>(e.op[1].data + off[1], e.op[1].dtype, keep);
    } else if (e.op[0].dtype == DType::Double) {
      storeAs<double>(out, e.op[0].dtype, sampleAt(d, r, normal, lane, per_group, off));
    } else {
      storeAs<float>(out, e.op[0].dtype,
                     static_cast<float>(sampleAt(d, r, normal, lane, per_group, off)));
    }
  }
}

inline int64_t randomGroups(const RandomDesc& d) {
  const int per_group = elementsPerGroup(d.kind, d.elems.op[0].dtype, d.range);
  return (d.elems.numel + per_group - 1) / per_group;
}

inline uint64_t randomGroupsReserved(RandomKind kind, DType out, int64_t numel, uint64_t range) {
  const int per_group = elementsPerGroup(kind, out, range);
  const uint64_t groups = (static_cast<uint64_t>(numel) + per_group - 1) / per_group;
  return (groups + 3) / 4 * 4;
}

// One group per task, in parallel.
struct RandomGroupOp {
  static constexpr bool kFmaMath = true;  // the host's fast build (kernels/host/executor.h)
  RandomDesc d;
  ACCEL_HD bool operator()(int64_t g) const {
    randomGroup(d, g);
    return true;
  }
};

template <class Exec>
rt::Error launchRandom(const RandomDesc& d, rt::Stream stream) {
  const int64_t groups = randomGroups(d);
  if (groups == 0) return rt::Error::Success;
  return Exec::forEach(groups, false, RandomGroupOp{d}, stream);
}

template <class Exec>
RandomTable RandomTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(RandomTable::fill)>(&launchRandom<Exec>)};
}

}  // namespace accel::kernels
