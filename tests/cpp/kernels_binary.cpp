#include "kernels_testing.h"
#include "kernels/binary.h"

namespace accel::kernels::testing {
namespace {

Scalar floating(double f) { return Scalar{f, 0, false}; }
Scalar integral(int64_t i) { return Scalar{0, i, true}; }

double asDouble(Scalar s) { return s.is_integral ? double(s.i) : s.f; }

// Inputs that fit every integer dtype (uint8 gets non-negative ones) and are nonzero for b.
double sampleA(DType t, int64_t j) {
  const double v = double(j % 21) - (t == DType::UInt8 ? 0.0 : 10.0);
  return isIntegral(t) ? v : v * 0.37 + 0.125;
}
double sampleB(DType t, int64_t j) {
  double v = double(j % 5) + 1.0;          // 1..5
  if (t != DType::UInt8 && v > 2) v -= 6;  // -3..2 without 0
  return isIntegral(t) ? v : v * 1.3 - 0.07;
}

// Relative tolerance of a result in `t`, computed in its opmath type.
double eps(DType t) {
  switch (t) {
    case DType::Float: return 1e-6;
    case DType::Half: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Double: return 1e-14;
    default: return 0;
  }
}

class BinaryTest : public KernelTest {
 protected:
  // Runs out = a op b (operands 0, 1, 2 of p, or a in place when `in_place`) and checks every
  // element against a double reference rounded to the output dtype.
  void runAndCheck(Problem& p, BinaryOp op, Scalar alpha, bool in_place = false) {
    ElementwiseDesc d = p.desc();
    if (in_place) d.op[0] = d.op[1];
    const DType out = d.op[0].dtype;
    // The inputs as stored, before an in-place kernel overwrites them.
    std::vector<double> a(p.numel()), b(p.numel());
    for (int64_t i = 0; i < p.numel(); ++i) a[i] = p.at(1, i), b[i] = p.at(2, i);
    ASSERT_EQ(host::binaryTable().binary(op, d, alpha, stream_), rt::Error::Success);
    p.download();
    const double al = roundTo(out, asDouble(alpha));
    for (int64_t i = 0; i < p.numel(); ++i) {
      double r = 0, scale = 0;
      switch (op) {
        case BinaryOp::Add:
          r = a[i] + al * b[i];
          scale = std::abs(a[i]) + std::abs(al * b[i]);
          break;
        case BinaryOp::Sub:
          r = a[i] - al * b[i];
          scale = std::abs(a[i]) + std::abs(al * b[i]);
          break;
        case BinaryOp::Mul: r = a[i] * b[i]; break;
        case BinaryOp::Div: r = a[i] / b[i]; break;
      }
      const double expected = roundTo(out, r);
      const double got = p.at(in_place ? 1 : 0, i);
      ASSERT_NEAR(got, expected, eps(out) * (scale + std::abs(expected)))
          << "element " << i << " op " << int(op) << " dtype " << int(out) << " a=" << a[i]
          << " b=" << b[i];
    }
  }

  // Every op on every dtype it applies to, with alpha 2 (integers) or 0.5 (floating).
  template <class Build>
  void forEachCase(const Build& build) {
    for (DType t : allDTypes()) {
      if (t == DType::Bool) continue;
      const Scalar alpha = isIntegral(t) ? integral(2) : floating(0.5);
      for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
        if (op == BinaryOp::Div && isIntegral(t)) continue;
        build(t, op, alpha);
      }
    }
  }
};

TEST_F(BinaryTest, Contiguous) {
  forEachCase([&](DType t, BinaryOp op, Scalar alpha) {
    Problem p(this, {11, 7});
    p.addContiguous(t, [](int64_t) { return 0.0; });
    p.addContiguous(t, [&](int64_t j) { return sampleA(t, j); });
    p.addContiguous(t, [&](int64_t j) { return sampleB(t, j); });
    runAndCheck(p, op, alpha);
  });
}

TEST_F(BinaryTest, BroadcastAndTransposed) {
  forEachCase([&](DType t, BinaryOp op, Scalar alpha) {
    Problem p(this, {9, 6});
    p.addContiguous(t, [](int64_t) { return 0.0; });
    p.add(t, {6, 1}, [&](int64_t j) { return sampleA(t, j); });  // transposed
    p.add(t, {1, 0}, [&](int64_t j) { return sampleB(t, j); });  // broadcast along dim 1
    runAndCheck(p, op, alpha);

    Problem row(this, {9, 6});
    row.addContiguous(t, [](int64_t) { return 0.0; });
    row.addContiguous(t, [&](int64_t j) { return sampleA(t, j); });
    row.add(t, {0, 0}, [&](int64_t) { return sampleB(t, 3); });  // a 0-dim tensor
    runAndCheck(row, op, alpha);
  });
}

TEST_F(BinaryTest, MixedInputDTypes) {
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
    Problem p(this, {33});
    p.addContiguous(DType::Float, [](int64_t) { return 0.0; });
    p.addContiguous(DType::Half, [](int64_t j) { return sampleA(DType::Half, j); });
    p.addContiguous(DType::Int32, [](int64_t j) { return sampleB(DType::Int32, j); });
    runAndCheck(p, op, floating(1.5));

    Problem q(this, {4, 8});
    q.add(DType::BFloat16, {8, 1}, [](int64_t) { return 0.0; });
    q.addContiguous(DType::Float, [](int64_t j) { return sampleA(DType::Float, j); });
    q.add(DType::Double, {0, 1}, [](int64_t j) { return sampleB(DType::Double, j); });
    runAndCheck(q, op, floating(-2.0));
  }
}

