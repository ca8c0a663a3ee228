#include "kernels_testing.h"

#include "kernels/fill.h"
#include "kernels/copy.h"

namespace accel::kernels::testing {
namespace {

using FillTest = KernelTest;

Scalar floating(double f) { return Scalar{f, 0, false}; }
Scalar integral(int64_t i) { return Scalar{0, i, true}; }

TEST_F(FillTest, EveryDType) {
  const struct {
    Scalar value;
    double as_double;
  } cases[] = {{floating(2.5), 2.5}, {floating(0.1), 0.1}, {floating(-0.0), 0.0},
               {integral(-3), -3.0}, {integral(0), 0.0},   {integral(100), 100.0}};
  for (DType t : allDTypes())
    for (const auto& c : cases) {
      Problem p(this, {1000});
      p.addContiguous(t, [](int64_t) { return 1.0; });
      ASSERT_EQ(host::copyTable().fill(p.desc(), c.value, stream_), rt::Error::Success);
      p.download();
      const double expected = roundTo(t, c.as_double);
      for (int64_t i = 0; i < p.numel(); ++i)
        ASSERT_EQ(p.at(0, i), expected) << "dtype " << int(t) << " value " << c.as_double;
    }
}

TEST_F(FillTest, StridedLeavesGapsAlone) {
  Problem p(this, {3, 50});
  p.add(DType::BFloat16, {2, 7}, [](int64_t) { return -1.0; });
  ASSERT_EQ(host::copyTable().fill(p.desc(), floating(0.3), stream_), rt::Error::Success);
  p.download();
  std::vector<bool> written(p.storageSize(0), false);
  for (int64_t i = 0; i < p.numel(); ++i) written[p.storageIndex(0, i)] = true;
  for (int64_t j = 0; j < p.storageSize(0); ++j)
    ASSERT_EQ(p.storage(0, j), written[j] ? roundTo(DType::BFloat16, 0.3) : -1.0) << j;
}

TEST_F(FillTest, LargeTakesTheParallelPath) {
  Problem p(this, {(int64_t(1) << 22) + 5});
  p.addContiguous(DType::Float, [](int64_t) { return 0.0; });
  ASSERT_EQ(host::copyTable().fill(p.desc(), integral(7), stream_), rt::Error::Success);
  p.download();
  for (int64_t i = 0; i < p.numel(); ++i) ASSERT_EQ(p.at(0, i), 7.0) << i;
}

TEST(FillScalar, ConvertsLikeAnElementCast) {
  EXPECT_EQ(scalarAs<uint8_t>(integral(-3)), 253);
  EXPECT_EQ(scalarAs<uint8_t>(floating(-3.7)), 253);
  EXPECT_TRUE(scalarAs<bool>(floating(std::nan(""))));
  EXPECT_EQ(scalarAs<int32_t>(floating(-2.9)), -2);
}

}  // namespace
}  // namespace accel::kernels::testing
