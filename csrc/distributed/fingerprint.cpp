#include "distributed/fingerprint.h"

#include <sstream>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace accel::dist {
namespace {

// Word layout of the header.
enum Word { kCollective, kDtype, kRoot, kReduce, kNumel, kNdim, kDim0, kCalls = 10, kHash = 11 };
constexpr int kShownDims = kCalls - kDim0;

const char* reduceName(int64_t op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return nullptr;
  }
}

// "all_reduce(float32[4, 8], SUM)" from one rank's header.
std::string describe(const int64_t* w) {
  std::ostringstream out;
  out << collectiveName(static_cast<Collective>(w[kCollective]));
  if (static_cast<Collective>(w[kCollective]) == Collective::Barrier) return out.str() + "()";
  out << "(" << c10::toString(static_cast<at::ScalarType>(w[kDtype])) << "[";
  for (int64_t d = 0; d < w[kNdim]; ++d) {
    if (d == kShownDims) {
      out << ", ...";
      break;
    }
    out << (d ? ", " : "") << w[kDim0 + d];
  }
  out << "]";
  if (const char* op = reduceName(w[kReduce])) out << ", " << op;
  if (w[kRoot] >= 0) out << ", root " << w[kRoot];
  out << ")";
  if (w[kCalls] > 1) out << " and " << (w[kCalls] - 1) << " more in the same coalesced call";
  return out.str();
}

void mix(int64_t& hash, int64_t value) {
  // FNV-1a over the 8 bytes of each value.
  uint64_t h = static_cast<uint64_t>(hash);
  for (int i = 0; i < 8; ++i) {
    h ^= (static_cast<uint64_t>(value) >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  hash = static_cast<int64_t>(h);
}

}  // namespace

void Fingerprint::add(Collective collective, at::ScalarType dtype, c10::IntArrayRef shape,
                      int64_t root, int64_t reduce_op, const std::vector<int64_t>& input_splits,
                      const std::vector<int64_t>& output_splits) {
  if (calls_ == 0) {
    words_[kCollective] = static_cast<int64_t>(collective);
    words_[kDtype] = static_cast<int64_t>(dtype);
    words_[kRoot] = root;
    words_[kReduce] = reduce_op;
    words_[kNumel] = c10::multiply_integers(shape);
    words_[kNdim] = static_cast<int64_t>(shape.size());
    for (size_t d = 0; d < shape.size() && d < kShownDims; ++d) words_[kDim0 + d] = shape[d];
    words_[kHash] = static_cast<int64_t>(14695981039346656037ull);
    if (!input_splits.empty()) {
      splits_ = input_splits;
      splits_.insert(splits_.end(), output_splits.begin(), output_splits.end());
    }
  }
  words_[kCalls] = ++calls_;
  for (int64_t v : {static_cast<int64_t>(collective), static_cast<int64_t>(dtype), root, reduce_op,
                    static_cast<int64_t>(shape.size())}) {
    mix(words_[kHash], v);
  }
  for (int64_t s : shape) mix(words_[kHash], s);
}

void Fingerprint::check(c10d::Backend& gloo, int rank, uint64_t sequence,
                        const std::string& group) const {
  const int64_t width = kHeaderWords + 2 * world_;
  at::Tensor mine = at::zeros({width}, at::kLong);
  std::copy(words_.begin(), words_.end(), mine.data_ptr<int64_t>());
  if (!splits_.empty()) {
    std::copy(splits_.begin(), splits_.end(), mine.data_ptr<int64_t>() + kHeaderWords);
  }
  at::Tensor all = at::empty({world_ * width}, at::kLong);
  gloo._allgather_base(all, mine)->wait();

  const int64_t* w = all.data_ptr<int64_t>();
  auto row = [&](int r) { return w + r * width; };
  const std::string where =
      "collective #" + std::to_string(sequence) + " of process group '" + group + "'";
  for (int r = 0; r < world_; ++r) {
    if (!std::equal(row(0), row(0) + kHeaderWords, row(r))) {
      TORCH_CHECK_WITH(DistBackendError, false, "accl: the ranks disagree on ", where,
                       ": rank 0 called ", describe(row(0)), ", rank ", r, " called ",
                       describe(row(r)), " (this is rank ", rank, ")");
    }
  }
  if (splits_.empty()) return;
  // all_to_all: what rank s sends to rank d is what rank d expects from rank s.
  for (int s = 0; s < world_; ++s) {
    for (int d = 0; d < world_; ++d) {
      const int64_t sent = row(s)[kHeaderWords + d];
      const int64_t expected = row(d)[kHeaderWords + world_ + s];
      TORCH_CHECK_WITH(DistBackendError, sent == expected, "accl: the ranks disagree on ", where,
                       ": in ", describe(row(0)), " rank ", s, " sends ", sent,
                       " elements to rank ", d, ", which expects ", expected, " from rank ", s,
                       " (this is rank ", rank, ")");
    }
  }
}

}  // namespace accel::dist
