// The CUDA build's launch geometry, as plain functions with no CUDA header: the executor and
// the kernels launch with them, and the launch-plan tests and the GPU cost estimate
// (benchmarks/gpu_cost_estimate.py) read the same numbers on a machine with no GPU.
#pragma once

#include <cstdint>

#include "kernels/scan_plan.h"

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

// Reductions (reduce.cu): a column reduction takes reduce.h's column passes; otherwise a thread
// per output when the reduced range is this short; else a block per planReduce worker, each
// chunk at least 16 elements per thread, and a block per output combining the partials of an
// output whose range was split.
constexpr int64_t kShortReduce = 32;
constexpr int64_t kReduceMinChunk = 16 * kThreads;
enum class ReducePath { Columns, ThreadPerOutput, Blocks };
inline ReducePath reducePath(bool columns, int64_t red_numel) {
  return columns                     ? ReducePath::Columns
         : red_numel <= kShortReduce ? ReducePath::ThreadPerOutput
                                     : ReducePath::Blocks;
}

// Scans and compactions (scan_plan.h): a thread walks a chunk of about 32 elements (a 128-byte
// line of floats, which L1 holds while the thread consumes it, so a warp's loads cost no more
// DRAM traffic than coalesced ones), with up to 4096 chunks per SM: twice its 2048 resident
// threads. Carries fold 8 at a time: the few threads of a level's pass each wait on few loads.
inline ScanGeometry scanGeometry(int64_t sms) { return {sms, 4096, 32, 8}; }
// Sort (sort.h): forEach runs a task per thread, and two 256-thread blocks of merge tasks per SM
// hide its memory latency.
constexpr int64_t kSortTasksPerUnit = 2 * kThreads;

}  // namespace accel::kernels::cuda
