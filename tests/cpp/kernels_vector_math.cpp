// vexp, verf, vtanh and vsincos (vector_math.h) against the C library in double, over every 997th
// float of the range where each is not constant: within the ulps the header states, the special
// values as the library's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/vector_math.h"

namespace accel::kernels {
namespace {

float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// The distance from got to the exact value ref, in units of the float spacing at ref (the
// smallest denormal's below the normal range).
double ulps(float got, double ref) {
  const double a = std::fabs(ref);
  const double spacing = a < std::numeric_limits<float>::min()
                             ? std::numeric_limits<float>::denorm_min()
                             : std::ldexp(1.0, std::ilogb(a) - 23);
  return std::fabs(double(got) - ref) / spacing;
}

template <class F, class R>
double maxUlps(F f, R ref, float lo, float hi) {
  double worst = 0;
  for (uint32_t b = 0; b < 0x7f800000u; b += 997) {
    for (float x : {fromBits(b), -fromBits(b)}) {
      if (x < lo || x > hi) continue;
      const double r = ref(double(x));
      if (std::fabs(r) > std::numeric_limits<float>::max()) continue;  // overflows: below
      const double u = ulps(f(x), r);
      EXPECT_LE(u, 2.0) << x;
      if (u > worst) worst = u;
    }
  }
  return worst;
}

TEST(VectorMath, ExpWithinOneUlp) {
  const auto ref = [](double x) { return std::exp(x); };
  EXPECT_LE(maxUlps([](float x) { return vexp(x); }, ref, -110.0f, 89.0f), 1.0);
  EXPECT_EQ(vexp(0.0f), 1.0f);
  EXPECT_EQ(vexp(89.0f), INFINITY);
  EXPECT_EQ(vexp(INFINITY), INFINITY);
  EXPECT_EQ(vexp(-INFINITY), 0.0f);
  EXPECT_EQ(vexp(-104.5f), 0.0f);
  EXPECT_GT(vexp(-100.0f), 0.0f);  // a denormal, as expf's
  EXPECT_TRUE(std::isnan(vexp(NAN)));
}

TEST(VectorMath, ErfWithinOneAndAHalfUlp) {
  const auto ref = [](double x) { return std::erf(x); };
  EXPECT_LE(maxUlps([](float x) { return verf(x); }, ref, -5.0f, 5.0f), 1.5);
  EXPECT_EQ(verf(0.0f), 0.0f);
  EXPECT_EQ(verf(INFINITY), 1.0f);
  EXPECT_EQ(verf(-INFINITY), -1.0f);
  EXPECT_LE(ulps(verf(1e-30f), std::erf(1e-30)), 1.0);
  EXPECT_TRUE(std::isnan(verf(NAN)));
}

TEST(VectorMath, TanhWithinOneAndAHalfUlp) {
  const auto ref = [](double x) { return std::tanh(x); };
  EXPECT_LE(maxUlps([](float x) { return vtanh(x); }, ref, -12.0f, 12.0f), 1.5);
  EXPECT_EQ(vtanh(0.0f), 0.0f);
  EXPECT_EQ(vtanh(100.0f), 1.0f);
  EXPECT_EQ(vtanh(-INFINITY), -1.0f);
  EXPECT_TRUE(std::isnan(vtanh(NAN)));
}

TEST(VectorMath, SinAndCosWithinOneUlpUpToTheFastLimit) {
  const float limit = kTrigFastLimit;
  const auto sin_ref = [](double x) { return std::sin(x); };
  const auto cos_ref = [](double x) { return std::cos(x); };
  EXPECT_LE(maxUlps([](float x) { return vsincos<false>(x); }, sin_ref, -limit, limit), 1.0);
  EXPECT_LE(maxUlps([](float x) { return vsincos<true>(x); }, cos_ref, -limit, limit), 1.0);
  EXPECT_EQ(vsincos<false>(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(vsincos<false>(-0.0f)));
  EXPECT_EQ(vsincos<true>(0.0f), 1.0f);
  // Beyond the limit, and for inf and NaN, callers take the library's.
  EXPECT_TRUE(trigFast(limit) && trigFast(-limit));
  EXPECT_FALSE(trigFast(std::nextafter(limit, INFINITY)));
  EXPECT_FALSE(trigFast(INFINITY) || trigFast(-INFINITY) || trigFast(NAN));
}

}  // namespace
}  // namespace accel::kernels
