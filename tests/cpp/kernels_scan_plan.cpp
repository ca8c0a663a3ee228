// planScan, planCarries and planCompact (kernels/scan_plan.h, kernels/index.h), the launch
// plans both drivers use for the scans and the ordered compactions: pure, so the CUDA plan is
// tested on any machine with an H200's numbers (132 SMs, cuda/geometry.h).
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "kernels/cuda/geometry.h"
#include "kernels/index.h"
#include "kernels/scan_plan.h"

namespace accel::kernels {
namespace {

constexpr int64_t kH200Sms = 132;
constexpr int64_t kResidentThreads = 2048;  // per SM of an H200
// Threads per SM that keep HBM busy (benchmarks/gpu_cost_estimate.py's model).
constexpr int64_t kBusyThreads = 1024;
constexpr int64_t k2e24 = int64_t{1} << 24;
const ScanGeometry kH200 = cuda::scanGeometry(kH200Sms);

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

// Every level of carries folds fan_in states of the level below; the top one fits a task.
void expectCarryLevels(const CarryPlan& c, int64_t lines, int64_t count) {
  ASSERT_GE(c.levels, 1);
  EXPECT_EQ(c.count[0], count);
  int64_t states = 0;
  for (int l = 0; l < c.levels; ++l) {
    EXPECT_EQ(c.offset[l], states);
    states += lines * c.count[l];
    if (l > 0) EXPECT_EQ(c.count[l], (c.count[l - 1] + c.fan_in - 1) / c.fan_in);
  }
  EXPECT_EQ(c.states, states);
  EXPECT_LE(c.count[c.levels - 1], c.fan_in);
}

TEST(ScanPlan, OneLongLineFillsAnH200) {
  const ScanPlan p = planScan(1, k2e24, 1, kH200);
  // Every resident thread of every SM has a chunk, and a chunk is a short walk.
  EXPECT_GE(p.tasks, kResidentThreads * kH200Sms);
  EXPECT_GE(p.chunk, kH200.min_chunk);
  EXPECT_LE(p.chunk, 64);
  expectCovers(p, 1, k2e24);
  // The carries: no pass has one thread walk more than fan_in states.
  const CarryPlan c = planCarries(1, p.chunks, kH200.fan_in);
  expectCarryLevels(c, 1, p.chunks);
  EXPECT_LE(kH200.fan_in, 16);
  EXPECT_LE(c.levels, 8);
}

TEST(ScanPlan, ManyShortLinesKeepATaskPerLine) {
  const ScanPlan p = planScan(100000, 16, 3, kH200);
  EXPECT_EQ(p.chunks, 1);
  EXPECT_EQ(p.tasks, 300000);
  expectCovers(p, 300000, 16);
  // Enough lines to fill the machine, however long: still one pass.
  const ScanPlan long_lines = planScan(kH200.tasks_per_unit * kH200Sms, 1 << 16, 1, kH200);
  EXPECT_EQ(long_lines.chunks, 1);
}

TEST(ScanPlan, FewLinesWithInnerSplitAndTile) {
  const ScanPlan p = planScan(1, 1 << 20, 8, kH200);
  EXPECT_GT(p.chunks, 1);
  EXPECT_GE(p.tasks, kBusyThreads * kH200Sms);
  expectCovers(p, 8, 1 << 20);
  expectCarryLevels(planCarries(8, p.chunks, kH200.fan_in), 8, p.chunks);
  // A LoRA step's [4096, 768] scanned along its rows: split, with every SM busy.
  const ScanPlan rows = planScan(4096, 768, 1, kH200);
  EXPECT_GT(rows.chunks, 1);
  EXPECT_GE(rows.tasks, kBusyThreads * kH200Sms / 2);
  expectCovers(rows, 4096, 768);
  // Small shapes, tiled exactly: odd lengths, inner > 1, a line of one chunk.
  for (auto [outer, n, inner] :
       {std::array<int64_t, 3>{2, 1001, 3}, {1, 513, 1}, {3, 7, 2}, {1, 1, 1}, {2, 512, 1}}) {
    const ScanPlan q = planScan(outer, n, inner, {4, 64, 256, 8});
    expectCovers(q, outer * inner, n);
    expectTasksTile(q, outer, n, inner);
  }
}

TEST(ScanPlan, ChunksNeverFallBelowTheFloor) {
  for (int64_t n : {int64_t{63}, int64_t{64}, int64_t{100003}, k2e24}) {
    const ScanPlan p = planScan(1, n, 1, kH200);
    expectCovers(p, 1, n);
    if (p.chunks > 1) {
      EXPECT_GE(p.chunk, kH200.min_chunk) << n;
    }
    EXPECT_EQ(p.chunks > 1, n >= 2 * kH200.min_chunk) << n;
  }
  EXPECT_EQ(planScan(1, 0, 1, kH200).tasks, 0);
  EXPECT_EQ(planScan(0, 10, 1, kH200).tasks, 0);
}

TEST(CarryPlan, LevelsFoldUntilOneTaskPerLine) {
  expectCarryLevels(planCarries(3, 1000, 8), 3, 1000);
  EXPECT_EQ(planCarries(3, 1000, 8).levels, 4);  // 1000, 125, 16, 2
  EXPECT_EQ(planCarries(1, 8, 8).levels, 1);     // fits one task already
  EXPECT_EQ(planCarries(1, 9, 8).levels, 2);
  expectCarryLevels(planCarries(2, 12345, 2), 2, 12345);
  // The level cap keeps every level's states counted; the top task just walks more.
  const CarryPlan capped = planCarries(1, int64_t{1} << 40, 2);
  EXPECT_EQ(capped.levels, kMaxCarryLevels);
  EXPECT_EQ(planCarries(0, 10, 8).states, 0);
}

TEST(CompactPlan, NonzeroCountAndBoundsOf2e24FillAnH200) {
  // nonzero, its count and index bounds share one plan: one line of numel elements.
  const ScanPlan p = planCompact(k2e24, kH200);
  EXPECT_GE(p.tasks, kResidentThreads * kH200Sms);
  EXPECT_EQ(p.tasks, p.chunks);
  expectCovers(p, 1, k2e24);
  expectCarryLevels(planCarries(1, p.tasks + 1, kH200.fan_in), 1, p.tasks + 1);
  const ScanGeometry small{4, 64, 256, 8};
  const ScanPlan odd = planCompact(3 * 1000 + 7, small);
  expectCovers(odd, 1, 3007);
  expectTasksTile(odd, 1, 3007, 1);
  EXPECT_EQ(planCompact(0, kH200).tasks, 0);
}

}  // namespace
}  // namespace accel::kernels
