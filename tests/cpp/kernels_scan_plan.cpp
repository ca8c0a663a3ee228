// planScan and planCompact (kernels/scan_plan.h, kernels/index.h), the launch plans both
// drivers use for the scans and the ordered compactions: pure, so the CUDA plan is tested on
// any machine with an H200's numbers (132 SMs, CUDA's chunk floor).
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "kernels/index.h"
#include "kernels/scan_plan.h"

namespace accel::kernels {
namespace {

constexpr int64_t kH200Sms = 132;
constexpr int64_t kCudaMinChunk = 256;  // cuda/plan_executor.cuh
constexpr int64_t k2e24 = int64_t{1} << 24;

void expectCovers(const ScanPlan& p, int64_t lines, int64_t n) {
  EXPECT_EQ(p.tasks, lines * p.chunks);
  EXPECT_GE(p.chunks, 1);
  EXPECT_GE(p.chunks * p.chunk, n);        // every element in a chunk
  EXPECT_LT((p.chunks - 1) * p.chunk, n);  // no chunk empty
}

// Every element of every line lies in exactly one task's range, in line order.
void expectTasksTile(const ScanPlan& p, int64_t outer, int64_t n, int64_t inner) {
  std::vector<int64_t> seen(outer * n * inner, 0);
  for (int64_t t = 0; t < p.tasks; ++t) {
    const ScanTask k = scanTask(p, n, inner, t);
    ASSERT_LT(k.begin, k.end);
    for (int64_t j = k.begin; j < k.end; ++j) ++seen[k.first + j * inner];
  }
  for (int64_t e = 0; e < int64_t(seen.size()); ++e) ASSERT_EQ(seen[e], 1) << e;
}

TEST(ScanPlan, OneLongLineFillsAnH200) {
  const ScanPlan p = planScan(1, k2e24, 1, kH200Sms, kCudaMinChunk);
  EXPECT_GT(p.tasks, 1);             // not one thread for the whole line
  EXPECT_GE(p.tasks, 4 * kH200Sms);  // >= 4 workers per SM
  EXPECT_GE(p.chunk, kCudaMinChunk);
  expectCovers(p, 1, k2e24);
}

TEST(ScanPlan, ManyShortLinesKeepATaskPerLine) {
  const ScanPlan p = planScan(100000, 64, 3, kH200Sms, kCudaMinChunk);
  EXPECT_EQ(p.chunks, 1);
  EXPECT_EQ(p.tasks, 300000);
  expectCovers(p, 300000, 64);
  // Enough lines to fill the machine, however long: still one pass.
  const ScanPlan long_lines = planScan(kScanTasksPerUnit * kH200Sms, 1 << 16, 1, kH200Sms, 256);
  EXPECT_EQ(long_lines.chunks, 1);
}

TEST(ScanPlan, FewLinesWithInnerSplitAndTile) {
  const ScanPlan p = planScan(1, 1 << 20, 8, kH200Sms, kCudaMinChunk);
  EXPECT_GT(p.chunks, 1);
  EXPECT_GE(p.tasks, 4 * kH200Sms);
  expectCovers(p, 8, 1 << 20);
  // Small shapes, tiled exactly: odd lengths, inner > 1, a line of one chunk.
  for (auto [outer, n, inner] :
       {std::array<int64_t, 3>{2, 1001, 3}, {1, 513, 1}, {3, 7, 2}, {1, 1, 1}, {2, 512, 1}}) {
    const ScanPlan q = planScan(outer, n, inner, 4, 256);
    expectCovers(q, outer * inner, n);
    expectTasksTile(q, outer, n, inner);
  }
}

TEST(ScanPlan, ChunksNeverFallBelowTheFloor) {
  for (int64_t n : {int64_t{511}, int64_t{512}, int64_t{100003}, k2e24}) {
    const ScanPlan p = planScan(1, n, 1, kH200Sms, kCudaMinChunk);
    expectCovers(p, 1, n);
    if (p.chunks > 1) {
      EXPECT_GE(p.chunk, kCudaMinChunk) << n;
    }
    EXPECT_EQ(p.chunks > 1, n >= 2 * kCudaMinChunk) << n;
  }
  EXPECT_EQ(planScan(1, 0, 1, kH200Sms, kCudaMinChunk).tasks, 0);
  EXPECT_EQ(planScan(0, 10, 1, kH200Sms, kCudaMinChunk).tasks, 0);
}

TEST(CompactPlan, NonzeroCountAndBoundsOf2e24FillAnH200) {
  // nonzero, its count and index bounds share one plan: one line of numel elements.
  const ScanPlan p = planCompact(k2e24, kH200Sms, kCudaMinChunk);
  EXPECT_GE(p.tasks, 4 * kH200Sms);
  EXPECT_EQ(p.tasks, p.chunks);
  expectCovers(p, 1, k2e24);
  const ScanPlan odd = planCompact(3 * 1000 + 7, 4, 256);
  expectCovers(odd, 1, 3007);
  expectTasksTile(odd, 1, 3007, 1);
  EXPECT_EQ(planCompact(0, kH200Sms, kCudaMinChunk).tasks, 0);
}

}  // namespace
}  // namespace accel::kernels
