#include "aten/fallback.h"

#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>

#include "aten/fallback_call.h"
#include "core/generator.h"
#include "core/sync_point.h"

namespace accel {
namespace {

FallbackMode modeFromEnv() {
  const char* env = std::getenv("TORCH_ACCEL_FALLBACK");
  std::string v = env ? env : "warn";
  if (v == "silent") return FallbackMode::Silent;
  if (v == "error") return FallbackMode::Error;
  TORCH_CHECK(v == "warn" || v.empty(), "TORCH_ACCEL_FALLBACK must be warn, silent or error, got '",
              v, "'");
  return FallbackMode::Warn;
}

std::atomic<int> g_mode{-1};
std::mutex g_mutex;
std::map<std::string, FallbackStat> g_stats;
std::set<std::string> g_warned;

// Calls f on each accel tensor a (list) argument holds.
template <class F>
void forEachAccel(const c10::IValue& v, F f) {
  auto see = [&](const at::Tensor& t) {
    if (t.defined() && t.is_privateuseone()) f(t);
  };
  if (v.isTensor()) {
    see(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) see(t);
  } else if (v.isOptionalTensorList()) {
    for (const auto& t : v.toOptionalTensorVector()) {
      if (t) see(*t);
    }
  }
}

int64_t accelBytes(const c10::IValue& v) {
  int64_t total = 0;
  forEachAccel(v, [&](const at::Tensor& t) {
    // Dense tensors only: nbytes() refuses a sparse or nested one.
    if (t.layout() == at::kStrided && !t.is_nested()) total += static_cast<int64_t>(t.nbytes());
  });
  return total;
}

// Random CPU kernels must draw from the accel generator: hand them a CPU generator derived
// from its state (the accel default generator's when the caller passed none).
void substituteGenerators(const c10::FunctionSchema& schema, torch::jit::Stack* stack, size_t first,
                          c10::DeviceIndex device) {
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    c10::IValue& v = (*stack)[first + i];
    if (v.isGenerator()) {
      const at::Generator& gen = v.toGenerator();
      if (gen.device().is_privateuseone()) {
        v = gen.get<AccelGeneratorImpl>()->fallbackCpuGenerator();
      }
    } else if (v.isNone() && args[i].type()->kind() == c10::TypeKind::OptionalType &&
               args[i].type()->containedType(0)->kind() == c10::TypeKind::GeneratorType) {
      v = defaultGenerator(device).get<AccelGeneratorImpl>()->fallbackCpuGenerator();
    }
  }
}

// Factory ops (device="accel", no tensor inputs) run on the CPU and move their results here.
void redirectDeviceArgs(torch::jit::Stack* stack, size_t first, size_t n,
                        std::optional<c10::Device>* target) {
  for (size_t i = first; i < first + n; ++i) {
    c10::IValue& v = (*stack)[i];
    if (v.isDevice() && v.toDevice().is_privateuseone()) {
      *target = v.toDevice();
      v = c10::Device(c10::DeviceType::CPU);
    }
  }
}

}  // namespace

FallbackMode fallbackMode() {
  int m = g_mode.load(std::memory_order_relaxed);
  if (m < 0) {
    m = static_cast<int>(modeFromEnv());
    g_mode.store(m);
  }
  return static_cast<FallbackMode>(m);
}

void setFallbackMode(FallbackMode mode) { g_mode.store(static_cast<int>(mode)); }

void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  std::string name = schema.operator_name().name;
  if (!schema.overload_name().empty()) name += "." + schema.overload_name();
  FallbackMode mode = fallbackMode();
  TORCH_CHECK_NOT_IMPLEMENTED(mode != FallbackMode::Error, "The operator '", name,
                              "' has no native accel kernel and TORCH_ACCEL_FALLBACK=error "
                              "forbids the CPU fallback.");
  if (mode == FallbackMode::Warn) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_warned.insert(name).second) {
      TORCH_WARN("The operator '", name, "' has no native accel kernel: it runs on the CPU ",
                 "with copies to and from the device (counted in torch_accel.fallback_stats()).");
    }
  }

  size_t nargs = schema.arguments().size();
  size_t first = stack->size() - nargs;
  int64_t bytes_in = 0;
  std::optional<c10::Device> device;
  // The op's device: its first accel tensor argument's, else its first list's.
  std::optional<c10::Device> list_device;
  for (size_t i = first; i < stack->size(); ++i) {
    const c10::IValue& v = (*stack)[i];
    bytes_in += accelBytes(v);
    forEachAccel(v, [&](const at::Tensor& t) {
      std::optional<c10::Device>& d = v.isTensor() ? device : list_device;
      if (!d) d = t.device();
    });
  }
  if (!device) device = list_device;
  redirectDeviceArgs(stack, first, nargs, &device);
  c10::OptionalDeviceGuard guard(device);
  substituteGenerators(schema, stack, first, device ? device->index() : -1);

  auto start = std::chrono::steady_clock::now();
  size_t nret = schema.returns().size();
  {
    // Its copies to and from the CPU wait for the device: one sync point for all of them.
    const std::string what = "aten::" + name + " (the CPU fallback: it copies to and from the CPU)";
    SyncPointScope sync(what.c_str());
    runOnCpu(op, stack, device);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t bytes_out = 0;
  for (size_t i = stack->size() - nret; i < stack->size(); ++i)
    bytes_out += accelBytes((*stack)[i]);

  std::lock_guard<std::mutex> lock(g_mutex);
  FallbackStat& s = g_stats[name];
  s.calls += 1;
  s.seconds += seconds;
  s.bytes_to_host += bytes_in;
  s.bytes_to_device += bytes_out;
}

std::map<std::string, FallbackStat> fallbackStats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_stats;
}

void resetFallbackStats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_stats.clear();
  g_warned.clear();  // a new measurement warns again for each op it sends to the CPU
}

void routeLayoutsToFallback() {
  static torch::Library coo(torch::Library::IMPL, "aten", c10::DispatchKey::SparsePrivateUse1,
                            __FILE__, __LINE__);
  static torch::Library compressed(torch::Library::IMPL, "aten",
                                   c10::DispatchKey::SparseCsrPrivateUse1, __FILE__, __LINE__);
  static torch::Library nested(torch::Library::IMPL, "aten",
                               c10::DispatchKey::NestedTensorPrivateUse1, __FILE__, __LINE__);
  const struct {
    c10::DispatchKey cpu, accel;
    torch::Library& library;
  } routes[] = {
      {c10::DispatchKey::SparseCPU, c10::DispatchKey::SparsePrivateUse1, coo},
      {c10::DispatchKey::SparseCsrCPU, c10::DispatchKey::SparseCsrPrivateUse1, compressed},
      {c10::DispatchKey::NestedTensorCPU, c10::DispatchKey::NestedTensorPrivateUse1, nested}};
  c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    const std::optional<c10::OperatorHandle> op = dispatcher.findOp(name);
    if (!op) continue;
    const std::string schema =
        name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
    for (const auto& r : routes) {
      if (op->hasKernelForDispatchKey(r.cpu) && !op->hasKernelForDispatchKey(r.accel)) {
        r.library.impl(schema.c_str(), torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
      }
    }
  }
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

}  // namespace accel
