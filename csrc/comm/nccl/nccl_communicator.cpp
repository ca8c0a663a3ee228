// The NCCL plugin (libaccel_nccl.so): comm::Communicator over NCCL, from the nvidia-nccl
// wheel or the toolkit. Built with the CUDA plugin when NCCL's headers are found.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <string>

#include "comm/communicator.h"

namespace accel::comm {
namespace {

Status check(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return {};
  std::string message = std::string(what) + ": " + ncclGetErrorString(r);
  if (const char* last = ncclGetLastError(nullptr)) {
    if (*last) message += std::string(" (") + last + ")";
  }
  return message;
}

ncclDataType_t ncclType(DataType t) {
  switch (t) {
    case DataType::Int8: return ncclInt8;
    case DataType::Uint8: return ncclUint8;
    case DataType::Int32: return ncclInt32;
    case DataType::Int64: return ncclInt64;
    case DataType::Float16: return ncclFloat16;
    case DataType::Float32: return ncclFloat32;
    case DataType::Float64: return ncclFloat64;
    case DataType::BFloat16: return ncclBfloat16;
  }
  return ncclFloat32;
}

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(ncclComm_t comm) : comm_(comm) {}
  ~NcclCommunicator() override {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
  }

  Status allReduce(const void* send, void* recv, size_t count, DataType type, const Reduction& op,
                   void* stream) override {
    return withOp(op, type, [&](ncclRedOp_t r) {
      return check(ncclAllReduce(send, recv, count, ncclType(type), r, comm_, cuda(stream)),
                   "ncclAllReduce");
    });
  }
  Status broadcast(const void* send, void* recv, size_t count, DataType type, int root,
                   void* stream) override {
    return check(ncclBroadcast(send, recv, count, ncclType(type), root, comm_, cuda(stream)),
                 "ncclBroadcast");
  }
  Status reduce(const void* send, void* recv, size_t count, DataType type, const Reduction& op,
                int root, void* stream) override {
    return withOp(op, type, [&](ncclRedOp_t r) {
      return check(ncclReduce(send, recv, count, ncclType(type), r, root, comm_, cuda(stream)),
                   "ncclReduce");
    });
  }
  Status allGather(const void* send, void* recv, size_t send_count, DataType type,
                   void* stream) override {
    return check(ncclAllGather(send, recv, send_count, ncclType(type), comm_, cuda(stream)),
                 "ncclAllGather");
  }
  Status reduceScatter(const void* send, void* recv, size_t recv_count, DataType type,
                       const Reduction& op, void* stream) override {
    return withOp(op, type, [&](ncclRedOp_t r) {
      return check(
          ncclReduceScatter(send, recv, recv_count, ncclType(type), r, comm_, cuda(stream)),
          "ncclReduceScatter");
    });
  }
  Status send(const void* buf, size_t count, DataType type, int peer, void* stream) override {
    return check(ncclSend(buf, count, ncclType(type), peer, comm_, cuda(stream)), "ncclSend");
  }
  Status recv(void* buf, size_t count, DataType type, int peer, void* stream) override {
    return check(ncclRecv(buf, count, ncclType(type), peer, comm_, cuda(stream)), "ncclRecv");
  }
  Status groupStart() override { return check(ncclGroupStart(), "ncclGroupStart"); }
  Status groupEnd() override { return check(ncclGroupEnd(), "ncclGroupEnd"); }
  Status asyncError() override {
    ncclResult_t state = ncclSuccess;
    Status s = check(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError");
    return s.empty() ? check(state, "NCCL asynchronous error") : s;
  }
  void abort() override {
    if (comm_ != nullptr) ncclCommAbort(comm_);
    comm_ = nullptr;
  }

 private:
  static cudaStream_t cuda(void* stream) { return static_cast<cudaStream_t>(stream); }

  template <typename Fn>
  Status withOp(const Reduction& op, DataType type, Fn&& fn) {
    switch (op.op) {
      case ReduceOp::Sum: return fn(ncclSum);
      case ReduceOp::Product: return fn(ncclProd);
      case ReduceOp::Min: return fn(ncclMin);
      case ReduceOp::Max: return fn(ncclMax);
      case ReduceOp::Avg: return fn(ncclAvg);
      case ReduceOp::PreMulSum: break;
    }
    ncclRedOp_t premul;
    Status s = check(ncclRedOpCreatePreMulSum(
                         &premul, const_cast<void*>(op.factor), ncclType(type),
                         op.factor_on_device ? ncclScalarDevice : ncclScalarHostImmediate, comm_),
                     "ncclRedOpCreatePreMulSum");
    if (!s.empty()) return s;
    s = fn(premul);
    ncclRedOpDestroy(premul, comm_);
    return s;
  }

  ncclComm_t comm_;
};

Status uniqueId(UniqueId* id) {
  static_assert(sizeof(ncclUniqueId) <= kUniqueIdBytes, "ncclUniqueId does not fit");
  ncclUniqueId nid;
  Status s = check(ncclGetUniqueId(&nid), "ncclGetUniqueId");
  if (s.empty()) std::memcpy(id->bytes, &nid, sizeof(nid));
  return s;
}

// A failed CUDA call's code is taken off the thread's last-error slot, as the driver's error
// rule does (runtime/cuda/error_rule.h): the next launch check must not report it again.
Status checkCuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  (void)cudaGetLastError();
  return std::string(what) + ": " + cudaGetErrorString(e);
}

Status create(const UniqueId& id, int nranks, int rank, int device, Communicator** out) {
  // ncclCommInitRank binds the communicator to the current device; the caller's current
  // device is restored afterwards, as a device guard would.
  int previous = 0;
  Status s = checkCuda(cudaGetDevice(&previous), "cudaGetDevice");
  if (s.empty()) s = checkCuda(cudaSetDevice(device), "cudaSetDevice");
  if (!s.empty()) return s;
  ncclUniqueId nid;
  std::memcpy(&nid, id.bytes, sizeof(nid));
  ncclComm_t comm = nullptr;
  s = check(ncclCommInitRank(&comm, nranks, nid, rank), "ncclCommInitRank");
  if (s.empty()) *out = new NcclCommunicator(comm);
  const Status restored = checkCuda(cudaSetDevice(previous), "cudaSetDevice");
  if (s.empty() && !restored.empty()) {
    delete *out;  // a failed create hands back nothing
    *out = nullptr;
    return restored;
  }
  return s;
}

const char* version() {
  static std::string v = [] {
    int code = 0;
    ncclGetVersion(&code);
    return std::to_string(code);
  }();
  return v.c_str();
}

const Plugin kPlugin{&uniqueId, &create, &version};

}  // namespace
}  // namespace accel::comm

extern "C" __attribute__((visibility("default"))) const accel::comm::Plugin* accel_nccl_plugin() {
  return &accel::comm::kPlugin;
}
