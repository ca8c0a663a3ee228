// planBatchNorm (kernels/batch_norm.h), the chunks of the batch norm statistics pass: pure, so
// the CUDA plan is tested with an H200's numbers (cuda/geometry.h) and the host's with two
// threads.
#include <gtest/gtest.h>

#include "kernels/batch_norm.h"
#include "kernels/cuda/geometry.h"

namespace accel::kernels {
namespace {

const ScanGeometry kH200 = cuda::scanGeometry(132);
const ScanGeometry kHost2 = {2, 64, 32768, 64};  // host/plan_executor.h with 2 threads

// The chunks tile each channel's elements: none empty, none beyond the channel.
void expectCovers(const BatchNormPlan& p, int64_t per_channel) {
  ASSERT_GE(p.chunks, 1);
  EXPECT_GE(p.chunks * p.rows, per_channel);
  if (per_channel > 0) EXPECT_LT((p.chunks - 1) * p.rows, per_channel);
}

TEST(BatchNormPlan, HostKeepsAChannelWholeUpToItsGrain) {
  // A ResNet block's batch norm: 8 images of 32x32 in 16 channels, one task per channel.
  const BatchNormPlan p = planBatchNorm(16, 8 * 32 * 32, kHost2);
  EXPECT_EQ(p.chunks, 1);
  expectCovers(p, 8 * 32 * 32);
  // A long channel is cut into chunks of at least the grain.
  const BatchNormPlan q = planBatchNorm(2, 102400, kHost2);
  EXPECT_EQ(q.chunks, 3);
  EXPECT_GE(q.rows, kHost2.min_chunk);
  expectCovers(q, 102400);
}

TEST(BatchNormPlan, CudaFillsTheDevice) {
  // 64 channels of 32 x 56 x 56: enough chunk tasks for every SM, none shorter than a line.
  const int64_t per_channel = 32 * 56 * 56;
  const BatchNormPlan p = planBatchNorm(64, per_channel, kH200);
  EXPECT_GE(p.chunks * 64, 132 * cuda::kThreads);
  EXPECT_GE(p.rows, kH200.min_chunk);
  expectCovers(p, per_channel);
}

TEST(BatchNormPlan, EdgeSizes) {
  expectCovers(planBatchNorm(3, 0, kH200), 0);
  expectCovers(planBatchNorm(3, 1, kH200), 1);
  expectCovers(planBatchNorm(1, 31, kH200), 31);
  expectCovers(planBatchNorm(1000000, 2, kHost2), 2);
}

}  // namespace
}  // namespace accel::kernels
