// The host driver's transport: torch's own ProcessGroupGloo, reached through c10d's Backend
// interface (the torch wheel ships no gloo headers). Accel memory is staged through pinned
// host buffers: on the communication stream, device -> pinned copies, then a host task that
// agrees on the batch's fingerprint with the other ranks (fingerprint_queue.h) and runs the
// gloo collective (the stream's worker blocks in it, the caller's thread does not), then
// pinned -> device copies.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <memory>

#include "distributed/fingerprint_queue.h"
#include "distributed/transport.h"

namespace accel::dist {

class GlooTransport final : public Transport {
 public:
  GlooTransport(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int world_size);
  const char* name() const override { return "gloo, staged through pinned host memory"; }
  // A batch's host task owns its staging blocks and runs once: a replay would reuse them freed.
  bool capturable() const override { return false; }
  void submit(std::vector<Op> ops, const Fingerprint& fingerprint, const Submission& s) override;

 private:
  c10::intrusive_ptr<c10d::Backend> gloo_;
  const int rank_;
  const int world_;
  // The collective stream's batches, checked ahead across ranks (shared with its tasks).
  const std::shared_ptr<FingerprintQueue> fingerprints_ = std::make_shared<FingerprintQueue>();
};

}  // namespace accel::dist
