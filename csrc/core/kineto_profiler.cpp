// torch.profiler's device activities for accel (ProfilerActivity.PrivateUse1): a Kineto child
// profiler whose session turns the DeviceTracer's spans into kernel, copy and range
// activities, one lane per stream, linked to the operation that launched them.
// Built when torch was built with Kineto (its headers are then in torch/include/kineto).
#ifdef USE_KINETO

#include <libkineto.h>
#include <output_base.h>
#include <time_since_epoch.h>

#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#define ACCEL_HAS_PRIVATEUSE1_PROFILER_REGISTRY 1
#endif

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/device_tracer.h"

namespace accel {
namespace {

using libkineto::ActivityType;

const std::set<ActivityType>& accelActivities() {
  static const std::set<ActivityType> types = {ActivityType::CONCURRENT_KERNEL,
                                               ActivityType::GPU_MEMCPY, ActivityType::GPU_MEMSET,
                                               ActivityType::GPU_USER_ANNOTATION};
  return types;
}

// Copies are the operations named so (copy_, _copy_from, _to_copy, ...).
ActivityType activityType(const DeviceActivity& a, const std::string& name) {
  if (a.user_range) return ActivityType::GPU_USER_ANNOTATION;
  if (name.find("copy") != std::string::npos) return ActivityType::GPU_MEMCPY;
  return ActivityType::CONCURRENT_KERNEL;
}

class AccelSession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    tracer_.start();
    start_ns_ = nowNs();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    tracer_.stop();
    end_ns_ = nowNs();
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return {}; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(
        logger, [](int32_t) -> const libkineto::ITraceActivity* { return nullptr; }, start_ns_,
        end_ns_);
  }

  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback linked_activity, int64_t,
                    int64_t) override {
    buffer_->span = libkineto::TraceSpan(start_ns_, end_ns_, "accel");
    for (const DeviceActivity& a : tracer_.take()) {
      const libkineto::ITraceActivity* op = linked_activity(static_cast<int32_t>(a.correlation));
      const std::string name = op != nullptr ? op->name() : std::string("accel work");
      auto act = std::make_unique<libkineto::GenericTraceActivity>(buffer_->span,
                                                                   activityType(a, name), name);
      act->startTime = a.start_ns;
      act->endTime = a.end_ns;
      act->id = static_cast<int64_t>(a.correlation);
      act->device = a.device;
      act->resource = a.stream;
      // A kernel's time counts towards the operation that launched it; a range's device span
      // is not linked (as Kineto's GPU user annotations), so it is not counted twice.
      act->linked = a.user_range ? nullptr : op;
      act->addMetadata("device", a.device);
      act->addMetadata("stream", a.stream);
      act->addMetadata("correlation", a.correlation);
      streams_.insert({a.device, a.stream});
      buffer_->activities.push_back(std::move(act));
      buffer_->activities.back()->log(logger);  // the logger keeps a pointer: log in place
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{0, kSortIndex, "accel", "accel 0"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> infos;
    for (const auto& [device, stream] : streams_) {
      infos.push_back(libkineto::ResourceInfo{stream, stream, device,
                                              "accel:" + std::to_string(device) + " stream " +
                                                  std::to_string(stream) +
                                                  (stream == 0 ? " (default)" : "")});
    }
    return infos;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

  void pushCorrelationId(uint64_t id) override { tracer_.enter(id, false); }
  void popCorrelationId() override { tracer_.exit(false); }
  void pushUserCorrelationId(uint64_t id) override { tracer_.enter(id, true); }
  void popUserCorrelationId() override { tracer_.exit(true); }

 private:
  static constexpr int64_t kSortIndex = 1 << 20;  // below the CPU rows
  static int64_t nowNs() { return libkineto::timeSinceEpoch(std::chrono::system_clock::now()); }

  DeviceTracer tracer_;
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  std::set<std::pair<int64_t, int64_t>> streams_;  // (device, stream) seen
  // Activities keep a pointer to the buffer's span: the buffer moves out whole.
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_ =
      std::make_unique<libkineto::CpuTraceBuffer>();
};

class AccelActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return accelActivities(); }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<ActivityType>& activity_types, const libkineto::Config& config) override {
    // Only when device activities were asked for (ProfilerActivity.PrivateUse1): a CPU-only
    // profile pays nothing.
    if (!activity_types.count(ActivityType::CONCURRENT_KERNEL) || deviceCount() == 0) {
      return nullptr;
    }
    return std::make_unique<AccelSession>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t, int64_t, const std::set<ActivityType>& activity_types,
      const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

 private:
  const std::string name_ = "accel";
};

#ifdef ACCEL_HAS_PRIVATEUSE1_PROFILER_REGISTRY
REGISTER_PRIVATEUSE1_PROFILER(AccelActivityProfiler);
#else
const bool g_registered = [] {
  libkineto::api().registerProfilerFactory(
      [] { return std::make_unique<AccelActivityProfiler>(); });
  return true;
}();
#endif

}  // namespace
}  // namespace accel

#endif  // USE_KINETO
