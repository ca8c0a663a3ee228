// torch.accel.memory._snapshot() and _record_memory_history(): the allocator's segments,
// blocks and action trace in the dictionary layout of torch.cuda.memory._snapshot(), with
// stack frames symbolized as torch does, so torch.cuda._memory_viz renders them.
#include <torch/csrc/profiler/combined_traceback.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdlib>
#include <vector>

#include "core/device.h"
#include "core/device_allocator.h"
#include "core/memory_history.h"

namespace py = pybind11;

namespace accel {
namespace {

const char* actionName(alloc::TraceEntry::Action action) {
  switch (action) {
    case alloc::TraceEntry::kAlloc: return "alloc";
    case alloc::TraceEntry::kFreeRequested: return "free_requested";
    case alloc::TraceEntry::kFreeCompleted: return "free_completed";
    case alloc::TraceEntry::kSegmentAlloc: return "segment_alloc";
    case alloc::TraceEntry::kSegmentFree: return "segment_free";
    case alloc::TraceEntry::kOom: return "oom";
  }
  return "unknown";
}

// Collects the dictionaries that want frames, then symbolizes every traceback in one batch.
class Frames {
 public:
  void attach(py::dict& d, const std::shared_ptr<void>& context) {
    torch::CapturedTraceback* tb = tracebackOf(context);
    if (tb == nullptr) {
      d["frames"] = py::list();
      return;
    }
    owners_.push_back(d);
    tracebacks_.push_back(tb);
  }
  // Frames as torch.cuda's snapshot has them: {"filename", "line", "name"}, innermost first.
  void resolve() {
    if (tracebacks_.empty()) return;
    const torch::SymbolizedTracebacks symbolized = torch::symbolize(tracebacks_);
    std::vector<py::dict> all;
    all.reserve(symbolized.all_frames.size());
    for (const auto& f : symbolized.all_frames) {
      py::dict frame;
      frame["filename"] = f.filename;
      frame["line"] = f.lineno;
      frame["name"] = f.funcname;
      all.push_back(frame);
    }
    for (size_t i = 0; i < symbolized.tracebacks.size(); ++i) {
      py::list frames;
      for (uint64_t index : symbolized.tracebacks[i]) frames.append(all[index]);
      owners_[i]["frames"] = frames;
    }
  }

 private:
  std::vector<py::dict> owners_;
  std::vector<torch::CapturedTraceback*> tracebacks_;
};

py::list segments(c10::DeviceIndex device, Frames& frames) {
  py::list out;
  for (const alloc::SegmentInfo& s : deviceCachingAllocator(device).snapshot()) {
    py::dict seg;
    seg["device"] = device;
    seg["address"] = s.address;
    seg["total_size"] = s.total_size;
    seg["allocated_size"] = s.allocated_size;
    seg["active_size"] = s.active_size;
    seg["requested_size"] = s.requested_size;
    seg["stream"] = s.stream;
    seg["segment_type"] = s.is_large ? "large" : "small";
    seg["segment_pool_id"] = py::make_tuple(0, 0);
    seg["is_expandable"] = false;
    frames.attach(seg, s.context);
    py::list blocks;
    uintptr_t address = s.address;
    for (const alloc::BlockInfo& b : s.blocks) {
      py::dict blk;
      blk["address"] = address;
      blk["size"] = b.size;
      blk["requested_size"] = b.requested_size;
      blk["state"] =
          b.allocated ? "active_allocated" : (b.active ? "active_pending_free" : "inactive");
      frames.attach(blk, b.context);
      blocks.append(blk);
      address += b.size;
    }
    seg["blocks"] = blocks;
    out.append(seg);
  }
  return out;
}

py::list deviceTrace(c10::DeviceIndex device, Frames& frames) {
  py::list out;
  for (const alloc::TraceEntry& e : deviceCachingAllocator(device).trace()) {
    py::dict entry;
    entry["action"] = actionName(e.action);
    if (e.action == alloc::TraceEntry::kOom) {
      entry["device_free"] = e.addr;
    } else {
      entry["addr"] = e.addr;
    }
    entry["size"] = e.size;
    entry["stream"] = e.stream;
    entry["time_us"] = e.time_us;
    frames.attach(entry, e.context);
    out.append(entry);
  }
  return out;
}

py::dict snapshot() {
  Frames frames;
  py::list all_segments;
  py::list traces;
  for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
    for (py::handle seg : segments(d, frames)) all_segments.append(seg);
    traces.append(deviceTrace(d, frames));
  }
  frames.resolve();
  py::dict settings;
  const char* conf = std::getenv("TORCH_ACCEL_ALLOC_CONF");
  settings["TORCH_ACCEL_ALLOC_CONF"] = conf != nullptr ? conf : "";
  settings["max_split_size"] =
      deviceCount() > 0 ? deviceCachingAllocator(0).stats().max_split_size : -1;
  settings["expandable_segments"] = false;
  py::dict out;
  out["segments"] = all_segments;
  out["device_traces"] = traces;
  out["allocator_settings"] = settings;
  return out;
}

}  // namespace

void registerMemorySnapshot(py::module& m) {
  m.def("_memory_snapshot", &snapshot);
  m.def("_record_memory_history", &recordMemoryHistory, py::arg("enabled"), py::arg("context"),
        py::arg("stacks"), py::arg("max_entries"), py::arg("clear_history"));
}

}  // namespace accel
