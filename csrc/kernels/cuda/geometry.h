// The CUDA build's launch geometry, as plain functions with no CUDA header: the executor and
// the kernels launch with them, and the launch-plan tests and the GPU cost estimate
// (benchmarks/gpu_cost_estimate.py) read the same numbers on a machine with no GPU.
#pragma once

#include <cstdint>

namespace accel::kernels::cuda {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; the grid-stride loop covers the rest.
constexpr int64_t kMaxBlocks = 1 << 16;

// Blocks of kThreads for a grid-stride loop over n threads' work.
inline int64_t threadGrid(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks;
}

// A grid of `blocks` blocks (a block per row or line), at most kMaxBlocks.
inline int64_t blockGrid(int64_t blocks) {
  return blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks;
}

// Reductions (reduce.cu): a thread per output when the reduced range is this short; else a
// block per planReduce worker, each chunk at least 16 elements per thread.
constexpr int64_t kShortReduce = 32;
constexpr int64_t kReduceMinChunk = 16 * kThreads;

// Scans and compactions (scan_plan.h): a thread walks each chunk; a launch costs little, so
// short chunks pay already.
constexpr int64_t kScanMinChunk = 256;
// Sort (sort.h): forEach runs a task per thread, and two 256-thread blocks of merge tasks per SM
// hide its memory latency.
constexpr int64_t kSortTasksPerUnit = 2 * kThreads;

}  // namespace accel::kernels::cuda
