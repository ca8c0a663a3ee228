// planReduce (kernels/reduce.h), the launch plan both drivers use for reductions: pure, so
// the CUDA plan is tested on any machine with an H200's numbers (132 SMs, CUDA's chunk floor).
#include <gtest/gtest.h>

#include "kernels/reduce.h"

namespace accel::kernels {
namespace {

constexpr int64_t kH200Sms = 132;
constexpr int64_t kCudaMinChunk = 16 * 256;  // cuda/reduce.cu: 16 elements per thread

void expectCovers(const ReducePlan& p, int64_t out_numel, int64_t red_numel) {
  EXPECT_EQ(p.workers, out_numel * p.splits);
  EXPECT_GE(p.splits, 1);
  EXPECT_GE(p.splits * p.chunk, red_numel);        // every element in a chunk
  EXPECT_LT((p.splits - 1) * p.chunk, red_numel);  // no chunk empty
}

TEST(ReducePlan, FullReductionOf2e28FillsAnH200) {
  const int64_t n = int64_t{1} << 28;
  const ReducePlan p = planReduce(1, n, kH200Sms, kCudaMinChunk);
  EXPECT_GE(p.workers, 4 * kH200Sms);  // >= 4 blocks per SM, not 1 block on 1 SM
  expectCovers(p, 1, n);
}

TEST(ReducePlan, FewOutputsSplitManyDoNot) {
  const ReducePlan few = planReduce(3, 1 << 20, kH200Sms, kCudaMinChunk);
  EXPECT_GE(few.workers, 4 * kH200Sms);
  expectCovers(few, 3, 1 << 20);
  const ReducePlan many = planReduce(100000, 4096, kH200Sms, kCudaMinChunk);
  EXPECT_EQ(many.splits, 1);  // enough blocks already: no second pass
  expectCovers(many, 100000, 4096);
}

TEST(ReducePlan, ChunksNeverFallBelowTheFloor) {
  for (int64_t red : {int64_t{8191}, int64_t{8192}, int64_t{100003}, int64_t{1} << 24}) {
    const ReducePlan p = planReduce(1, red, kH200Sms, kCudaMinChunk);
    expectCovers(p, 1, red);
    if (p.splits > 1) EXPECT_GE(p.chunk, kCudaMinChunk) << red;
    EXPECT_EQ(p.splits > 1, red >= 2 * kCudaMinChunk) << red;
  }
  const ReducePlan empty = planReduce(1, 0, kH200Sms, kCudaMinChunk);
  EXPECT_EQ(empty.splits, 1);
  EXPECT_EQ(empty.workers, 1);
}

}  // namespace
}  // namespace accel::kernels
