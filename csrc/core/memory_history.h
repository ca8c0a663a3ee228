// Memory history with stacks (torch.accel.memory._record_memory_history): the caching
// allocator records its actions; this layer hands it a recorder that captures where each
// allocation came from (Python, TorchScript and, with stacks="all", C++ frames).
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace torch {
struct CapturedTraceback;
}

namespace accel {

// The arguments of torch.cuda.memory._record_memory_history, for every accel device:
// enabled None/"state"/"all", context None/"state"/"alloc"/"all", stacks "python"/"all".
void recordMemoryHistory(const std::optional<std::string>& enabled,
                         const std::optional<std::string>& context, const std::string& stacks,
                         size_t max_entries, bool clear_history);

// The traceback behind a context the recorder produced (null for none).
torch::CapturedTraceback* tracebackOf(const std::shared_ptr<void>& context);

}  // namespace accel
