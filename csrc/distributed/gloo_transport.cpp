#include "distributed/gloo_transport.h"

#include <functional>

#include <ATen/ATen.h>

#include "core/rt_check.h"
#include "distributed/pinned_staging_pool.h"

namespace accel::dist {
namespace {

// The point-to-point header that lets a receiver check what it is sent.
constexpr int64_t kHeaderMagic = 0x6163636c;  // "accl"
enum HeaderWord { kMagic, kDtype, kNumel, kHeaderWords };

// One op with its pinned host views (CPU tensors over staging blocks).
struct StagedOp {
  Op op;
  at::Tensor host_in;
  at::Tensor host_out;     // the same tensor as host_in when the op works in place
  at::Tensor host_factor;  // PREMUL_SUM with a tensor factor
};

bool inPlace(OpKind k) {
  return k == OpKind::AllReduce || k == OpKind::Broadcast || k == OpKind::Reduce;
}

// Whether this rank sends / receives data of the op through its host buffers.
bool readsInput(const Op& op, int rank) {
  switch (op.kind) {
    case OpKind::Broadcast:
    case OpKind::Scatter: return op.peer == rank;
    case OpKind::Recv:
    case OpKind::Barrier: return false;
    default: return true;
  }
}
bool writesOutput(const Op& op, int rank) {
  switch (op.kind) {
    case OpKind::Broadcast: return op.peer != rank;
    case OpKind::Reduce:
    case OpKind::Gather: return op.peer == rank;
    case OpKind::Send:
    case OpKind::Barrier: return false;
    default: return true;
  }
}

size_t nbytes(const at::Tensor& t) { return t.defined() ? t.numel() * t.element_size() : 0; }

// Runs fn on the stream, in order with its copies. An exception it throws becomes the
// stream's error (the host driver's sticky error), reported by the next synchronize.
void enqueueHostTask(rt::Stream stream, int device, std::function<void()> fn) {
  auto* task = new std::function<void()>(std::move(fn));
  rt::Error err = rt::driver().launchHostFunc(
      stream,
      [](void* p) {
        std::unique_ptr<std::function<void()>> owned(static_cast<std::function<void()>*>(p));
        (*owned)();
      },
      task);
  if (err != rt::Error::Success && err != rt::Error::LaunchFailure) delete task;
  ACCEL_RT_CHECK(err, device);
}

std::string messageOf(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

// c10d's reduce ops that gloo lacks: AVG sums and divides, PREMUL_SUM multiplies and sums.
c10d::ReduceOp glooReduceOp(const c10d::ReduceOp& op) {
  if (op == c10d::ReduceOp::AVG || op == c10d::ReduceOp::PREMUL_SUM) return c10d::ReduceOp::SUM;
  return op;
}

void premultiply(const StagedOp& s, at::Tensor& host) {
  if (s.op.reduce != c10d::ReduceOp::PREMUL_SUM) return;
  if (s.host_factor.defined()) {
    host.mul_(s.host_factor);
  } else {
    auto* supplement = static_cast<c10d::PreMulSumSupplement*>(s.op.reduce.supplement_.get());
    host.mul_(supplement->double_factor);
  }
}

void average(const StagedOp& s, at::Tensor& host, int world) {
  if (s.op.reduce != c10d::ReduceOp::AVG) return;
  if (at::isFloatingType(host.scalar_type())) {
    host.div_(world);
  } else {
    host.div_(world, "trunc");  // integer division, as NCCL's ncclAvg
  }
}

class Runner {
 public:
  Runner(c10d::Backend& gloo, int rank, int world) : gloo_(gloo), rank_(rank), world_(world) {}

  void run(std::vector<StagedOp>& ops) {
    // Sends first, without waiting: a send completes only once its receiver is posted.
    for (StagedOp& s : ops) {
      if (s.op.kind == OpKind::Send) postSend(s);
    }
    for (StagedOp& s : ops) {
      if (s.op.kind == OpKind::Recv) {
        recv(s);
      } else if (s.op.kind != OpKind::Send) {
        collective(s);
      }
    }
    for (auto& w : sends_) w->wait();
  }

 private:
  void collective(StagedOp& s) {
    const Op& op = s.op;
    std::vector<at::Tensor> in{s.host_in};
    switch (op.kind) {
      case OpKind::AllReduce: {
        premultiply(s, in[0]);
        c10d::AllreduceOptions o;
        o.reduceOp = glooReduceOp(op.reduce);
        gloo_.allreduce(in, o)->wait();
        average(s, in[0], world_);
        break;
      }
      case OpKind::Broadcast: {
        c10d::BroadcastOptions o;
        o.rootRank = op.peer;
        gloo_.broadcast(in, o)->wait();
        break;
      }
      case OpKind::Reduce: {
        premultiply(s, in[0]);
        c10d::ReduceOptions o;
        o.rootRank = op.peer;
        o.reduceOp = glooReduceOp(op.reduce);
        gloo_.reduce(in, o)->wait();
        if (op.peer == rank_) average(s, in[0], world_);
        break;
      }
      case OpKind::AllGather: gloo_._allgather_base(s.host_out, s.host_in)->wait(); break;
      case OpKind::ReduceScatter: {
        premultiply(s, s.host_in);
        c10d::ReduceScatterOptions o;
        o.reduceOp = glooReduceOp(op.reduce);
        gloo_._reduce_scatter_base(s.host_out, s.host_in, o)->wait();
        average(s, s.host_out, world_);
        break;
      }
      case OpKind::AllToAll: {
        std::vector<int64_t> out_splits = op.output_splits, in_splits = op.input_splits;
        gloo_.alltoall_base(s.host_out, s.host_in, out_splits, in_splits)->wait();
        break;
      }
      case OpKind::Gather: {
        std::vector<std::vector<at::Tensor>> out;
        if (op.peer == rank_) out.push_back(s.host_out.chunk(world_));
        c10d::GatherOptions o;
        o.rootRank = op.peer;
        gloo_.gather(out, in, o)->wait();
        break;
      }
      case OpKind::Scatter: {
        std::vector<at::Tensor> out{s.host_out};
        std::vector<std::vector<at::Tensor>> scattered;
        if (op.peer == rank_) scattered.push_back(s.host_in.chunk(world_));
        c10d::ScatterOptions o;
        o.rootRank = op.peer;
        gloo_.scatter(out, scattered, o)->wait();
        break;
      }
      case OpKind::Barrier: gloo_.barrier()->wait(); break;
      case OpKind::Send:
      case OpKind::Recv: break;
    }
  }

  void postSend(StagedOp& s) {
    at::Tensor header = at::empty({kHeaderWords}, at::kLong);
    int64_t* w = header.data_ptr<int64_t>();
    w[kMagic] = kHeaderMagic;
    w[kDtype] = static_cast<int64_t>(s.op.input.scalar_type());
    w[kNumel] = s.op.input.numel();
    std::vector<at::Tensor> h{header};
    sends_.push_back(gloo_.send(h, s.op.peer, s.op.tag));
    if (s.host_in.numel() > 0) {
      std::vector<at::Tensor> data{s.host_in};
      sends_.push_back(gloo_.send(data, s.op.peer, s.op.tag));
    }
  }

  void recv(StagedOp& s) {
    const Op& op = s.op;
    std::vector<at::Tensor> h{at::empty({kHeaderWords}, at::kLong)};
    gloo_.recv(h, op.peer, op.tag)->wait();
    const int64_t* w = h[0].data_ptr<int64_t>();
    TORCH_CHECK_WITH(DistBackendError, w[kMagic] == kHeaderMagic, "recv from rank ", op.peer,
                     " with tag ", op.tag, ": the peer did not send an accl message");
    const auto sent_dtype = static_cast<at::ScalarType>(w[kDtype]);
    const int64_t sent_numel = w[kNumel];
    if (sent_dtype != op.output.scalar_type() || sent_numel != op.output.numel()) {
      // Take the payload anyway, so that the sender completes, then report.
      if (sent_numel > 0) {
        std::vector<at::Tensor> drain{at::empty({sent_numel}, sent_dtype)};
        gloo_.recv(drain, op.peer, op.tag)->wait();
      }
      TORCH_CHECK_WITH(DistBackendError, false, "recv from rank ", op.peer, " with tag ", op.tag,
                       ": expected ", op.output.numel(), " elements of ",
                       c10::toString(op.output.scalar_type()), ", but rank ", op.peer, " sent ",
                       sent_numel, " elements of ", c10::toString(sent_dtype));
    }
    if (sent_numel > 0) {
      std::vector<at::Tensor> data{s.host_out};
      gloo_.recv(data, op.peer, op.tag)->wait();
    }
  }

  c10d::Backend& gloo_;
  const int rank_;
  const int world_;
  std::vector<c10::intrusive_ptr<c10d::Work>> sends_;
};

}  // namespace

GlooTransport::GlooTransport(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int world_size)
    : gloo_(std::move(gloo)), rank_(rank), world_(world_size) {}

void GlooTransport::submit(std::vector<Op> ops, const Fingerprint& fingerprint,
                           const Submission& s) {
  PinnedStagingPool& pool = PinnedStagingPool::instance();
  std::vector<PinnedStagingPool::Block> blocks;
  auto stage = [&](const at::Tensor& device_tensor) -> at::Tensor {
    const size_t bytes = nbytes(device_tensor);
    auto options = device_tensor.options().device(at::kCPU);
    if (bytes == 0) return at::empty({0}, options);
    blocks.push_back(pool.acquire(bytes, s.stream));
    return at::from_blob(blocks.back().ptr, {device_tensor.numel()}, options);
  };
  auto copy = [&](void* dst, const void* src, size_t bytes, rt::MemcpyKind kind) {
    if (bytes > 0) {
      ACCEL_RT_CHECK(rt::driver().memcpyAsync(dst, src, bytes, kind, s.stream), s.device);
    }
  };

  std::vector<StagedOp> staged;
  staged.reserve(ops.size());
  for (Op& op : ops) {
    StagedOp st;
    if (op.input.defined()) st.host_in = stage(op.input);
    if (inPlace(op.kind)) {
      st.host_out = st.host_in;
    } else if (op.output.defined()) {
      st.host_out = stage(op.output);
    }
    const auto& supplement = op.reduce.supplement_;
    if (op.reduce == c10d::ReduceOp::PREMUL_SUM && supplement) {
      const at::Tensor& factor =
          static_cast<c10d::PreMulSumSupplement*>(supplement.get())->tensor_factor;
      if (factor.defined()) {
        st.host_factor = factor.device().is_cpu() ? factor : stage(factor);
        if (!factor.device().is_cpu()) {
          copy(st.host_factor.data_ptr(), factor.const_data_ptr(), nbytes(factor),
               rt::MemcpyKind::DeviceToHost);
        }
      }
    }
    if (readsInput(op, rank_)) {
      copy(st.host_in.data_ptr(), op.input.const_data_ptr(), nbytes(op.input),
           rt::MemcpyKind::DeviceToHost);
    }
    st.op = std::move(op);
    staged.push_back(std::move(st));
  }

  // What the host task needs outlives the call: the closure owns it.
  auto work_failure = s.work_failure;
  auto group_failure = s.group_failure;
  const std::string context = std::string("accl: ") + s.name +
                              " on accel:" + std::to_string(s.device) + " (rank " +
                              std::to_string(rank_) + " of " + std::to_string(world_) +
                              ", process group '" + s.group + "')";
  auto shared = std::make_shared<std::vector<StagedOp>>(std::move(staged));
  const bool checked = !fingerprint.empty();
  if (checked) fingerprints_->push(s.sequence, fingerprint);
  try {
    enqueueHostTask(
        s.stream, s.device,
        [gloo = gloo_, shared, fingerprints = fingerprints_, checked, context, work_failure,
         group_failure, rank = rank_, world = world_, sequence = s.sequence, group = s.group] {
          std::string message;
          try {
            if (group_failure->failed()) {
              if (checked) fingerprints->drop(sequence);
              message = context + " was skipped: an earlier collective of the group failed: " +
                        group_failure->message();
            } else {
              if (checked) fingerprints->agree(*gloo, sequence, rank, group);
              Runner(*gloo, rank, world).run(*shared);
              return;
            }
          } catch (const std::exception& e) {
            message = context + " failed: " + messageOf(e);
          }
          auto error = std::make_exception_ptr(c10::DistBackendError(
              c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, message));
          work_failure->set(error, message);
          group_failure->set(error, message);
          throw std::runtime_error(message);
        });
  } catch (...) {
    if (checked) fingerprints_->cancel(s.sequence);
    throw;
  }

  for (const StagedOp& st : *shared) {
    if (writesOutput(st.op, rank_)) {
      copy(st.op.output.data_ptr(), st.host_out.const_data_ptr(), nbytes(st.op.output),
           rt::MemcpyKind::HostToDevice);
    }
  }
  // Later batches on this stream may stage through the blocks at once; other streams, once
  // the stream has passed the last copy. The closure also drops the staged ops (and with them
  // the device tensors) on the stream's thread.
  for (const auto& b : blocks) pool.retire(b, s.stream);
  enqueueHostTask(s.stream, s.device, [blocks = std::move(blocks), shared]() mutable {
    shared.reset();
    for (const auto& b : blocks) PinnedStagingPool::instance().release(b);
  });
}

}  // namespace accel::dist
