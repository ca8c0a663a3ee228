// The launch plan of the scans (reduce.h: cumsum, cumprod, cummax, cummin) and of the ordered
// compactions (index.h: nonzero, its count, index bounds), shared by both drivers: pure, so the
// CUDA plan is tested on any machine with a GPU's numbers (tests/cpp/kernels_scan_plan.cpp).
#pragma once

#include <cstdint>

#include "kernels/macros.h"

namespace accel::kernels {

// A scan of `lines` = outer * inner independent lines of n elements each, spread over `units`
// parallel processors (CUDA: SMs; host: threads). With enough lines a task scans a whole line
// (chunks == 1: one pass). Otherwise each line is cut into `chunks` runs of `chunk` consecutive
// elements (none empty, the last maybe shorter) and three passes run: every chunk but the last
// computes its aggregate; a task per line turns its chunks' aggregates into exclusive carries;
// every chunk rescans itself from its carry and writes. Tasks of the chunk passes are numbered
// (outer, chunk, inner) with inner fastest, so that neighbouring tasks read neighbouring
// elements when inner > 1. A compaction over numel elements is the plan of one line.
struct ScanPlan {
  int64_t chunks = 1;  // per line
  int64_t chunk = 0;   // elements per chunk
  int64_t tasks = 0;   // lines * chunks: the tasks of the aggregate and rescan passes
};

// Tasks per unit the chunk passes aim for: each task walks its chunk in sequence, so a GPU
// needs many per SM to keep memory busy, while the carry pass (one task per line, serial over
// the line's chunks) wants few chunks; 64 balances the two on an H200 (8448 tasks).
constexpr int64_t kScanTasksPerUnit = 64;

// min_chunk: the fewest elements worth a chunk of its own on the driver (its cost of a pass).
ACCEL_HD inline ScanPlan planScan(int64_t outer, int64_t n, int64_t inner, int64_t units,
                                  int64_t min_chunk) {
  ScanPlan p;
  const int64_t lines = outer * inner;
  if (lines <= 0 || n <= 0) return p;
  const int64_t target = kScanTasksPerUnit * (units > 0 ? units : 1);
  if (min_chunk < 1) min_chunk = 1;
  if (lines < target && n >= 2 * min_chunk) {
    const int64_t want = (target + lines - 1) / lines;
    const int64_t most = n / min_chunk;
    p.chunks = want < most ? want : most;
  }
  p.chunk = (n + p.chunks - 1) / p.chunks;
  p.chunks = (n + p.chunk - 1) / p.chunk;  // no empty chunk
  p.tasks = lines * p.chunks;
  return p;
}

// Task t of the chunk passes: its line's first element (in elements) and its range [begin,
// end) along the line; element j of the line is at first + j * inner.
struct ScanTask {
  int64_t first, which, begin, end;  // which: the chunk's index along its line
};

ACCEL_HD inline ScanTask scanTask(const ScanPlan& p, int64_t n, int64_t inner, int64_t t) {
  const int64_t k = t % inner, c = (t / inner) % p.chunks, o = t / (inner * p.chunks);
  const int64_t begin = c * p.chunk;
  return {o * n * inner + k, c, begin, begin + p.chunk < n ? begin + p.chunk : n};
}

}  // namespace accel::kernels
