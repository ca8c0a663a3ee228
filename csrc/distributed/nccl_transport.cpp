#include "distributed/nccl_transport.h"

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "comm/communicator.h"
#include "core/rt_check.h"

namespace accel::dist {
namespace {

comm::DataType commType(at::ScalarType t) {
  switch (t) {
    case at::kBool:
    case at::kByte: return comm::DataType::Uint8;
    case at::kChar: return comm::DataType::Int8;
    case at::kInt: return comm::DataType::Int32;
    case at::kLong: return comm::DataType::Int64;
    case at::kHalf: return comm::DataType::Float16;
    case at::kFloat: return comm::DataType::Float32;
    case at::kDouble: return comm::DataType::Float64;
    case at::kBFloat16: return comm::DataType::BFloat16;
    default: TORCH_CHECK_TYPE(false, "accl on NCCL: unsupported dtype ", t);
  }
}

// A reduction with its PREMUL_SUM factor kept alive for the call.
struct CommReduction {
  comm::Reduction r;
  at::Tensor factor;  // host scalar or device scalar of the data type
};

CommReduction commReduction(const c10d::ReduceOp& op, at::ScalarType t) {
  CommReduction out;
  const bool is_bool = t == at::kBool;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: out.r.op = is_bool ? comm::ReduceOp::Max : comm::ReduceOp::Sum; break;
    case c10d::ReduceOp::PRODUCT:
      out.r.op = is_bool ? comm::ReduceOp::Min : comm::ReduceOp::Product;
      break;
    case c10d::ReduceOp::MIN: out.r.op = comm::ReduceOp::Min; break;
    case c10d::ReduceOp::MAX: out.r.op = comm::ReduceOp::Max; break;
    case c10d::ReduceOp::AVG: out.r.op = comm::ReduceOp::Avg; break;
    case c10d::ReduceOp::PREMUL_SUM: {
      out.r.op = comm::ReduceOp::PreMulSum;
      auto* s = static_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
      out.factor = s->tensor_factor.defined()
                       ? s->tensor_factor.to(t)
                       : at::scalar_tensor(s->double_factor, at::TensorOptions().dtype(t));
      out.r.factor = out.factor.const_data_ptr();
      out.r.factor_on_device = !out.factor.device().is_cpu();
      break;
    }
    default:
      TORCH_CHECK_VALUE(false, "accl on NCCL: unsupported reduce op ", static_cast<int>(op.op_));
  }
  return out;
}

c10::DistBackendError distError(const std::string& message) {
  return c10::DistBackendError(c10::SourceLocation{__func__, __FILE__, __LINE__}, message);
}

class NcclTransport final : public Transport {
 public:
  NcclTransport(const comm::Plugin& plugin, c10::intrusive_ptr<c10d::Store> store,
                c10::intrusive_ptr<c10d::Backend> gloo, int rank, int world,
                std::chrono::milliseconds timeout)
      : plugin_(plugin),
        store_(std::move(store)),
        gloo_(std::move(gloo)),
        rank_(rank),
        world_(world),
        timeout_(timeout) {}

  ~NcclTransport() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
    for (Watched& w : watched_) rt::driver().eventDestroy(w.done);
  }

  const char* name() const override { return "nccl"; }
  bool pointToPointLanes() const override { return false; }

  void submit(std::vector<Op> ops, const Fingerprint& fingerprint, const Submission& s) override {
    try {
      if (!fingerprint.empty()) fingerprint.check(*gloo_, rank_, s.sequence, s.group);
      {
        std::lock_guard<std::mutex> lock(comm_mu_);
        TORCH_CHECK_WITH(DistBackendError, aborted_.empty(), aborted_);
        comm::Communicator& c = communicator(s.device);
        ok(c.asyncError());
        void* stream = rt::driver().nativeStream(s.stream);
        ok(c.groupStart());
        for (Op& op : ops) queue(c, op, s.device, stream);
        ok(c.groupEnd());
      }
      watch(s);  // after comm_mu_ is released: the watchdog takes mu_, then comm_mu_
    } catch (const std::exception& e) {
      const std::string message = std::string("accl: ") + s.name +
                                  " on accel:" + std::to_string(s.device) + " failed: " + e.what();
      auto error = std::make_exception_ptr(distError(message));
      s.work_failure->set(error, message);
      s.group_failure->set(error, message);
      std::rethrow_exception(error);
    }
  }

