#include "kernels_testing.h"
#include "kernels/ternary.h"

namespace accel::kernels::testing {
namespace {

class TernaryTest : public KernelTest {};

TEST_F(TernaryTest, WhereBroadcastsTheCondition) {
  for (DType t : {DType::Float, DType::Half, DType::Int64, DType::Bool}) {
    Problem p(this, {5, 3});
    p.addContiguous(t, [](int64_t) { return 0.0; });
    p.add(DType::Bool, {1, 0}, [](int64_t j) { return double(j % 2); });
    p.addContiguous(t, [](int64_t j) { return double(j % 2 == 0); });
    p.add(t, {0, 0}, [](int64_t) { return 1.0; });
    ASSERT_EQ(host::ternaryTable().ternary(TernaryOp::Where, p.desc(), Scalar{}, stream_),
              rt::Error::Success);
    p.download();
    for (int64_t i = 0; i < p.numel(); ++i)
      ASSERT_EQ(p.at(0, i), p.at(1, i) != 0 ? p.at(2, i) : p.at(3, i));
  }
}

TEST_F(TernaryTest, AddcmulAddcdivLerpClamp) {
  for (DType t : {DType::Float, DType::Double, DType::BFloat16}) {
    const double tol = t == DType::BFloat16 ? 2e-2 : 1e-6;
    for (TernaryOp op :
         {TernaryOp::Addcmul, TernaryOp::Addcdiv, TernaryOp::Lerp, TernaryOp::Clamp}) {
      Problem p(this, {17});
      p.addContiguous(t, [](int64_t) { return 0.0; });
      p.addContiguous(t, [](int64_t j) { return double(j) * 0.3 - 2; });
      p.addContiguous(t, [](int64_t j) { return double(j % 5) * 0.2 - 0.5; });
      p.addContiguous(t, [](int64_t j) { return double(j % 4) * 0.25 + 0.5; });
      ASSERT_EQ(host::ternaryTable().ternary(op, p.desc(), Scalar{0.5, 0, false}, stream_),
                rt::Error::Success);
      p.download();
      for (int64_t i = 0; i < p.numel(); ++i) {
        const double a = p.at(1, i), b = p.at(2, i), c = p.at(3, i);
        double r = 0;
        switch (op) {
          case TernaryOp::Addcmul: r = a + 0.5 * b * c; break;
          case TernaryOp::Addcdiv: r = a + 0.5 * b / c; break;
          case TernaryOp::Lerp: r = a + c * (b - a); break;
          case TernaryOp::Clamp: r = std::min(std::max(a, b), c); break;
          default: break;
        }
        ASSERT_NEAR(p.at(0, i), roundTo(t, r), tol * (std::abs(r) + 1)) << "op " << int(op);
      }
    }
  }
}

TEST_F(TernaryTest, MaskedFill) {
  Problem p(this, {4, 4});
  p.addContiguous(DType::Int32, [](int64_t) { return 0.0; });
  p.add(DType::Bool, {0, 1}, [](int64_t j) { return double(j == 2); });
  p.addContiguous(DType::Int32, [](int64_t j) { return double(j); });
  ASSERT_EQ(host::ternaryTable().masked_fill(p.desc(), Scalar{0, -9, true}, stream_),
            rt::Error::Success);
  p.download();
  for (int64_t i = 0; i < 16; ++i) ASSERT_EQ(p.at(0, i), i / 4 == 2 ? -9.0 : double(i));
}

}  // namespace
}  // namespace accel::kernels::testing
