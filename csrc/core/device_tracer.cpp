#include "core/device_tracer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <utility>

#include "core/device.h"
#include "core/stream_pool.h"

namespace accel {
namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t workCount() {
  uint64_t n = 0;
  rt::driver().threadWorkCount(&n);
  return n;
}

std::atomic<uint64_t> g_generation{0};

}  // namespace

struct DeviceTracer::Frame {
  uint64_t correlation;
  bool user_range;
  int64_t start_ns;
  uint64_t work_at_enter;
  uint64_t child_work = 0;
  bool has_child = false;
  c10::DeviceIndex device;
  c10::Stream stream;
  int64_t first_op = -1;  // ranges: the operations traced inside, as indices into pending_
  int64_t last_op = -1;
};

DeviceTracer::DeviceTracer() : generation_(++g_generation) {}

DeviceTracer::~DeviceTracer() {
  stop();
  take();
}

std::vector<DeviceTracer::Frame>& DeviceTracer::frames() {
  // One stack per thread, reset when a new tracer (session) first sees the thread.
  thread_local uint64_t generation = 0;
  thread_local std::vector<Frame> stack;
  if (generation != generation_) {
    stack.clear();
    generation = generation_;
  }
  return stack;
}

void DeviceTracer::start() {
  uint64_t probe = 0;
  counts_work_ = rt::driver().threadWorkCount(&probe);
  const c10::DeviceIndex n = deviceCount();
  ref_.assign(n, nullptr);
  ref_ns_.assign(n, 0);
  for (c10::DeviceIndex d = 0; d < n; ++d) {
    // On an idle device the reference event completes between these two clock readings.
    if (rt::driver().deviceSynchronize(d) != rt::Error::Success) continue;
    rt::Event ev = nullptr;
    if (rt::driver().eventCreate(d, &ev, rt::kEventDefault) != rt::Error::Success) continue;
    const int64_t before = nowNs();
    if (rt::driver().eventRecord(ev, rt::driver().defaultStream(d)) != rt::Error::Success ||
        rt::driver().eventSynchronize(ev) != rt::Error::Success) {
      rt::driver().eventDestroy(ev);
      continue;
    }
    ref_ns_[d] = before + (nowNs() - before) / 2;
    ref_[d] = ev;
  }
  active_ = true;
}

void DeviceTracer::enter(uint64_t correlation, bool user_range) {
  if (!active_) return;
  std::vector<Frame>& stack = frames();
  if (!stack.empty()) stack.back().has_child = true;
  const c10::DeviceIndex device = currentDevice();
  stack.push_back(Frame{correlation, user_range, nowNs(), workCount(), 0, false, device,
                        currentStream(device)});
}

void DeviceTracer::exit(bool user_range) {
  if (!active_) return;
  std::vector<Frame>& stack = frames();
  if (stack.empty()) return;  // entered before the session started
  Frame frame = stack.back();
  stack.pop_back();
  const uint64_t work = workCount() - frame.work_at_enter;
  if (!stack.empty()) stack.back().child_work += work;
  const bool launched =
      counts_work_ ? work > frame.child_work : !frame.has_child && !frame.user_range;
  if (frame.user_range ? frame.first_op >= 0 : launched) emit(frame, stack);
}

void DeviceTracer::emit(const Frame& frame, std::vector<Frame>& stack) {
  Pending p;
  p.activity.correlation = frame.correlation;
  p.activity.user_range = frame.user_range;
  p.activity.device = frame.device;
  p.activity.stream = frame.stream.id();
  p.activity.start_ns = frame.start_ns;
  std::lock_guard<std::mutex> lock(mu_);
  if (frame.user_range) {
    p.first_op = frame.first_op;
    p.last_op = frame.last_op;
    pending_.push_back(p);
    return;
  }
  rt::Event ev = nullptr;
  if (rt::driver().eventCreate(frame.device, &ev, rt::kEventDefault) != rt::Error::Success) {
    return;
  }
  if (rt::driver().eventRecord(ev, runtimeStream(frame.stream)) != rt::Error::Success) {
    rt::driver().eventDestroy(ev);
    return;
  }
  p.end = ev;
  const auto index = static_cast<int64_t>(pending_.size());
  pending_.push_back(p);
  for (Frame& outer : stack) {
    if (!outer.user_range) continue;
    if (outer.first_op < 0) outer.first_op = index;
    outer.last_op = index;
  }
}

void DeviceTracer::stop() {
  active_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Pending& p : pending_) {
    if (p.end != nullptr) rt::driver().eventSynchronize(p.end);
  }
}

std::vector<DeviceActivity> DeviceTracer::take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<DeviceActivity> out;
  std::vector<bool> timed(pending_.size(), false);
  std::vector<DeviceActivity> ops(pending_.size());
  // Where each stream's previous span ended: the next one cannot start before.
  std::map<std::pair<int, int64_t>, int64_t> stream_free;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    if (p.end == nullptr) continue;
    DeviceActivity a = p.activity;
    float ms = 0;
    const rt::Event ref = a.device < static_cast<int>(ref_.size()) ? ref_[a.device] : nullptr;
    const bool ok = ref != nullptr && rt::driver().eventQuery(p.end) == rt::Error::Success &&
                    rt::driver().eventElapsedTime(&ms, ref, p.end) == rt::Error::Success;
    rt::driver().eventDestroy(p.end);
    p.end = nullptr;
    if (!ok) continue;
    a.end_ns = ref_ns_[a.device] + static_cast<int64_t>(static_cast<double>(ms) * 1e6);
    int64_t& free_at = stream_free[{a.device, a.stream}];
    a.start_ns = std::max(a.start_ns, free_at);
    // The clocks agree to within the reference's accuracy: never a reversed span.
    a.end_ns = std::max(a.end_ns, a.start_ns);
    free_at = a.end_ns;
    ops[i] = a;
    timed[i] = true;
    out.push_back(a);
  }
  for (const Pending& p : pending_) {
    if (p.end != nullptr || !p.activity.user_range) continue;
    DeviceActivity a = p.activity;
    bool any = false;
    for (int64_t i = p.first_op; i >= 0 && i <= p.last_op; ++i) {
      if (!timed[i] || ops[i].device != a.device) continue;
      a.start_ns = any ? std::min(a.start_ns, ops[i].start_ns) : ops[i].start_ns;
      a.end_ns = any ? std::max(a.end_ns, ops[i].end_ns) : ops[i].end_ns;
      a.stream = ops[i].stream;
      any = true;
    }
    if (any) out.push_back(a);
  }
  pending_.clear();
  for (rt::Event& ev : ref_) {
    if (ev != nullptr) rt::driver().eventDestroy(ev);
    ev = nullptr;
  }
  return out;
}

}  // namespace accel
