#include "kernels_testing.h"
#include "kernels/unary.h"

namespace accel::kernels::testing {
namespace {

double relTol(DType t) {
  switch (t) {
    case DType::Float: return 2e-6;
    case DType::Half: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    default: return 1e-13;
  }
}

struct Case {
  UnaryOp op;
  double (*ref)(double);
  bool positive;  // domain
};

const Case kFloatCases[] = {
    {UnaryOp::Exp, [](double x) { return std::exp(x); }, false},
    {UnaryOp::Log, [](double x) { return std::log(x); }, true},
    {UnaryOp::Sqrt, [](double x) { return std::sqrt(x); }, true},
    {UnaryOp::Rsqrt, [](double x) { return 1 / std::sqrt(x); }, true},
    {UnaryOp::Tanh, [](double x) { return std::tanh(x); }, false},
    {UnaryOp::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, false},
    {UnaryOp::Erf, [](double x) { return std::erf(x); }, false},
    {UnaryOp::Neg, [](double x) { return -x; }, false},
    {UnaryOp::Abs, [](double x) { return std::abs(x); }, false},
    {UnaryOp::Floor, [](double x) { return std::floor(x); }, false},
    {UnaryOp::Round, [](double x) { return std::nearbyint(x); }, false},
    {UnaryOp::Silu, [](double x) { return x / (1 + std::exp(-x)); }, false},
    {UnaryOp::Gelu, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, false},
};

class UnaryTest : public KernelTest {};

TEST_F(UnaryTest, FloatingOpsContiguousAndTransposed) {
  for (DType t : {DType::Float, DType::Double, DType::Half, DType::BFloat16}) {
    for (const Case& c : kFloatCases) {
      for (bool transposed : {false, true}) {
        Problem p(this, {7, 5});
        p.addContiguous(t, [](int64_t) { return 0.0; });
        auto value = [&](int64_t j) {
          const double v = double(j % 13) * 0.41 - 2.6;
          return c.positive ? std::abs(v) + 0.05 : v;
        };
        if (transposed)
          p.add(t, {5, 1}, value);
        else
          p.addContiguous(t, value);
        ASSERT_EQ(host::unaryTable().unary(c.op, p.desc(), UnaryParams{}, stream_),
                  rt::Error::Success);
        p.download();
        for (int64_t i = 0; i < p.numel(); ++i) {
          const double x = p.at(1, i), expected = roundTo(t, c.ref(x));
          // Scaled by |x| too: gelu and silu cancel near their tails, as in ATen.
          ASSERT_NEAR(p.at(0, i), expected, relTol(t) * (std::abs(expected) + std::abs(x) + 1e-3))
              << "op " << int(c.op) << " dtype " << int(t) << " x=" << x;
        }
      }
    }
  }
}

TEST_F(UnaryTest, IntegerOpsAndFloatOnlyOpsRejected) {
  for (DType t : {DType::Int64, DType::Int32, DType::Int8}) {
    Problem p(this, {12});
    p.addContiguous(t, [](int64_t) { return 0.0; });
    p.addContiguous(t, [](int64_t j) { return double(j) - 6; });
    UnaryParams clamp;
    clamp.a = Scalar{0, -2, true};
    clamp.has_a = true;
    clamp.b = Scalar{0, 3, true};
    clamp.has_b = true;
    ASSERT_EQ(host::unaryTable().unary(UnaryOp::Clamp, p.desc(), clamp, stream_),
              rt::Error::Success);
    p.download();
    for (int64_t i = 0; i < 12; ++i) ASSERT_EQ(p.at(0, i), std::min(3.0, std::max(-2.0, i - 6.0)));
    ASSERT_EQ(host::unaryTable().unary(UnaryOp::Abs, p.desc(), UnaryParams{}, stream_),
              rt::Error::Success);
    p.download();
    for (int64_t i = 0; i < 12; ++i) ASSERT_EQ(p.at(0, i), std::abs(i - 6.0));
    EXPECT_EQ(host::unaryTable().unary(UnaryOp::Exp, p.desc(), UnaryParams{}, stream_),
              rt::Error::NotSupported);
  }
}

TEST_F(UnaryTest, PredicatesWriteBool) {
  Problem p(this, {4});
  p.addContiguous(DType::Bool, [](int64_t) { return 0.0; });
  const double values[] = {1.0, NAN, INFINITY, 0.0};
  p.addContiguous(DType::Float, [&](int64_t j) { return values[j]; });
  ASSERT_EQ(host::unaryTable().unary(UnaryOp::IsNan, p.desc(), UnaryParams{}, stream_),
            rt::Error::Success);
  p.download();
  EXPECT_EQ(p.at(0, 0), 0);
  EXPECT_EQ(p.at(0, 1), 1);
  EXPECT_EQ(p.at(0, 2), 0);
  ASSERT_EQ(host::unaryTable().unary(UnaryOp::IsFinite, p.desc(), UnaryParams{}, stream_),
            rt::Error::Success);
  p.download();
  EXPECT_EQ(p.at(0, 0), 1);
  EXPECT_EQ(p.at(0, 1), 0);
  EXPECT_EQ(p.at(0, 2), 0);
  EXPECT_EQ(p.at(0, 3), 1);
  ASSERT_EQ(host::unaryTable().unary(UnaryOp::LogicalNot, p.desc(), UnaryParams{}, stream_),
            rt::Error::Success);
  p.download();
  EXPECT_EQ(p.at(0, 3), 1);
  EXPECT_EQ(p.at(0, 1), 0);  // NaN is true
  // A non-bool output of a predicate is a caller error.
  Problem q(this, {2});
  q.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  q.addContiguous(DType::Float, [](int64_t) { return 1.0; });
  EXPECT_EQ(host::unaryTable().unary(UnaryOp::IsNan, q.desc(), UnaryParams{}, stream_),
            rt::Error::InvalidValue);
}

}  // namespace
}  // namespace accel::kernels::testing
