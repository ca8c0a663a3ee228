#include "distributed/fingerprint_queue.h"

#include <c10/util/Exception.h>

namespace accel::dist {

void FingerprintQueue::push(uint64_t sequence, Fingerprint fingerprint) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(Entry{sequence, std::move(fingerprint)});
}

void FingerprintQueue::cancel(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!entries_.empty() && entries_.back().sequence == sequence) entries_.pop_back();
}

FingerprintQueue::Entry FingerprintQueue::takeOldest(uint64_t sequence) {
  TORCH_INTERNAL_ASSERT(!entries_.empty() && entries_.front().sequence == sequence,
                        "accl: collective #", sequence, " is not the oldest one queued");
  Entry oldest = std::move(entries_.front());
  entries_.pop_front();
  return oldest;
}

void FingerprintQueue::agree(c10d::Backend& gloo, uint64_t sequence, int rank,
                             const std::string& group) {
  std::unique_lock<std::mutex> lock(mu_);
  Entry oldest = takeOldest(sequence);
  if (!oldest.agreed && oldest.disagreement.empty()) {
    // This batch and copies of the ones queued after it (the caller's thread may append or
    // cancel meanwhile).
    const size_t slots = Fingerprint::slotsPerExchange(oldest.fingerprint.world());
    std::vector<Fingerprint> next;
    std::vector<uint64_t> sequences{oldest.sequence};
    for (size_t i = 0; i < entries_.size() && sequences.size() < slots; ++i) {
      next.push_back(entries_[i].fingerprint);
      sequences.push_back(entries_[i].sequence);
    }
    lock.unlock();
    std::vector<const Fingerprint*> mine{&oldest.fingerprint};
    for (const Fingerprint& f : next) mine.push_back(&f);
    const Fingerprint::Agreement a =
        Fingerprint::exchange(gloo, mine, sequences, slots, rank, group);
    lock.lock();
    oldest.agreed = a.agreed > 0;
    if (a.agreed == 0) oldest.disagreement = a.disagreement;
    for (Entry& e : entries_) {
      for (size_t i = 1; i < sequences.size(); ++i) {
        if (e.sequence != sequences[i]) continue;
        e.agreed = i < a.agreed;
        if (i == a.agreed) e.disagreement = a.disagreement;
      }
    }
  }
  lock.unlock();
  TORCH_CHECK_WITH(DistBackendError, oldest.disagreement.empty(), oldest.disagreement);
}

void FingerprintQueue::drop(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  takeOldest(sequence);
}

}  // namespace accel::dist