 private:
  // A queued batch the watchdog follows until its kernels have run.
  struct Watched {
    rt::Event done = nullptr;
    std::chrono::steady_clock::time_point deadline;
    std::string what;  // "all_reduce #12 on accel:0"
    std::shared_ptr<Failure> work_failure, group_failure;
  };

  // NCCL kernels whose peer died never finish, and nothing reports it: as ProcessGroupNCCL's
  // watchdog, a thread polls each batch's completion and the communicator's asynchronous
  // error, and past the timeout (or on an error) aborts the communicator, which ends the
  // kernels, and fails the batch and the group with a DistBackendError.
  void watch(const Submission& s) {
    Watched w;
    ACCEL_RT_CHECK(rt::driver().eventCreate(s.device, &w.done, rt::kEventDisableTiming), s.device);
    const rt::Error recorded = rt::driver().eventRecord(w.done, s.stream);
    if (recorded != rt::Error::Success) rt::driver().eventDestroy(w.done);
    ACCEL_RT_CHECK(recorded, s.device);
    w.deadline = std::chrono::steady_clock::now() + timeout_;
    w.what = std::string(s.name) + " #" + std::to_string(s.sequence) +
             " on accel:" + std::to_string(s.device);
    w.work_failure = s.work_failure;
    w.group_failure = s.group_failure;
    std::lock_guard<std::mutex> lock(mu_);
    watched_.push_back(std::move(w));
    if (!watchdog_.joinable()) watchdog_ = std::thread([this] { watchLoop(); });
  }

