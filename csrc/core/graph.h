// Graph capture and replay on accel, with the semantics of CUDA graphs (torch.cuda.CUDAGraph):
// a capture on a side stream records the work of the captured region through the driver
// (rt::Driver::streamBeginCapture); a replay launches the recording as one unit, with no
// dispatch and no allocation. Memory allocated while capturing comes from a private pool of
// the caching allocator, which the graph holds until reset, so that replays write where the
// capture did. Random ops draw fresh numbers on each replay (graph-safe Philox state).
// Operations that synchronise with the host are capture errors (core/sync_point.h).
//
// torch.accel.Graph binds this class; on torch 2.12+ it is also registered as the
// PrivateUse1 implementation of at::GraphImplInterface, behind torch.accelerator.Graph.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Stream.h>

#include <mutex>

#include <string>
#include <thread>
#include <vector>

#include "core/sync_point.h"
#include "kernels/random.h"
#include "runtime/driver.h"

namespace accel {

class AccelGeneratorImpl;

// A new pool id, for graphs to share (torch.cuda.graph_pool_handle) and for MemPool.
c10::MempoolId_t newPoolId();

class Graph {
 public:
  explicit Graph(bool keep_graph = false);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Begins capturing the current stream of the current device. `pool` {0, 0} gives the
  // graph a private pool of its own; another graph's pool() (or a MemPool's id, or
  // newPoolId()) shares that pool.
  void captureBegin(c10::MempoolId_t pool = {0, 0}, rt::CaptureMode mode = rt::CaptureMode::Global);
  // Ends the capture (on the stream it began on). If the capture failed (a synchronising op,
  // a stream that never rejoined), raises why; the graph is then empty, as after reset().
  void captureEnd();
  // Ends a capture whose captured region raised, discarding what it recorded. No-op when not
  // capturing.
  void abortCapture();
  // capture_end instantiates already; kept for the API (keep_graph is accepted for it too).
  void instantiate();
  // Launches the graph on the current stream.
  void replay();
  // Drops the graph and releases its pool; the object may capture again.
  void reset();
  c10::MempoolId_t pool() const;
  void enableDebugMode();
  void debugDump(const std::string& path);

  // The graph-safe Philox state for a launch of `counters` on `generator`, when the current
  // stream of the generator's device captures a graph; false otherwise.
  static bool capturedPhiloxState(AccelGeneratorImpl* generator, uint64_t counters,
                                  kernels::PhiloxState* state);

 private:
  enum class State { Empty, Capturing, Captured };
  struct PhiloxSlot {
    at::Generator generator;
    at::Tensor seed_offset;  // 2 x int64 on the device: what the launches of a replay read
    uint64_t offset = 0;     // counters the captured launches consume per replay
  };
  void endRouting();  // stops routing allocations to the pool, forgets the capture
  void releasePool();
  [[noreturn]] void failCapture(rt::Error error, const std::string& reason);

  State state_ = State::Empty;
  bool was_reset_ = false;
  bool debug_ = false;
  c10::DeviceIndex device_ = -1;
  rt::Stream capture_stream_ = nullptr;
  uint64_t capture_id_ = 0;
  rt::CaptureMode mode_ = rt::CaptureMode::Global;
  std::thread::id capture_thread_;
  c10::MempoolId_t pool_{0, 0};
  bool holds_pool_ = false;
  rt::GraphExec exec_ = nullptr;
  std::vector<PhiloxSlot> philox_;
  std::vector<rt::Stream> replay_streams_;  // where replays ran: pinned blocks wait for them
  // Why the capture is invalid (the op that synchronised), guarded by the capture registry.
  std::string invalid_reason_;

  friend void refuseDuringCapture(const char* op, SyncKind kind);
};

// Whether `stream` takes part in a capture (torch.Stream.is_capturing()).
bool isStreamCapturing(const c10::Stream& stream);

// Registers Graph as torch's PrivateUse1 graph implementation (torch 2.12+), once the backend
// has its name. False when this torch has no GraphImplInterface.
bool registerGraphImpl();

}  // namespace accel
