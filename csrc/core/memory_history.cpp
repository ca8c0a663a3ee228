#include "core/memory_history.h"

#include <c10/util/Exception.h>
#include <torch/csrc/profiler/combined_traceback.h>

#include "core/device.h"
#include "core/device_allocator.h"

namespace accel {

void recordMemoryHistory(const std::optional<std::string>& enabled,
                         const std::optional<std::string>& context, const std::string& stacks,
                         size_t max_entries, bool clear_history) {
  TORCH_CHECK(!enabled || *enabled == "state" || *enabled == "all",
              "_record_memory_history: enabled must be None, 'state' or 'all', got '", *enabled,
              "'");
  TORCH_CHECK(!context || *context == "state" || *context == "alloc" || *context == "all",
              "_record_memory_history: context must be None, 'state', 'alloc' or 'all', got '",
              *context, "'");
  TORCH_CHECK(stacks == "python" || stacks == "all",
              "_record_memory_history: stacks must be 'python' or 'all', got '", stacks, "'");
  alloc::HistoryConfig config;
  config.enabled = enabled.has_value();
  config.trace = enabled == "all";
  config.trace_contexts = context == "alloc" || context == "all";
  config.trace_free_contexts = context == "all";
  config.max_entries = max_entries;
  if (context) {
    const bool cpp = stacks == "all";
    config.recorder = [cpp]() -> std::shared_ptr<void> {
      return torch::CapturedTraceback::gather(/*python=*/true, /*script=*/true, cpp);
    };
  }
  for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
    deviceCachingAllocator(d).setHistory(config, clear_history);
  }
}

torch::CapturedTraceback* tracebackOf(const std::shared_ptr<void>& context) {
  return static_cast<torch::CapturedTraceback*>(context.get());
}

}  // namespace accel