TEST_F(BinaryTest, BoolIsLogical) {
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Mul}) {
    Problem p(this, {2, 2});
    p.addContiguous(DType::Bool, [](int64_t) { return 0.0; });
    p.addContiguous(DType::Bool, [](int64_t j) { return double(j & 1); });
    p.addContiguous(DType::Bool, [](int64_t j) { return double(j >> 1); });
    runAndCheck(p, op, integral(1));
  }
}

TEST_F(BinaryTest, IntegerDivIsNotSupported) {
  Problem p(this, {3});
  for (int k = 0; k < 3; ++k) p.addContiguous(DType::Int64, [](int64_t) { return 1.0; });
  EXPECT_EQ(host::binaryTable().binary(BinaryOp::Div, p.desc(), integral(1), stream_),
            rt::Error::NotSupported);
}

TEST_F(BinaryTest, LargeAndInPlace) {
  const int64_t n = (int64_t(1) << 22) + 9;
  for (DType t : {DType::Float, DType::BFloat16, DType::Int64}) {
    const Scalar alpha = isIntegral(t) ? integral(3) : floating(0.25);
    Problem p(this, {n});
    p.addContiguous(t, [](int64_t) { return 0.0; });
    p.addContiguous(t, [&](int64_t j) { return sampleA(t, j); });
    p.addContiguous(t, [&](int64_t j) { return sampleB(t, j); });
    runAndCheck(p, BinaryOp::Add, alpha);
    runAndCheck(p, BinaryOp::Sub, alpha, /*in_place=*/true);
  }
  Problem strided(this, {2048, 2049});
  strided.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  strided.add(DType::Float, {2049, 1}, [](int64_t j) { return sampleA(DType::Float, j); });
  strided.add(DType::Float, {0, 1}, [](int64_t j) { return sampleB(DType::Float, j); });
  runAndCheck(strided, BinaryOp::Mul, floating(1));
}

// The same-dtype ops after Div, against double references (exactly representable inputs).
TEST_F(BinaryTest, TypedOpsMatchReferences) {
  struct Case {
    BinaryOp op;
    double (*ref)(double, double);
  };
  const Case cases[] = {
      {BinaryOp::Maximum, [](double a, double b) { return std::max(a, b); }},
      {BinaryOp::Minimum, [](double a, double b) { return std::min(a, b); }},
      {BinaryOp::DivFloor, [](double a, double b) { return std::floor(a / b); }},
      {BinaryOp::DivTrunc, [](double a, double b) { return std::trunc(a / b); }},
      {BinaryOp::Remainder, [](double a, double b) { return a - b * std::floor(a / b); }},
      {BinaryOp::Fmod, [](double a, double b) { return std::fmod(a, b); }},
      {BinaryOp::Pow,
       [](double a, double b) {
         return b < 0 ? (a == 1 ? 1.0 : a == -1 ? std::pow(a, b) : 0.0) : std::pow(a, b);
       }},
  };
  for (DType t : {DType::Float, DType::Double, DType::Int64, DType::Int32, DType::Int16}) {
    for (const Case& c : cases) {
      if (c.op == BinaryOp::Pow && !isIntegral(t)) continue;  // integer pow semantics only
      Problem p(this, {7, 3});
      p.addContiguous(t, [](int64_t) { return 0.0; });
      p.addContiguous(t, [&](int64_t j) { return double(j % 9) - 4; });
      p.add(t, {0, 1},
            [&](int64_t j) { return double(j) - 1 == 0 ? 2.0 : double(j) - 1; });  // -1, 2, 1
      ASSERT_EQ(host::binaryTable().binary(c.op, p.desc(), integral(1), stream_),
                rt::Error::Success);
      p.download();
      for (int64_t i = 0; i < p.numel(); ++i)
        ASSERT_EQ(p.at(0, i), roundTo(t, c.ref(p.at(1, i), p.at(2, i))))
            << "op " << int(c.op) << " dtype " << int(t) << " a=" << p.at(1, i)
            << " b=" << p.at(2, i);
    }
  }
  // Mixed input dtypes are the aten layer's job for these ops.
  Problem m(this, {3});
  m.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  m.addContiguous(DType::Float, [](int64_t) { return 1.0; });
  m.addContiguous(DType::Int32, [](int64_t) { return 1.0; });
  EXPECT_EQ(host::binaryTable().binary(BinaryOp::Maximum, m.desc(), integral(1), stream_),
            rt::Error::InvalidValue);
}

TEST_F(BinaryTest, ActivationBackward) {
  Problem p(this, {11});
  p.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  p.addContiguous(DType::Float, [](int64_t j) { return 1.0 + j * 0.125; });  // grad
  p.addContiguous(DType::Float, [](int64_t j) { return j * 0.25 - 1.25; });  // input
  ASSERT_EQ(host::binaryTable().binary(BinaryOp::ThresholdBackward, p.desc(), floating(0), stream_),
            rt::Error::Success);
  p.download();
  for (int64_t i = 0; i < 11; ++i) ASSERT_EQ(p.at(0, i), p.at(2, i) <= 0 ? 0.0 : p.at(1, i));
  ASSERT_EQ(host::binaryTable().binary(BinaryOp::SiluBackward, p.desc(), floating(0), stream_),
            rt::Error::Success);
  p.download();
  for (int64_t i = 0; i < 11; ++i) {
    const double g = p.at(1, i), x = p.at(2, i), s = 1 / (1 + std::exp(-x));
    ASSERT_NEAR(p.at(0, i), g * s * (1 + x * (1 - s)), 1e-5);
  }
}

}  // namespace
}  // namespace accel::kernels::testing
