// The random transforms draw the same bits on host and CUDA: the values are pinned here to
// their formula computed step by step (explicit fma, portable_math.h's log/sin/cos), and the
// portable functions are checked against the C library.
#include "kernels_testing.h"

#include <cfloat>

#include "kernels/philox.h"
#include "kernels/portable_math.h"
#include "kernels/random.h"

namespace accel::kernels::testing {
namespace {

using RandomTest = KernelTest;

TEST(PortableMath, LogMatchesTheLibrary) {
  int float_mismatch = 0, n = 0;
  for (uint32_t bits = 1; bits <= (1u << 24); bits += 97) {  // every float uniform's range
    const float u = float(bits) * (1.0f / 16777216.0f);
    const double ref = std::log(double(u));
    ASSERT_NEAR(portableLog(u), ref, 4 * DBL_EPSILON * std::max(1e-300, std::fabs(ref)) + 1e-18)
        << u;
    float_mismatch += float(portableLog(u)) != float(ref);
    ++n;
  }
  EXPECT_LE(float_mismatch, n / 10000);  // rounded to float: a near-tie at most, rarely
  for (double x : {1.0, 0.5, 2.0, 1e-300, 0.7071067811865476, 1.4142135623730951, 3e7})
    EXPECT_NEAR(portableLog(x), std::log(x), 4 * DBL_EPSILON * std::fabs(std::log(x)) + 1e-18) << x;
  EXPECT_EQ(portableLog(1.0), 0.0);
}

TEST(PortableMath, SinCosMatchTheLibrary) {
  for (int i = 0; i <= 100000; ++i) {
    const double x = 6.283185307179586 * i / 100000;
    double s, c;
    portableSinCos(x, &s, &c);
    ASSERT_NEAR(s, std::sin(x), 4e-16) << x;
    ASSERT_NEAR(c, std::cos(x), 4e-16) << x;
  }
}

// out[i] of a float fill over numel elements, seed 1234, offset 8.
std::vector<float> draw(RandomTest* t, rt::Stream stream, RandomKind kind, double a, double b,
                        int64_t numel) {
  Problem p(t, {numel});
  p.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  RandomDesc d;
  d.elems = p.desc();
  d.kind = kind;
  d.a = a;
  d.b = b;
  d.philox = PhiloxState{1234, 8, nullptr};
  EXPECT_EQ(host::randomTable().fill(d, stream), rt::Error::Success);
  p.download();
  std::vector<float> out(numel);
  for (int64_t i = 0; i < numel; ++i) out[i] = float(p.at(0, i));
  return out;
}

TEST_F(RandomTest, UniformIsOneFusedMultiplyAdd) {
  const double a = -3.7, b = 11.3;
  const int64_t numel = 4001;
  const std::vector<float> out = draw(this, stream_, RandomKind::Uniform, a, b, numel);
  int differs_unfused = 0;
  for (int64_t i = 0; i < numel; ++i) {
    const Philox4 r = philox(1234, 8 + uint64_t(i / 4));
    const float u = float(r.x[i % 4] >> 8) * (1.0f / 16777216.0f);
    const float expected = std::fmaf(u, float(b - a), float(a));
    ASSERT_EQ(out[i], expected) << i;
    volatile float prod = u * float(b - a);  // two roundings, as an uncontracted a + u*(b-a)
    differs_unfused += float(prod + float(a)) != expected;
  }
  // The case matters: an unfused formula would draw other values for some elements.
  EXPECT_GT(differs_unfused, 0);
}

TEST_F(RandomTest, NormalIsBoxMullerWithPortableMath) {
  const double mean = 0.25, stdev = 3.0;
  const int64_t numel = 4003;
  const std::vector<float> out = draw(this, stream_, RandomKind::Normal, mean, stdev, numel);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < numel; ++i) {
    const Philox4 r = philox(1234, 8 + uint64_t(i / 4));
    const int lane = int(i % 4), pair = lane & ~1;
    const float u1 = 1.0f - float(r.x[pair] >> 8) * (1.0f / 16777216.0f);
    const float u2 = float(r.x[pair + 1] >> 8) * (1.0f / 16777216.0f);
    const float radius = std::sqrt(-2.0f * float(portableLog(u1)));
    double s, c;
    portableSinCos(double(6.2831853f * u2), &s, &c);
    const float z = radius * float(lane % 2 == 0 ? c : s);
    ASSERT_EQ(out[i], std::fmaf(float(stdev), z, float(mean))) << i;
    // And it is the normal sample the library's functions give, to a float ulp or so.
    const float lib =
        float(mean + stdev * std::sqrt(-2.0 * std::log(double(u1))) *
                         (lane % 2 == 0 ? std::cos(6.2831853f * u2) : std::sin(6.2831853f * u2)));
    ASSERT_NEAR(out[i], lib, 4e-6 * std::max(1.0f, std::fabs(lib))) << i;
    sum += out[i];
    sq += double(out[i]) * out[i];
  }
  const double m = sum / numel, sd = std::sqrt(sq / numel - m * m);
  EXPECT_NEAR(m, mean, 0.15);
  EXPECT_NEAR(sd, stdev, 0.15);
}

}  // namespace
}  // namespace accel::kernels::testing
