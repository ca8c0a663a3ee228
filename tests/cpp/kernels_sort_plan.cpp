// planSort (kernels/sort.h), the launch plan of the merge sort both drivers run: pure, so the
// CUDA plan is tested on any machine with an H200's numbers (132 SMs, CUDA's tasks per SM).
#include <gtest/gtest.h>

#include <vector>

#include "kernels/sort.h"

namespace accel::kernels {
namespace {

constexpr int64_t kH200Sms = 132;
constexpr int64_t kCudaTasksPerSm = 512;  // cuda/plan_executor.cuh: kSortTasksPerUnit
constexpr int64_t kH200Units = kH200Sms * kCudaTasksPerSm;

// Every key of every slice is written by exactly one task, in the tile sort and in every merge
// pass, and each tile lies inside one pair of runs of every pass.
void expectTilesCover(const SortPlan& p, int64_t nslices, int64_t n) {
  ASSERT_GT(p.tile, 0);
  EXPECT_EQ(p.tile & (p.tile - 1), 0) << "a power of two";
  EXPECT_EQ(p.tasks, nslices * p.tiles_per_slice);
  std::vector<int> writes(nslices * n, 0);
  for (int64_t task = 0; task < p.tasks; ++task) {
    const SortTile t = sortTile(p, n, task);
    ASSERT_LT(t.lo, t.hi) << "no empty tile";
    ASSERT_LE(t.hi, n);
    ASSERT_EQ(t.base % n, 0);
    for (int64_t i = t.lo; i < t.hi; ++i) ++writes[t.base + i];
    for (int64_t w = p.tile; w < n; w *= 2) EXPECT_EQ(t.lo / (2 * w), (t.hi - 1) / (2 * w));
  }
  for (size_t i = 0; i < writes.size(); ++i) ASSERT_EQ(writes[i], 1) << "key " << i;
  // The passes take runs of one tile to runs of the whole slice.
  EXPECT_GE(p.tile << p.passes, n);
  if (p.passes > 0) {
    EXPECT_LT(p.tile << (p.passes - 1), n);
  }
}

TEST(SortPlan, OneLongSortKeepsAnH200BusyInEveryPass) {
  const int64_t n = int64_t{1} << 24;
  const SortPlan p = planSort(1, n, kH200Units);
  // Every launch (the tile sort and each merge pass) has the same tasks: no serial last pass.
  EXPECT_GE(p.tasks, 4 * kH200Sms);
  EXPECT_GE(p.tasks, kH200Units);  // a task for every thread the plan asked for
  EXPECT_LT(p.passes + 1, 24);     // fewer launches than one per doubling of the runs
  EXPECT_EQ(p.tiles_per_slice * p.tile, n);
}

TEST(SortPlan, ShortSlicesAreOneLaunch) {
  const SortPlan many = planSort(1 << 20, 5, kH200Units);
  EXPECT_EQ(many.passes, 0);
  EXPECT_EQ(many.tasks, 1 << 20);  // a task per slice, sorting its 5 keys
  EXPECT_EQ(many.tile, kSortMinTile);
  const SortPlan rows = planSort(4096, 1024, kH200Units);
  EXPECT_GE(rows.tasks, kH200Units);
  EXPECT_LE(rows.passes, 5);
  const SortPlan one_tile = planSort(100000, 300, 1);
  EXPECT_EQ(one_tile.passes, 0);
  EXPECT_EQ(one_tile.tasks, 100000);
}

TEST(SortPlan, TheHostKeepsLongTiles) {
  // The host plans one task per thread (kSortTasksPerUnit 1): the longest tiles, fewest passes.
  for (int64_t threads : {1, 2, 16}) {
    const SortPlan p = planSort(1, int64_t{1} << 22, threads);
    EXPECT_EQ(p.tile, kSortMaxTile);
    EXPECT_EQ(p.passes, 22 - 9);
  }
}

TEST(SortPlan, TilesCoverEveryKeyOnce) {
  for (int64_t units : {int64_t{1}, int64_t{16}, kH200Units}) {
    for (auto [nslices, n] : std::vector<std::pair<int64_t, int64_t>>{{1, 1},
                                                                      {1, 2},
                                                                      {3, 17},
                                                                      {1, 511},
                                                                      {1, 512},
                                                                      {1, 513},
                                                                      {2, 1000},
                                                                      {1, 4096},
                                                                      {5, 5000},
                                                                      {1, 100003},
                                                                      {64, 1024},
                                                                      {1000, 33}}) {
      SCOPED_TRACE(testing::Message() << nslices << " x " << n << ", units " << units);
      expectTilesCover(planSort(nslices, n, units), nslices, n);
    }
  }
  const SortPlan empty = planSort(0, 10, kH200Units);
  EXPECT_EQ(empty.tasks, 0);
  EXPECT_EQ(planSort(10, 0, kH200Units).tasks, 0);
}

}  // namespace
}  // namespace accel::kernels
