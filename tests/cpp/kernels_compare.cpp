#include "kernels_testing.h"
#include "kernels/compare.h"

namespace accel::kernels::testing {
namespace {

bool reference(CompareOp op, double a, double b) {
  switch (op) {
    case CompareOp::Eq: return a == b;
    case CompareOp::Ne: return a != b;
    case CompareOp::Lt: return a < b;
    case CompareOp::Le: return a <= b;
    case CompareOp::Gt: return a > b;
    case CompareOp::Ge: return a >= b;
    case CompareOp::LogicalAnd: return a != 0 && b != 0;
    case CompareOp::LogicalOr: return a != 0 || b != 0;
    case CompareOp::LogicalXor: return (a != 0) != (b != 0);
  }
  return false;
}

const CompareOp kOps[] = {CompareOp::Eq,         CompareOp::Ne,        CompareOp::Lt,
                          CompareOp::Le,         CompareOp::Gt,        CompareOp::Ge,
                          CompareOp::LogicalAnd, CompareOp::LogicalOr, CompareOp::LogicalXor};

class CompareTest : public KernelTest {};

TEST_F(CompareTest, TensorTensorEveryDTypeWithBroadcast) {
  for (DType t : allDTypes()) {
    for (CompareOp op : kOps) {
      Problem p(this, {6, 4});
      p.addContiguous(DType::Bool, [](int64_t) { return 0.0; });
      p.addContiguous(t, [&](int64_t j) {
        return t == DType::Bool ? double(j & 1) : double(j % 5) - (t == DType::UInt8 ? 0 : 2);
      });
      p.add(t, {0, 1},
            [&](int64_t j) { return t == DType::Bool ? double(j >> 1 & 1) : double(j % 3); });
      ASSERT_EQ(host::compareTable().compare(op, p.desc(), stream_), rt::Error::Success);
      p.download();
      for (int64_t i = 0; i < p.numel(); ++i)
        ASSERT_EQ(p.at(0, i), reference(op, p.at(1, i), p.at(2, i)) ? 1.0 : 0.0)
            << "op " << int(op) << " dtype " << int(t) << " i " << i;
    }
  }
}

TEST_F(CompareTest, ScalarRhsAndMismatchedInputsRejected) {
  for (CompareOp op : kOps) {
    Problem p(this, {9});
    p.addContiguous(DType::Bool, [](int64_t) { return 0.0; });
    p.addContiguous(DType::BFloat16, [](int64_t j) { return double(j) * 0.5 - 2; });
    ASSERT_EQ(host::compareTable().compare_scalar(op, p.desc(), Scalar{0.5, 0, false}, stream_),
              rt::Error::Success);
    p.download();
    for (int64_t i = 0; i < 9; ++i)
      ASSERT_EQ(p.at(0, i), reference(op, p.at(1, i), 0.5) ? 1.0 : 0.0);
  }
  Problem q(this, {3});
  q.addContiguous(DType::Bool, [](int64_t) { return 0.0; });
  q.addContiguous(DType::Float, [](int64_t) { return 1.0; });
  q.addContiguous(DType::Int32, [](int64_t) { return 1.0; });
  EXPECT_EQ(host::compareTable().compare(CompareOp::Eq, q.desc(), stream_),
            rt::Error::InvalidValue);
}

}  // namespace
}  // namespace accel::kernels::testing