  void watchLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(50));
      size_t kept = 0;
      std::string failure;
      for (Watched& w : watched_) {
        const rt::Error state = rt::driver().eventQuery(w.done);
        if (state == rt::Error::Success) {
          rt::driver().eventDestroy(w.done);
          continue;
        }
        if (failure.empty()) {
          if (state != rt::Error::NotReady) {
            failure = w.what + " failed on the device: " + rt::errorString(state);
          } else if (std::chrono::steady_clock::now() > w.deadline) {
            failure = w.what + " did not complete within " + std::to_string(timeout_.count()) +
                      " ms (a peer died or did not call it)";
          } else {
            failure = asyncError();
            if (!failure.empty()) failure = w.what + ": " + failure;
          }
        }
        watched_[kept++] = std::move(w);
      }
      watched_.resize(kept);
      if (!failure.empty()) abortAll(failure);
    }
  }

  std::string asyncError() {
    std::lock_guard<std::mutex> lock(comm_mu_);
    return comm_ && aborted_.empty() ? comm_->asyncError() : std::string();
  }

  // Aborting ends the queued NCCL kernels, so every watched batch fails with the message.
  void abortAll(const std::string& why) {
    const std::string message = "accl: " + why + "; the NCCL communicator was aborted";
    {
      std::lock_guard<std::mutex> lock(comm_mu_);
      if (comm_ && aborted_.empty()) comm_->abort();
      aborted_ = message;
    }
    auto error = std::make_exception_ptr(distError(message));
    for (Watched& w : watched_) {
      w.work_failure->set(error, message);
      w.group_failure->set(error, message);
      rt::driver().eventDestroy(w.done);
    }
    watched_.clear();
  }

  static void ok(const comm::Status& status) {
    TORCH_CHECK_WITH(DistBackendError, status.empty(), status);
  }

  // Created on first use, as ProcessGroupNCCL does: rank 0 publishes the id in the store.
  comm::Communicator& communicator(int device) {
    if (comm_) return *comm_;
    comm::UniqueId id;
    const std::string key = "accl_nccl_unique_id";
    if (rank_ == 0) {
      ok(plugin_.unique_id(&id));
      store_->set(key, std::vector<uint8_t>(id.bytes, id.bytes + comm::kUniqueIdBytes));
    } else {
      std::vector<uint8_t> bytes = store_->get(key);
      TORCH_CHECK(bytes.size() == comm::kUniqueIdBytes, "accl: bad NCCL unique id in the store");
      std::copy(bytes.begin(), bytes.end(), id.bytes);
    }
    comm::Communicator* c = nullptr;
    ok(plugin_.create(id, world_, rank_, device, &c));
    comm_.reset(c);
    return *comm_;
  }

  void queue(comm::Communicator& c, Op& op, int device, void* stream) {
    const at::Tensor& any = op.input.defined() ? op.input : op.output;
    const at::ScalarType t = any.defined() ? any.scalar_type() : at::kByte;
    const comm::DataType type = commType(t);
    const size_t n_in = op.input.defined() ? op.input.numel() : 0;
    const size_t n_out = op.output.defined() ? op.output.numel() : 0;
    const size_t elem = any.defined() ? any.element_size() : 1;
    auto in = [&](size_t off = 0) {
      return static_cast<const char*>(op.input.const_data_ptr()) + off * elem;
    };
    auto out = [&](size_t off = 0) {
      return static_cast<char*>(op.output.data_ptr()) + off * elem;
    };
    switch (op.kind) {
      case OpKind::AllReduce: {
        CommReduction r = commReduction(op.reduce, t);
        ok(c.allReduce(in(), out(), n_in, type, r.r, stream));
        break;
      }
      case OpKind::Broadcast: ok(c.broadcast(in(), out(), n_in, type, op.peer, stream)); break;
      case OpKind::Reduce: {
        CommReduction r = commReduction(op.reduce, t);
        ok(c.reduce(in(), out(), n_in, type, r.r, op.peer, stream));
        break;
      }
      case OpKind::AllGather: ok(c.allGather(in(), out(), n_in, type, stream)); break;
      case OpKind::ReduceScatter: {
        CommReduction r = commReduction(op.reduce, t);
        ok(c.reduceScatter(in(), out(), n_out, type, r.r, stream));
        break;
      }
      case OpKind::AllToAll: {
        size_t in_off = 0, out_off = 0;
        for (int r = 0; r < world_; ++r) {
          ok(c.send(in(in_off), op.input_splits[r], type, r, stream));
          ok(c.recv(out(out_off), op.output_splits[r], type, r, stream));
          in_off += op.input_splits[r];
          out_off += op.output_splits[r];
        }
        break;
      }
      case OpKind::Gather:
        if (op.peer == rank_) {
          for (int r = 0; r < world_; ++r) ok(c.recv(out(r * n_in), n_in, type, r, stream));
        }
        ok(c.send(in(), n_in, type, op.peer, stream));
        break;
      case OpKind::Scatter:
        if (op.peer == rank_) {
          for (int r = 0; r < world_; ++r) ok(c.send(in(r * n_out), n_out, type, r, stream));
        }
        ok(c.recv(out(), n_out, type, op.peer, stream));
        break;
      case OpKind::Send: ok(c.send(in(), n_in, type, op.peer, stream)); break;
      case OpKind::Recv: ok(c.recv(out(), n_out, type, op.peer, stream)); break;
      case OpKind::Barrier: {
        // NCCL's barrier: an all-reduce of one element.
        if (!barrier_.defined()) {
          barrier_ = at::zeros({1}, at::TensorOptions()
                                        .dtype(at::kFloat)
                                        .device(c10::Device(c10::DeviceType::PrivateUse1, device)));
        }
        ok(c.allReduce(barrier_.const_data_ptr(), barrier_.data_ptr(), 1, comm::DataType::Float32,
                       comm::Reduction{}, stream));
        break;
      }
    }
  }

  const comm::Plugin& plugin_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> gloo_;
  const int rank_;
  const int world_;
  const std::chrono::milliseconds timeout_;
  std::mutex comm_mu_;  // the communicator: submit, the watchdog's poll and its abort
  std::unique_ptr<comm::Communicator> comm_;
  std::string aborted_;  // why the watchdog aborted the communicator: later batches fail
  at::Tensor barrier_;
  std::mutex mu_;  // the watched batches
  std::condition_variable wake_;
  std::vector<Watched> watched_;
  bool stopping_ = false;
  std::thread watchdog_;
};

}  // namespace

std::unique_ptr<Transport> makeNcclTransport(const c10::intrusive_ptr<c10d::Store>& store,
                                             c10::intrusive_ptr<c10d::Backend> gloo, int rank,
                                             int world_size, std::chrono::milliseconds timeout) {
  std::string why;
  const comm::Plugin* plugin = comm::ncclPlugin(&why);
  TORCH_CHECK(plugin != nullptr, "accl on the CUDA driver needs NCCL: ", why);
  return std::make_unique<NcclTransport>(*plugin, store, std::move(gloo), rank, world_size,
                                         timeout);
}

}  // namespace accel::dist
