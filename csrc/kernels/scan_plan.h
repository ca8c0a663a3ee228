// The launch plan of the scans (reduce.h: cumsum, cumprod, cummax, cummin, logcumsumexp) and of the
// ordered compactions (index.h: nonzero, its count, index bounds), shared by both drivers: pure, so
// the CUDA plan is tested on any machine with a GPU's numbers (tests/cpp/kernels_scan_plan.cpp).
#pragma once

#include <cstdint>

#include "kernels/macros.h"

namespace accel::kernels {

// A driver's numbers for these plans.
struct ScanGeometry {
  int64_t units;           // parallel processors (CUDA: SMs; host: threads)
  int64_t tasks_per_unit;  // chunk tasks a unit should get when the lines are few
  int64_t min_chunk;       // the fewest elements worth a chunk of their own (a pass's cost)
  int64_t fan_in;          // carry states a task folds per level (carry_scan.h), >= 2
};

// A scan of `lines` = outer * inner independent lines of n elements each. With enough lines a
// task scans a whole line (chunks == 1: one pass). Otherwise each line is cut into `chunks`
// runs of `chunk` consecutive elements (none empty, the last maybe shorter): every chunk but
// the last computes its aggregate, the aggregates become exclusive carries (carry_scan.h), and
// every chunk rescans itself from its carry and writes. Tasks of the chunk passes are numbered
// (outer, chunk, inner) with inner fastest, so that neighbouring tasks read neighbouring
// elements when inner > 1. A compaction over numel elements is the plan of one line.
struct ScanPlan {
  int64_t chunks = 1;  // per line
  int64_t chunk = 0;   // elements per chunk
  int64_t tasks = 0;   // lines * chunks: the tasks of the aggregate and rescan passes
};

ACCEL_HD inline ScanPlan planScan(int64_t outer, int64_t n, int64_t inner, const ScanGeometry& g) {
  ScanPlan p;
  const int64_t lines = outer * inner;
  if (lines <= 0 || n <= 0) return p;
  const int64_t target = g.tasks_per_unit * (g.units > 0 ? g.units : 1);
  const int64_t min_chunk = g.min_chunk < 1 ? 1 : g.min_chunk;
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

// The exclusive scan of each line's `count` carry states, in levels: level 0 holds the states
// themselves; each next level one state per group of fan_in states of the level below (a
// group's aggregate), until a level has at most fan_in states per line, which one task per
// line scans. Then each level's groups rescan themselves from the level above's carries, top
// down. Each level is laid out (outer, count, inner) like the chunks; all lie in one scratch.
constexpr int kMaxCarryLevels = 24;
struct CarryPlan {
  int levels = 0;
  int64_t fan_in = 2;
  int64_t count[kMaxCarryLevels] = {};   // states per line at each level
  int64_t offset[kMaxCarryLevels] = {};  // each level's first state in the scratch
  int64_t states = 0;                    // the scratch's states, every level together
};

ACCEL_HD inline CarryPlan planCarries(int64_t lines, int64_t count, int64_t fan_in) {
  CarryPlan c;
  c.fan_in = fan_in < 2 ? 2 : fan_in;
  if (lines <= 0 || count <= 0) return c;
  for (int64_t k = count;; k = (k + c.fan_in - 1) / c.fan_in) {
    c.count[c.levels] = k;
    c.offset[c.levels] = c.states;
    c.states += lines * k;
    // (At the cap the top level keeps more than fan_in states: one task still scans them.)
    if (++c.levels == kMaxCarryLevels || k <= c.fan_in) return c;
  }
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
