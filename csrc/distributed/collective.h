// The collectives of torch.distributed by their user-facing names, for error messages and
// for the cross-rank check.
#pragma once

#include <cstdint>

namespace accel::dist {

enum class Collective : int64_t {
  AllReduce = 1,
  AllReduceCoalesced,
  Broadcast,
  Reduce,
  AllGather,
  AllGatherIntoTensor,
  AllGatherCoalesced,
  AllGatherIntoTensorCoalesced,
  ReduceScatter,
  ReduceScatterTensor,
  ReduceScatterTensorCoalesced,
  AllToAll,
  AllToAllSingle,
  Gather,
  Scatter,
  Barrier,
  Send,
  Recv,
};

inline const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::AllReduceCoalesced: return "all_reduce_coalesced";
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::AllGatherIntoTensor: return "all_gather_into_tensor";
    case Collective::AllGatherCoalesced: return "all_gather_coalesced";
    case Collective::AllGatherIntoTensorCoalesced: return "all_gather_into_tensor_coalesced";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::ReduceScatterTensor: return "reduce_scatter_tensor";
    case Collective::ReduceScatterTensorCoalesced: return "reduce_scatter_tensor_coalesced";
    case Collective::AllToAll: return "all_to_all";
    case Collective::AllToAllSingle: return "all_to_all_single";
    case Collective::Gather: return "gather";
    case Collective::Scatter: return "scatter";
    case Collective::Barrier: return "barrier";
    case Collective::Send: return "send";
    case Collective::Recv: return "recv";
  }
  return "unknown collective";
}

}  // namespace accel::dist
