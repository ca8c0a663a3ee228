#include "core/graph.h"

#include <ATen/record_function.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "core/device.h"
#include "core/device_allocator.h"
#include "core/host_allocator.h"
#include "core/generator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"
#include "kernels/copy.h"

#if __has_include(<ATen/core/GraphImplInterface.h>)
#include <ATen/core/GraphImplInterface.h>
#define ACCEL_HAS_GRAPH_IMPL_INTERFACE 1
#endif

namespace accel {
namespace {

// The graphs capturing now. g_mu also guards their invalid_reason_ and philox_.
std::mutex g_mu;
std::vector<Graph*> g_capturing;
std::atomic<int> g_capturing_count{0};

std::atomic<uint64_t> g_next_pool{1};

alloc::PoolId toAlloc(c10::MempoolId_t id) { return {id.first, id.second}; }

std::string deviceName(c10::DeviceIndex device) {
  return "accel:" + std::to_string(static_cast<int>(device));
}

// A stream-ordered store of one int64 into device memory, by the fill kernel.
void storeWord(uint64_t* dst, uint64_t value, rt::Stream stream, c10::DeviceIndex device) {
  kernels::ElementwiseDesc d;
  d.ndim = 1;
  d.sizes[0] = 1;
  d.numel = 1;
  d.noperands = 1;
  d.op[0].data = reinterpret_cast<char*>(dst);
  d.op[0].dtype = kernels::DType::Int64;
  d.op[0].strides[0] = sizeof(uint64_t);
  kernels::Scalar v;
  v.i = static_cast<int64_t>(value);  // the same 64 bits
  v.is_integral = true;
  ACCEL_RT_CHECK(kernels::copyTable().fill(d, v, stream), device);
}

}  // namespace

c10::MempoolId_t newPoolId() { return {0, g_next_pool.fetch_add(1)}; }

// The sync-point listener: a synchronising op during a capture invalidates it and raises.
// As CUDA's capture modes: "global" refuses it from any thread, "thread_local" from the
// capturing thread, and every mode from a thread whose current stream captures.
void refuseDuringCapture(const char* op, SyncKind /*kind*/) {
  if (g_capturing_count.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(g_mu);
  Graph* culprit = nullptr;
  for (Graph* g : g_capturing) {
    const bool refused =
        g->mode_ == rt::CaptureMode::Global ||
        (g->mode_ == rt::CaptureMode::ThreadLocal &&
         g->capture_thread_ == std::this_thread::get_id()) ||
        rt::driver().streamCaptureId(currentRuntimeStream(g->device_)) == g->capture_id_;
    if (!refused) continue;
    if (g->invalid_reason_.empty()) {
      g->invalid_reason_ = std::string(op) + " synchronised the host with the device during it";
    }
    culprit = g;
  }
  if (culprit == nullptr) return;
  TORCH_CHECK(false, op, " synchronises the host with ", deviceName(culprit->device_),
              ", which is not allowed while a graph is being captured on it; the capture is "
              "invalidated. Run it before or after the captured region.");
}

namespace {
[[maybe_unused]] const bool g_listening = [] {
  addSyncListener(&refuseDuringCapture);
  return true;
}();
}  // namespace

Graph::Graph(bool /*keep_graph*/) {}

Graph::~Graph() {
  try {
    reset();
  } catch (...) {
    // A destructor cannot report; at process exit the runtime may already be gone.
  }
}

void Graph::captureBegin(c10::MempoolId_t pool, rt::CaptureMode mode) {
  TORCH_CHECK(state_ != State::Capturing, "this accel graph is already capturing");
  TORCH_CHECK(state_ == State::Empty,
              "this accel graph already holds a capture; call reset() before capturing again");
  const c10::DeviceIndex device = currentDevice();
  const c10::Stream stream = currentStream(device);
  TORCH_CHECK(stream.id() != 0, "accel graphs cannot be captured on the default stream of ",
              deviceName(device),
              ": capture on a side stream (torch.accel.graph(...) does), e.g. inside "
              "`with torch.accel.stream(torch.accel.Stream()):`");
  const rt::Stream rs = runtimeStream(stream);
  TORCH_CHECK(rt::driver().streamCaptureId(rs) == 0, "stream ", stream.id(), " of ",
              deviceName(device),
              " is already capturing a graph: nested captures on one stream are not allowed "
              "(end the first capture, or capture on another stream)");

  const c10::MempoolId_t id =
      pool.first != 0 || pool.second != 0 ? pool : c10::MempoolId_t{g_next_pool.fetch_add(1), 0};
  ACCEL_RT_CHECK(rt::driver().streamBeginCapture(rs, mode), device);
  const uint64_t capture_id = rt::driver().streamCaptureId(rs);
  // Allocations on every stream of this capture come from the pool, whatever thread makes
  // them (backward runs on autograd's device thread).
  try {
    deviceCachingAllocator(device).beginAllocateToPool(toAlloc(id), [capture_id](rt::Stream s) {
      return rt::driver().streamCaptureId(s) == capture_id;
    });
  } catch (const std::exception& e) {
    rt::GraphExec exec = nullptr;
    rt::driver().streamEndCapture(rs, &exec);
    if (exec != nullptr) rt::driver().graphDestroy(exec);
    TORCH_CHECK(false, "cannot capture into pool (", id.first, ", ", id.second, ") on ",
                deviceName(device), ": ", e.what(), " (two captures at once cannot share a pool)");
  }

  device_ = device;
  capture_stream_ = rs;
  capture_id_ = capture_id;
  mode_ = mode;
  capture_thread_ = std::this_thread::get_id();
  pool_ = id;
  holds_pool_ = true;
  was_reset_ = false;
  state_ = State::Capturing;
  std::lock_guard<std::mutex> lock(g_mu);
  invalid_reason_.clear();
  g_capturing.push_back(this);
  g_capturing_count.fetch_add(1);
}

void Graph::endRouting() {
  deviceCachingAllocator(device_).endAllocateToPool(toAlloc(pool_));
  std::lock_guard<std::mutex> lock(g_mu);
  g_capturing.erase(std::find(g_capturing.begin(), g_capturing.end(), this));
  g_capturing_count.fetch_sub(1);
}

void Graph::releasePool() {
  if (!holds_pool_) return;
  holds_pool_ = false;
  deviceCachingAllocator(device_).releasePool(toAlloc(pool_));
  releaseCapturePinned(capture_id_, replay_streams_);
  replay_streams_.clear();
}

void Graph::captureEnd() {
  TORCH_CHECK(state_ == State::Capturing, "capture_end() without capture_begin()");
  TORCH_CHECK(currentRuntimeStream(device_) == capture_stream_,
              "an accel graph capture must end on the stream it began on");
  rt::GraphExec exec = nullptr;
  const rt::Error error = rt::driver().streamEndCapture(capture_stream_, &exec);
  endRouting();
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    reason = invalid_reason_;
  }
  if (error == rt::Error::Success && reason.empty()) {
    exec_ = exec;
    state_ = State::Captured;
    return;
  }
  if (exec != nullptr) rt::driver().graphDestroy(exec);
  failCapture(error, reason);
}

void Graph::failCapture(rt::Error error, const std::string& reason) {
  const c10::DeviceIndex device = device_;
  std::string why = reason;
  if (why.empty()) {
    switch (error) {
      case rt::Error::CaptureUnjoined:
        why =
            "a stream joined the capture (it waited on an event recorded in it) and did not "
            "rejoin the capturing stream; make the capturing stream wait for it (e.g. "
            "capture_stream.wait_stream(side_stream)) before the capture ends";
        break;
      case rt::Error::CaptureInvalidated:
        why =
            "an operation not permitted during a capture (a synchronize, or a wait for work "
            "outside the capture) invalidated it";
        break;
      default: why = std::string("the driver reported '") + rt::errorString(error) + "'";
    }
  }
  philox_.clear();
  releasePool();
  state_ = State::Empty;
  TORCH_CHECK(false, "accel graph capture on ", deviceName(device), " failed: ", why,
              ". The capture was discarded; the device and its streams remain usable.");
}

void Graph::abortCapture() {
  if (state_ != State::Capturing) return;
  rt::GraphExec exec = nullptr;
  rt::driver().streamEndCapture(capture_stream_, &exec);
  if (exec != nullptr) rt::driver().graphDestroy(exec);
  endRouting();
  philox_.clear();
  releasePool();
  state_ = State::Empty;
}

void Graph::instantiate() {
  TORCH_CHECK(state_ == State::Captured, "instantiate() needs a finished capture");
}

void Graph::replay() {
  TORCH_CHECK(state_ != State::Capturing, "replay() during the graph's own capture");
  TORCH_CHECK(state_ == State::Captured,
              was_reset_ ? "replay() of an accel graph after reset(): capture it again first"
                         : "replay() of an accel graph that holds no capture: capture it first "
                           "(capture_begin()/capture_end(), or `with torch.accel.graph(g):`)");
  // A profiler sees the replay as one operation, with the device span of all its work.
  RECORD_FUNCTION("accel::graph_replay", std::vector<c10::IValue>());
  const rt::Stream stream = currentRuntimeStream(device_);
  // Each replay draws new numbers: the seed and a fresh base offset for every generator the
  // graph drew from, read by its random kernels (CUDA's replay prologue).
  for (PhiloxSlot& slot : philox_) {
    auto* gen = slot.generator.get<AccelGeneratorImpl>();
    uint64_t seed, offset;
    {
      std::lock_guard<std::mutex> lock(gen->mutex_);
      seed = gen->current_seed();
      offset = gen->get_offset();
      gen->set_offset(offset + slot.offset);
    }
    auto* words = static_cast<uint64_t*>(slot.seed_offset.data_ptr());
    storeWord(words, seed, stream, device_);
    storeWord(words + 1, offset, stream, device_);
  }
  ACCEL_RT_CHECK(rt::driver().graphLaunch(exec_, stream), device_);
  if (std::find(replay_streams_.begin(), replay_streams_.end(), stream) == replay_streams_.end())
    replay_streams_.push_back(stream);
}

void Graph::reset() {
  abortCapture();
  if (exec_ != nullptr) {
    rt::driver().graphDestroy(exec_);
    exec_ = nullptr;
  }
  philox_.clear();
  releasePool();
  if (state_ == State::Captured) was_reset_ = true;
  state_ = State::Empty;
}

c10::MempoolId_t Graph::pool() const {
  TORCH_CHECK(holds_pool_, "this accel graph has no memory pool: it holds no capture");
  return pool_;
}

void Graph::enableDebugMode() { debug_ = true; }

void Graph::debugDump(const std::string& path) {
  TORCH_CHECK(debug_, "debug_dump() needs enable_debug_mode() first");
  TORCH_CHECK(state_ == State::Captured, "debug_dump() needs a finished capture");
  ACCEL_RT_CHECK(rt::driver().graphDebugDump(exec_, path.c_str()), device_);
}

bool Graph::capturedPhiloxState(AccelGeneratorImpl* generator, uint64_t counters,
                                kernels::PhiloxState* state) {
  if (g_capturing_count.load(std::memory_order_relaxed) == 0) return false;
  const c10::DeviceIndex device = generator->device().index();
  const uint64_t id = rt::driver().streamCaptureId(currentRuntimeStream(device));
  if (id == 0) return false;
  std::lock_guard<std::mutex> lock(g_mu);
  const auto it = std::find_if(g_capturing.begin(), g_capturing.end(),
                               [id](const Graph* g) { return g->capture_id_ == id; });
  if (it == g_capturing.end()) return false;
  std::vector<PhiloxSlot>& slots = (*it)->philox_;
  auto slot = std::find_if(slots.begin(), slots.end(), [&](const PhiloxSlot& s) {
    return s.generator.unsafeGetGeneratorImpl() == generator;
  });
  if (slot == slots.end()) {
    // Allocated on the capturing stream, so from the graph's pool.
    at::Tensor words = at::empty({2}, at::TensorOptions().dtype(at::kLong).device(
                                          c10::Device(c10::DeviceType::PrivateUse1, device)));
    slots.push_back(
        PhiloxSlot{at::Generator(c10::intrusive_ptr<c10::GeneratorImpl>::reclaim_copy(generator)),
                   std::move(words), 0});
    slot = slots.end() - 1;
  }
  state->seed = 0;
  state->offset = slot->offset;
  state->captured = static_cast<const uint64_t*>(slot->seed_offset.data_ptr());
  slot->offset += counters;
  return true;
}

bool isStreamCapturing(const c10::Stream& stream) {
  return rt::driver().streamCaptureId(runtimeStream(stream)) != 0;
}

#ifdef ACCEL_HAS_GRAPH_IMPL_INTERFACE
namespace {

rt::CaptureMode toRuntime(at::GraphCaptureMode mode) {
  switch (mode) {
    case at::GraphCaptureMode::ThreadLocal: return rt::CaptureMode::ThreadLocal;
    case at::GraphCaptureMode::Relaxed: return rt::CaptureMode::Relaxed;
    default: return rt::CaptureMode::Global;  // CUDA's default
  }
}

struct GraphImpl final : at::GraphImplInterface {
  explicit GraphImpl(const at::GraphImplArgs& args) : graph(args.keep_graph) {}
  void capture_begin(c10::MempoolId_t pool, at::GraphCaptureMode mode) override {
    graph.captureBegin(pool, toRuntime(mode));
  }
  void capture_end() override { graph.captureEnd(); }
  void instantiate() override { graph.instantiate(); }
  void replay() override { graph.replay(); }
  void reset() override { graph.reset(); }
  c10::MempoolId_t pool() const override { return graph.pool(); }
  void enable_debug_mode() override { graph.enableDebugMode(); }
  void debug_dump(const std::string& path) override { graph.debugDump(path); }
  Graph graph;
};

}  // namespace

bool registerGraphImpl() {
  // The registry is keyed by the backend's name, known only once it has been renamed; a
  // second registration of a key would end the process.
  static const bool registered = [] {
    at::GraphImplRegistry()->Register(
        c10::DeviceTypeName(c10::DeviceType::PrivateUse1, /*lower_case=*/false),
        [](const at::GraphImplArgs& args) -> std::unique_ptr<at::GraphImplInterface> {
          return std::make_unique<GraphImpl>(args);
        });
    return true;
  }();
  return registered;
}
#else
bool registerGraphImpl() { return false; }
#endif

}  // namespace accel
