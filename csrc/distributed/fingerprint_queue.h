// The fingerprints of the batches a group has queued on its communication stream, checked
// across ranks ahead of the data. When the stream reaches a batch that is not agreed yet, the
// ranks exchange the fingerprints of every batch each has queued by then (up to
// Fingerprint::slotsPerExchange) in one all-gather, and all of them agree on as many as the
// rank with the fewest passed: a burst of collectives costs one or two exchanges, not one
// each. Every rank reads the same gathered rows, so all exchange at the same batches and stay
// in step, and an exchange covers only batches that every rank has made.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "distributed/fingerprint.h"

namespace accel::dist {

class FingerprintQueue {
 public:
  // Appends a batch, in the order of the stream.
  void push(uint64_t sequence, Fingerprint fingerprint);
  // Removes the newest batch if it is `sequence` (its stream task could not be queued).
  void cancel(uint64_t sequence);
  // On the stream, for the oldest batch (`sequence`): returns once every rank agrees on it,
  // exchanging when needed, and raises c10::DistBackendError when the ranks disagree.
  void agree(c10d::Backend& gloo, uint64_t sequence, int rank, const std::string& group);
  // Removes the oldest batch (`sequence`) unchecked: its group failed before it ran.
  void drop(uint64_t sequence);

 private:
  struct Entry {
    uint64_t sequence = 0;
    Fingerprint fingerprint{0};
    bool agreed = false;
    std::string disagreement;
  };
  Entry takeOldest(uint64_t sequence);  // mu_ held

  std::mutex mu_;
  std::deque<Entry> entries_;
};

}  // namespace accel::dist
