// The comm layer: a communicator over the devices of several processes, shaped like NCCL's
// API. Every call queues work on a native stream of the CUDA driver (a cudaStream_t, from
// rt::Driver::nativeStream) and returns. Knows no torch; NCCL itself lives in a plugin,
// libaccel_nccl.so, loaded with dlopen so that nothing else links against it.
#pragma once

#include <cstddef>
#include <string>

namespace accel::comm {

enum class DataType : int { Int8, Uint8, Int32, Int64, Float16, Float32, Float64, BFloat16 };
enum class ReduceOp : int { Sum, Product, Min, Max, Avg, PreMulSum };

// A reduction; PreMulSum multiplies by `factor` first: a host scalar of the data type, or a
// device scalar when factor_on_device.
struct Reduction {
  ReduceOp op = ReduceOp::Sum;
  const void* factor = nullptr;
  bool factor_on_device = false;
};

constexpr size_t kUniqueIdBytes = 128;
struct UniqueId {
  char bytes[kUniqueIdBytes] = {};
};

// Empty when the call succeeded, else the library's message.
using Status = std::string;

class Communicator {
 public:
  virtual ~Communicator() = default;  // destroys the communicator (after its queued work)

  virtual Status allReduce(const void* send, void* recv, size_t count, DataType type,
                           const Reduction& op, void* stream) = 0;
  virtual Status broadcast(const void* send, void* recv, size_t count, DataType type, int root,
                           void* stream) = 0;
  virtual Status reduce(const void* send, void* recv, size_t count, DataType type,
                        const Reduction& op, int root, void* stream) = 0;
  virtual Status allGather(const void* send, void* recv, size_t send_count, DataType type,
                           void* stream) = 0;
  virtual Status reduceScatter(const void* send, void* recv, size_t recv_count, DataType type,
                               const Reduction& op, void* stream) = 0;
  virtual Status send(const void* buf, size_t count, DataType type, int peer, void* stream) = 0;
  virtual Status recv(void* buf, size_t count, DataType type, int peer, void* stream) = 0;
  // Calls between groupStart and groupEnd run as one unit (NCCL's group semantics).
  virtual Status groupStart() = 0;
  virtual Status groupEnd() = 0;
  // An error raised asynchronously (a peer failed); empty while healthy.
  virtual Status asyncError() = 0;
  // Stops queued and running work; the communicator is unusable afterwards.
  virtual void abort() = 0;
};

// What the plugin exports (extern "C" accel_nccl_plugin()).
struct Plugin {
  Status (*unique_id)(UniqueId* id);
  // Collective over the `nranks` processes that pass the same id; `device` is the CUDA device.
  Status (*create)(const UniqueId& id, int nranks, int rank, int device, Communicator** comm);
  const char* (*version)();
};

// Loads libaccel_nccl.so (next to the binary holding this code) on first call. Null, with
// `why` set, when it was not built or does not load.
const Plugin* ncclPlugin(std::string* why);

}  // namespace accel::comm
