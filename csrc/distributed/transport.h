// How a process group's data moves between ranks: gloo staged through pinned host memory on
// the host driver (gloo_transport), NCCL on device memory on the CUDA driver (nccl_transport).
// ProcessGroupAccel orders the work against the caller's stream and owns the Work objects;
// a transport only queues the data movement of a batch on the communication stream.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/failure.h"
#include "distributed/fingerprint.h"
#include "distributed/op.h"
#include "runtime/driver.h"

namespace accel::dist {

// Where and on behalf of what a batch runs.
struct Submission {
  int device = 0;
  rt::Stream stream = nullptr;             // already waits for the caller's current stream
  const char* name = "";                   // the collective, for messages ("all_reduce")
  uint64_t sequence = 0;                   // the group's collective counter, for messages
  std::string group;                       // the group's name, for messages
  std::shared_ptr<Failure> work_failure;   // this batch's Work
  std::shared_ptr<Failure> group_failure;  // the process group: set, later batches are refused
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // Whether sends and receives get streams of their own (gloo, whose send completes only once
  // its receiver is posted), or queue in order with the collectives (NCCL's semantics).
  virtual bool pointToPointLanes() const { return true; }
  // Whether a graph capture may record the transport's work (ProcessGroupAccel refuses a
  // collective on a capturing stream otherwise).
  virtual bool capturable() const { return true; }
  // Queues the ops as one unit on `s.stream` and returns without waiting for them. The ranks
  // check `fingerprint` (unless it is empty) before any data moves. A failure while the ops
  // run is recorded in both Failures, and raised on the stream so that the next synchronize
  // of the device reports it, as an asynchronous CUDA error does.
  virtual void submit(std::vector<Op> ops, const Fingerprint& fingerprint, const Submission& s) = 0;
};

}  // namespace accel::dist
