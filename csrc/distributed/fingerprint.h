// What every rank must agree on before a batch moves data: which collective, the dtype, the
// shape each rank contributes, the root, the reduce op and, for all_to_all, the split sizes.
// The ranks exchange it with a small all-gather over gloo, so a mismatch is an error that
// names the collective and the ranks instead of a hang or silently wrong values.
#pragma once

#include <cstdint>
#include <string>
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
  int world() const { return world_; }

  // Exchanges the fingerprints and raises c10::DistBackendError when the ranks disagree.
  // Blocks until every rank has called it (bounded by the gloo group's timeout).
  void check(c10d::Backend& gloo, int rank, uint64_t sequence, const std::string& group) const;

  // What one exchange of several consecutive batches' fingerprints settled: every rank agrees
  // on the first `agreed`; when `disagreement` is set, the next one differs (the message).
  struct Agreement {
    size_t agreed = 0;
    std::string disagreement;
  };
  // Exchanges the fingerprints of each rank's next batches (`mine`, at most `slots` of them;
  // `sequences` numbers them for messages) in one all-gather. The agreed ones are a prefix of
  // the batches that every rank passed, so a rank that passed more exchanges the rest later.
  // Every rank must pass the same `slots`; all of them compute the same Agreement.
  static Agreement exchange(c10d::Backend& gloo, const std::vector<const Fingerprint*>& mine,
                            const std::vector<uint64_t>& sequences, size_t slots, int rank,
                            const std::string& group);
  // How many batches one exchange may carry in a group of `world` ranks: a few KiB per rank.
  static size_t slotsPerExchange(int world);

  static constexpr int kHeaderWords = 12;

 private:
  static int64_t slotWords(int world) { return kHeaderWords + 1 + 2 * world; }
  void write(int64_t* slot) const;  // slotWords(world_) words

  int world_;
  int64_t calls_ = 0;
  std::vector<int64_t> words_ = std::vector<int64_t>(kHeaderWords, 0);
  std::vector<int64_t> splits_;  // world input splits, then world output splits
};

}  // namespace accel::dist
