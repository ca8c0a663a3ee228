// What every rank must agree on before a batch moves data: which collective, the dtype, the
// shape each rank contributes, the root, the reduce op and, for all_to_all, the split sizes.
// The ranks exchange it with one small all-gather over gloo, so a mismatch is an error that
// names the collective and the ranks instead of a hang or silently wrong values.
#pragma once

#include <cstdint>
#include <vector>

#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "distributed/collective.h"

namespace accel::dist {

class Fingerprint {
 public:
  explicit Fingerprint(int world_size) : world_(world_size) {}

  // Adds one call. `shape` is the tensor that must be alike on every rank (for all_to_all,
  // the rows after dim 0); the splits are element counts per rank (all_to_all only).
  void add(Collective collective, at::ScalarType dtype, c10::IntArrayRef shape, int64_t root = 0,
           int64_t reduce_op = -1, const std::vector<int64_t>& input_splits = {},
           const std::vector<int64_t>& output_splits = {});
  bool empty() const { return calls_ == 0; }

  // Exchanges the fingerprints and raises c10::DistBackendError when the ranks disagree.
  // Blocks until every rank has called it (bounded by the gloo group's timeout).
  void check(c10d::Backend& gloo, int rank, uint64_t sequence, const std::string& group) const;

  static constexpr int kHeaderWords = 12;

 private:
  int world_;
  int64_t calls_ = 0;
  std::vector<int64_t> words_ = std::vector<int64_t>(kHeaderWords, 0);
  std::vector<int64_t> splits_;  // world input splits, then world output splits
};

}  // namespace accel::dist
