// The CUDA build's launch plans from Python, for benchmarks/gpu_cost_estimate.py: each family's
// passes with the blocks and threads the CUDA kernels would launch, computed by the same pure
// plan functions the kernels use (kernels/*.h, kernels/cuda/geometry.h), for any SM count.
// No GPU is needed: this is what lets a machine without one check that nothing is planned to
// run on a fraction of an H200.
#include <torch/csrc/utils/pybind.h>

#include <string>
#include <vector>

#include "kernels/cuda/geometry.h"
#include "kernels/index.h"
#include "kernels/norm.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "kernels/scan_plan.h"
#include "kernels/sort.h"

namespace py = pybind11;

namespace accel {
namespace {

using kernels::cuda::blockGrid;
using kernels::cuda::kThreads;
using kernels::cuda::threadGrid;

struct Pass {
  std::string kernel;
  int64_t blocks;
  int64_t threads;     // per block
  int64_t work;        // threads with work (a grid-stride loop's blocks are capped)
  int64_t states = 0;  // scans and compactions: the carry states it reads and writes
};

Pass threadsPass(const char* kernel, int64_t n, int64_t states = 0) {
  const int64_t blocks = threadGrid(n);
  return {kernel, blocks, kThreads, n < blocks * kThreads ? n : blocks * kThreads, states};
}
Pass blocksPass(const char* kernel, int64_t blocks) {
  return {kernel, blockGrid(blocks), kThreads, blockGrid(blocks) * kThreads};
}

// mergeColumnPartials (kernels/reduce.h): a pass per factor of kColumnFanIn.
void addMergePasses(std::vector<Pass>& passes, int64_t outputs, int64_t chunks) {
  if (chunks <= 1) return;
  for (int64_t count = chunks;; count = kernels::columnRuns(count)) {
    const int64_t runs = kernels::columnRuns(count);
    passes.push_back(threadsPass("columnMerge", runs * outputs));
    if (runs == 1) return;
  }
}

// cuda/reduce.cu's path (reducePath): the column passes, a thread per output of a short range,
// or planReduce's blocks.
std::vector<Pass> reducePlan(int64_t out_numel, int64_t red_numel, int64_t run, bool column,
                             int64_t sms) {
  using kernels::cuda::ReducePath;
  switch (kernels::cuda::reducePath(column, red_numel)) {
    case ReducePath::Columns: {
      const kernels::ColumnPlan p = kernels::planColumns(out_numel, run, red_numel, 1);
      std::vector<Pass> passes{threadsPass("columnChunk", p.workers)};
      addMergePasses(passes, out_numel, p.chunks);
      return passes;
    }
    case ReducePath::ThreadPerOutput: return {threadsPass("threadPerOutput", out_numel)};
    case ReducePath::Blocks: break;
  }
  const kernels::ReducePlan p =
      kernels::planReduce(out_numel, red_numel, sms, kernels::cuda::kReduceMinChunk);
  std::vector<Pass> passes{blocksPass("blockPerChunk", p.workers)};
  if (p.splits > 1) {  // a block per output, a thread per run of partials
    const int64_t runs = p.splits < kThreads ? p.splits : kThreads;
    passes.push_back({"combinePartials", blockGrid(out_numel), kThreads, out_numel * runs});
  }
  return passes;
}

// cuda/norm.cu: a block per row, then the weight and bias gradients as norm.h plans them.
std::vector<Pass> layerNormBackwardPlan(int64_t rows, int64_t cols) {
  const kernels::ColumnPlan p = kernels::planColumns(cols, cols, rows, 1);
  std::vector<Pass> passes{blocksPass("layerNormGradInput", rows),
                           threadsPass("layerNormParamChunk", p.workers)};
  addMergePasses(passes, 2 * cols, p.chunks);
  return passes;
}

// scanCarries (kernels/carry_scan.h) over `lines` lines planned by `c`: a fold per level up,
// a rescan per level down (the top one a task per line).
void addCarryPasses(std::vector<Pass>& passes, int64_t lines, const kernels::CarryPlan& c) {
  for (int l = 0; l + 1 < c.levels; ++l) {
    const int64_t groups = c.count[l + 1];
    passes.push_back(threadsPass("carryFold", lines * (groups > 1 ? groups - 1 : 1),
                                 lines * (c.count[l] + groups)));
  }
  for (int l = c.levels - 1; l >= 0; --l) {
    const bool top = l + 1 == c.levels;
    const int64_t groups = top ? 1 : c.count[l + 1];
    passes.push_back(
        threadsPass("carryRescan", lines * groups, lines * (2 * c.count[l] + (top ? 0 : groups))));
  }
}

// launchScan (kernels/reduce.h): a thread per line; or chunk aggregates, their carries, and
// the rescan of each chunk.
std::vector<Pass> scanPlan(int64_t outer, int64_t n, int64_t inner, int64_t sms) {
  const kernels::ScanGeometry g = kernels::cuda::scanGeometry(sms);
  const kernels::ScanPlan p = kernels::planScan(outer, n, inner, g);
  if (p.chunks == 1) return {threadsPass("scanChunk", p.tasks)};
  const int64_t lines = outer * inner, aggregates = lines * (p.chunks - 1);
  std::vector<Pass> passes{threadsPass("scanAggregate", aggregates, aggregates)};
  addCarryPasses(passes, lines, kernels::planCarries(lines, p.chunks, g.fan_in));
  passes.push_back(threadsPass("scanWrite", p.tasks, p.tasks));
  return passes;
}

// launchNonzeroCount and launchNonzero (kernels/index.h): chunk counts, their offsets and
// total, the total's copy, then each chunk writes its coordinates.
std::vector<Pass> nonzeroPlan(int64_t numel, int64_t sms) {
  const kernels::ScanGeometry g = kernels::cuda::scanGeometry(sms);
  const kernels::ScanPlan p = kernels::planCompact(numel, g);
  std::vector<Pass> passes{threadsPass("countFold", p.tasks, p.tasks)};
  addCarryPasses(passes, 1, kernels::planCarries(1, p.tasks + 1, g.fan_in));
  passes.push_back(threadsPass("copyTotal", 1, 2));
  passes.push_back(threadsPass("nonzeroChunk", p.tasks, p.tasks));
  return passes;
}

// launchSort (kernels/sort.h): the tile sort, then the merge passes.
std::vector<Pass> sortPlan(int64_t nslices, int64_t n, int64_t sms) {
  const kernels::SortPlan p = kernels::planSort(nslices, n, sms * kernels::cuda::kSortTasksPerUnit);
  std::vector<Pass> passes{threadsPass("tileSort", p.tasks)};
  for (int i = 0; i < p.passes; ++i) passes.push_back(threadsPass("mergeTile", p.tasks));
  return passes;
}

py::list toPython(const std::vector<Pass>& passes) {
  py::list out;
  for (const Pass& p : passes)
    out.append(py::dict(py::arg("kernel") = p.kernel, py::arg("blocks") = p.blocks,
                        py::arg("threads") = p.threads, py::arg("work") = p.work,
                        py::arg("states") = p.states));
  return out;
}

}  // namespace

void registerLaunchPlans(py::module& m) {
  m.def(
      "_cuda_launch_plan",
      [](const std::string& family, const std::vector<int64_t>& s, int64_t sms) {
        auto want = [&](size_t n) {
          TORCH_CHECK_VALUE(s.size() == n, "_cuda_launch_plan: ", family, " takes ", n,
                            " sizes, got ", s.size());
        };
        if (family == "elementwise") {  // (numel)
          want(1);
          return toPython({threadsPass("denseKernel", s[0])});
        }
        if (family == "reduce") {  // (out_numel, red_numel): the row plan
          want(2);
          return toPython(reducePlan(s[0], s[1], 0, false, sms));
        }
        if (family == "reduce_columns") {  // (out_numel, run of adjacent outputs, red_numel)
          want(3);
          return toPython(reducePlan(s[0], s[2], s[1], true, sms));
        }
        if (family == "randn") {  // (numel) of float32: a thread per group of draws
          want(1);
          kernels::RandomDesc d;
          d.elems.numel = s[0];
          d.elems.op[0].dtype = kernels::DType::Float;
          d.kind = kernels::RandomKind::Normal;
          return toPython({threadsPass("forEachKernel", kernels::randomGroups(d))});
        }
        if (family == "softmax" || family == "layer_norm") {  // (lines): a block per line
          want(1);
          return toPython(
              {blocksPass(family == "softmax" ? "softmaxKernel" : "layerNormKernel", s[0])});
        }
        if (family == "layer_norm_backward") {  // (rows, cols)
          want(2);
          return toPython(layerNormBackwardPlan(s[0], s[1]));
        }
        if (family == "scan") {  // (outer, n, inner)
          want(3);
          return toPython(scanPlan(s[0], s[1], s[2], sms));
        }
        if (family == "nonzero") {  // (numel)
          want(1);
          return toPython(nonzeroPlan(s[0], sms));
        }
        if (family == "sort") {  // (nslices, n)
          want(2);
          return toPython(sortPlan(s[0], s[1], sms));
        }
        TORCH_CHECK_VALUE(false, "_cuda_launch_plan: unknown family '", family, "'");
      },
      py::arg("family"), py::arg("sizes"), py::arg("sms"));
}

}  // namespace accel
