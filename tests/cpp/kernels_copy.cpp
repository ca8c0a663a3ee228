#include "kernels_testing.h"
#include "kernels/copy.h"

namespace accel::kernels::testing {
namespace {

// Values that exercise rounding to half/bfloat16, truncation, uint8 wrap-around and bool.
double sample(int64_t j) {
  static const double v[] = {0,   1,    -1,  2.5, -3.75, 0.1,     1.0 / 3, 100.3,  -100.7,
                             127, 1e-3, 0.5, 7,   -2,    65.4321, 3.14159, 2049.5, -0.0};
  return v[j % (sizeof v / sizeof v[0])];
}

class CopyTest : public KernelTest {
 protected:
  // Copies operand 1 into operand 0 and checks every element against roundTo.
  void runAndCheck(Problem& p, DType dst, DType src) {
    ASSERT_EQ(host::copyTable().copy(p.desc(), stream_), rt::Error::Success);
    p.download();
    for (int64_t i = 0; i < p.numel(); ++i) {
      const double expected = roundTo(dst, p.at(1, i));
      ASSERT_EQ(p.at(0, i), expected)
          << "element " << i << " src dtype " << int(src) << " dst dtype " << int(dst);
    }
  }
};

TEST_F(CopyTest, AllDTypePairsContiguous) {
  for (DType dst : allDTypes())
    for (DType src : allDTypes()) {
      Problem p(this, {7, 9});
      p.addContiguous(dst, [](int64_t) { return 42.0; });
      p.addContiguous(src, sample);
      runAndCheck(p, dst, src);
    }
}

TEST_F(CopyTest, AllDTypePairsTransposedAndBroadcast) {
  for (DType dst : allDTypes())
    for (DType src : allDTypes()) {
      Problem transposed(this, {13, 11});
      transposed.addContiguous(dst, [](int64_t) { return 0.0; });
      transposed.add(src, {11, 1}, sample);
      runAndCheck(transposed, dst, src);

      // Source broadcast along dimension 1 into a strided (every other element) destination.
      Problem broadcast(this, {5, 6});
      broadcast.add(dst, {2, 10}, [](int64_t) { return 0.0; });
      broadcast.add(src, {1, 0}, sample);
      runAndCheck(broadcast, dst, src);
    }
}

TEST_F(CopyTest, LargeTakesTheParallelPath) {
  const int64_t n = (int64_t(1) << 21) + 3;
  for (DType dst : {DType::Float, DType::Half, DType::BFloat16}) {
    Problem p(this, {n});
    p.addContiguous(dst, [](int64_t) { return 0.0; });
    p.addContiguous(DType::Float, [](int64_t j) { return sample(j) * double(j % 1000); });
    runAndCheck(p, dst, DType::Float);
  }
  Problem t(this, {1500, 1200});
  t.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  t.add(DType::Double, {1200, 1}, [](int64_t j) { return double(j) * 0.25; });
  runAndCheck(t, DType::Float, DType::Double);
}

TEST_F(CopyTest, ZeroDimAndEmpty) {
  Problem scalar(this, {});
  scalar.addContiguous(DType::Int32, [](int64_t) { return 0.0; });
  scalar.addContiguous(DType::Half, [](int64_t) { return -7.5; });
  runAndCheck(scalar, DType::Int32, DType::Half);
  EXPECT_EQ(scalar.at(0, 0), -7.0);

  Problem empty(this, {0, 4});
  empty.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  empty.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  EXPECT_EQ(host::copyTable().copy(empty.desc(), stream_), rt::Error::Success);
}

TEST_F(CopyTest, RejectsBadDescriptors) {
  Problem p(this, {4});
  p.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  p.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  ElementwiseDesc d = p.desc();
  d.op[1].dtype = static_cast<DType>(12);  // QInt8: no kernel takes it
  EXPECT_EQ(host::copyTable().copy(d, stream_), rt::Error::InvalidValue);
  d = p.desc();
  d.noperands = 3;
  EXPECT_EQ(host::copyTable().copy(d, stream_), rt::Error::InvalidValue);
}

}  // namespace
}  // namespace accel::kernels::testing
