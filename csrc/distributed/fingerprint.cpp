#include "distributed/fingerprint.h"

#include <algorithm>
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

// Why the ranks' slots of one batch disagree ("" when they agree); slot(q) is rank q's.
template <class Slot>
std::string disagreement(const Slot& slot, int world, const std::string& where, int rank) {
  constexpr int kCompared = Fingerprint::kHeaderWords + 1;  // the header and the splits flag
  for (int q = 1; q < world; ++q) {
    if (!std::equal(slot(0), slot(0) + kCompared, slot(q))) {
      return c10::str("accl: the ranks disagree on ", where, ": rank 0 called ", describe(slot(0)),
                      ", rank ", q, " called ", describe(slot(q)), " (this is rank ", rank, ")");
    }
  }
  if (!slot(0)[Fingerprint::kHeaderWords]) return "";
  // all_to_all: what rank s sends to rank d is what rank d expects from rank s.
  for (int s = 0; s < world; ++s) {
    for (int d = 0; d < world; ++d) {
      const int64_t sent = slot(s)[kCompared + d];
      const int64_t expected = slot(d)[kCompared + world + s];
      if (sent != expected) {
        return c10::str("accl: the ranks disagree on ", where, ": in ", describe(slot(0)), " rank ",
                        s, " sends ", sent, " elements to rank ", d, ", which expects ", expected,
                        " from rank ", s, " (this is rank ", rank, ")");
      }
    }
  }
  return "";
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

void Fingerprint::write(int64_t* slot) const {
  std::copy(words_.begin(), words_.end(), slot);
  slot[kHeaderWords] = splits_.empty() ? 0 : 1;
  std::fill(slot + kHeaderWords + 1, slot + slotWords(world_), 0);
  std::copy(splits_.begin(), splits_.end(), slot + kHeaderWords + 1);
}

size_t Fingerprint::slotsPerExchange(int world) {
  constexpr int64_t kRowWords = 512;  // 4 KiB per rank
  return static_cast<size_t>(std::clamp<int64_t>(kRowWords / slotWords(world), 1, 16));
}

void Fingerprint::check(c10d::Backend& gloo, int rank, uint64_t sequence,
                        const std::string& group) const {
  const Agreement agreement = exchange(gloo, {this}, {sequence}, 1, rank, group);
  TORCH_CHECK_WITH(DistBackendError, agreement.disagreement.empty(), agreement.disagreement);
}

Fingerprint::Agreement Fingerprint::exchange(c10d::Backend& gloo,
                                             const std::vector<const Fingerprint*>& mine,
                                             const std::vector<uint64_t>& sequences, size_t slots,
                                             int rank, const std::string& group) {
  TORCH_INTERNAL_ASSERT(!mine.empty() && mine.size() <= slots && sequences.size() == mine.size());
  const int world = mine[0]->world_;
  const int64_t slot_words = slotWords(world);
  // A row per rank: how many batches it passed, then their slots.
  const int64_t width = 1 + static_cast<int64_t>(slots) * slot_words;
  at::Tensor row = at::zeros({width}, at::kLong);
  int64_t* r = row.data_ptr<int64_t>();
  r[0] = static_cast<int64_t>(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) mine[i]->write(r + 1 + i * slot_words);
  at::Tensor all = at::empty({world * width}, at::kLong);
  gloo._allgather_base(all, row)->wait();

  const int64_t* rows = all.data_ptr<int64_t>();
  int64_t passed = rows[0];
  for (int q = 1; q < world; ++q) passed = std::min(passed, rows[q * width]);
  Agreement agreement;
  for (; agreement.agreed < static_cast<size_t>(passed); ++agreement.agreed) {
    const int64_t offset = 1 + static_cast<int64_t>(agreement.agreed) * slot_words;
    auto slot = [&](int q) { return rows + q * width + offset; };
    const std::string where = "collective #" + std::to_string(sequences[agreement.agreed]) +
                              " of process group '" + group + "'";
    agreement.disagreement = disagreement(slot, world, where, rank);
    if (!agreement.disagreement.empty()) break;
  }
  return agreement;
}

}  // namespace accel::dist
