// planReduce and planColumns (kernels/reduce.h), the launch plans both drivers use for
// reductions: pure, so the CUDA plan is tested on any machine with an H200's numbers (132 SMs,
// CUDA's chunk floor).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/geometry.h"
#include "kernels/reduce.h"

namespace accel::kernels {
namespace {

constexpr int64_t kH200Sms = 132;
constexpr int64_t kCudaMinChunk = cuda::kReduceMinChunk;

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

// Column reductions (sum(0), bias gradients): one output per CUDA thread, a chunk of rows
// each, so adjacent threads read adjacent addresses and the grid fills the machine.
TEST(ColumnPlan, BiasGradientsFillAnH200) {
  const ColumnPlan big = planColumns(4096, 4096, 65536, /*lanes=*/1);
  EXPECT_EQ(big.rows, kCascade);  // enough workers already: the longest chunks
  EXPECT_EQ(big.chunks, 65536 / kCascade);
  EXPECT_EQ(big.workers, big.chunks * 4096);
  EXPECT_GE(big.workers, 4 * kH200Sms * 256);  // >= 4 full blocks of threads per SM
  // A LoRA step's [4096 tokens, 768]: shorter chunks, so every SM still gets 4 blocks.
  const ColumnPlan lora = planColumns(768, 768, 4096, 1);
  EXPECT_EQ(lora.rows, kColumnMinChunk);
  EXPECT_GE(lora.workers, 4 * kH200Sms * 256);
  EXPECT_GE(lora.rows * lora.chunks, 4096);
}

TEST(ColumnPlan, GroupsAndChunksCoverEveryElementOnce) {
  // 100 columns in lanes of 64 (the host): two groups per kept row, the second of 36.
  const ColumnPlan p = planColumns(3 * 100, 100, 1000, 64);
  EXPECT_EQ(p.groups, 3 * 2);
  EXPECT_EQ(p.rows, kColumnMinChunk);
  EXPECT_EQ(p.chunks, 63);  // 62 full chunks and one of 8 rows
  EXPECT_EQ(p.workers, 63 * 6);
  for (int64_t red : {int64_t{1}, int64_t{17}, int64_t{255}, int64_t{257}, int64_t{100003}}) {
    const ColumnPlan q = planColumns(64, 64, red, 1);
    EXPECT_GE(q.rows * q.chunks, red) << red;
    EXPECT_LT((q.chunks - 1) * q.rows, red) << red;  // no empty chunk
    EXPECT_LE(q.rows, kCascade) << red;
  }
  EXPECT_EQ(planColumns(70, 70, kColumnMinChunk, 1).chunks, 1);  // a single pass writes
}

TEST(ColumnPlan, OnlyDenseRunsOfOutputsTakeIt) {
  ReduceDesc d;
  d.out_ndim = 1;
  d.out_sizes[0] = 4096;
  d.in_out_strides[0] = 4;  // float columns, adjacent
  d.red_ndim = 1;
  d.red_sizes[0] = 8192;
  d.in_red_strides[0] = 4096 * 4;
  d.red_numel = 8192;
  d.out_numel = 4096;
  EXPECT_TRUE(isColumnReduce(d, 4));   // sum(0) of [8192, 4096]
  EXPECT_FALSE(isColumnReduce(d, 2));  // the same strides are not dense for 2-byte elements
  d.in_red_strides[0] = 0;             // an expanded input: the reduced dim steps inside the run
  EXPECT_FALSE(isColumnReduce(d, 4));
  d.in_red_strides[0] = 4096 * 4;
  d.in_out_strides[0] = 8192 * 4;  // sum(1): the kept dim is the strided one
  EXPECT_FALSE(isColumnReduce(d, 4));
  d.in_out_strides[0] = 4;
  d.out_sizes[0] = d.out_numel = kColumnMinRun - 1;  // too few adjacent outputs for a warp
  EXPECT_FALSE(isColumnReduce(d, 4));
}

// mergeColumnPartials' passes, on the host's vectors: runs of kColumnFanIn partials, each merged
// by a Pairwise, until one run is left.
template <class R>
typename R::acc_t mergeInPasses(const R& r, std::vector<typename R::acc_t> parts) {
  for (;;) {
    std::vector<typename R::acc_t> next;
    for (size_t k = 0; k < parts.size(); k += kColumnFanIn) {
      Pairwise<R> run;
      for (size_t c = k; c < parts.size() && c < k + kColumnFanIn; ++c) run.push(r, parts[c]);
      next.push_back(run.result(r));
    }
    if (parts.size() <= size_t(kColumnFanIn)) return next[0];
    parts = std::move(next);
  }
}

// The host merges a group's partials in its tasks (LaneMerger): the same bits as the passes the
// CUDA build runs, for counts around every run and pass boundary, whether a task merges all of
// them or blocks of 16^levels whose items the remaining passes merge. The partials span 12
// orders of magnitude, so a different association would change the float sum.
TEST(ColumnMerge, InTaskMergeEqualsThePassesBitForBit) {
  using R = SumReducer<float, float>;
  using Merger = LaneMerger<R, 4>;
  const R r{1.0f};
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-20, 20);
  auto expectSame = [](float got, float want, const std::string& what) {
    EXPECT_EQ(std::memcmp(&got, &want, sizeof(float)), 0) << what << ": " << got << " vs " << want;
  };
  for (int64_t chunks : {2, 3, 15, 16, 17, 31, 32, 33, 255, 256, 257, 4095, 4096, 4097, 70001}) {
    std::vector<float> parts[4];
    for (auto& lane : parts)
      for (int64_t c = 0; c < chunks; ++c) lane.push_back(std::ldexp(mantissa(gen), exponent(gen)));
    // Blocks of 16^levels chunks, merged in the task, then the passes over the blocks' items;
    // levels 0: one block of everything, merged whole.
    for (int levels = 0; levels <= 3; ++levels) {
      int64_t span = 1;
      for (int k = 0; k < levels; ++k) span *= kColumnFanIn;
      if (levels == 0) span = chunks;
      std::vector<float> items[4];
      for (int64_t first = 0; first < chunks; first += span) {
        auto merger = std::make_unique<Merger>(levels == 0 ? Merger::lastPass(chunks) : levels - 1);
        for (int64_t c = first; c < std::min(chunks, first + span); ++c) {
          float acc[4];
          for (int l = 0; l < 4; ++l) acc[l] = parts[l][c];
          merger->push(r, 0, acc);
        }
        float out[4];
        merger->finish(r, out);
        for (int l = 0; l < 4; ++l) items[l].push_back(out[l]);
      }
      for (int l = 0; l < 4; ++l) {
        const float got = levels == 0 ? items[l][0] : mergeInPasses(r, items[l]);
        expectSame(got, mergeInPasses(r, parts[l]),
                   std::to_string(chunks) + " chunks, levels " + std::to_string(levels));
      }
    }
  }
  EXPECT_EQ(Merger::lastPass(16), 0);  // one run: no pass between
  EXPECT_EQ(Merger::lastPass(17), 1);
  EXPECT_EQ(Merger::lastPass(int64_t{1} << 40), -1);  // left to the passes
}

}  // namespace
}  // namespace accel::kernels
