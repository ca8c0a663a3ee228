#include "runtime/host/parallel.h"

#include "runtime/fork.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "runtime/driver.h"
#include "runtime/host/spin_wait.h"

namespace accel::rt::host {
namespace {

// Set on pool threads, and on a caller while it runs a job, so nested loops run inline.
thread_local bool in_parallel = false;

// Most threads whose chunks a job keeps apart; pool threads beyond it share groups.
constexpr int kMaxGroups = 64;

// One parallelFor call. It lives on the caller's stack; the caller returns only once no
// helper holds it. The chunks are split into one contiguous group per thread, and thread t
// (the caller is 0, pool thread i is i) works through group t before it takes what is left of
// the others'. So a kernel's range lands on the same core call after call, and a tensor that
// fits in the cores' L2 caches together stays there, as with OpenMP's static schedule, while
// a late or preempted thread's chunks are still taken by the others.
struct Job {
  detail::RangeFn call;
  const void* fn;
  int64_t begin, end, chunk, chunks;
  int groups;
  std::atomic<int64_t> next[kMaxGroups];  // group g's next chunk; it ends at firstOf(g + 1)

  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int> helpers{0};  // helpers working on it; changed under mu
  std::exception_ptr error;

  int64_t firstOf(int g) const { return chunks * g / groups; }

  void start(int64_t n_chunks, int threads) {
    chunks = n_chunks;
    groups = std::min(threads, kMaxGroups);
    for (int g = 0; g < groups; ++g) next[g].store(firstOf(g), std::memory_order_relaxed);
  }

  // Runs chunks until none are left (or one threw, which ends the job early): thread t's own
  // group first, then the others' in turn.
  void work(int thread) {
    const int own = thread % groups;
    for (int k = 0; k < groups; ++k) {
      const int g = (own + k) % groups;
      const int64_t last = firstOf(g + 1);
      for (int64_t i; (i = next[g].fetch_add(1, std::memory_order_relaxed)) < last;) {
        const int64_t b = begin + i * chunk;
        try {
          call(fn, b, std::min(end, b + chunk));
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
          for (int h = 0; h < groups; ++h) next[h].store(firstOf(h + 1), std::memory_order_relaxed);
        }
      }
    }
  }

  bool handedOut() const {
    for (int g = 0; g < groups; ++g)
      if (next[g].load(std::memory_order_relaxed) < firstOf(g + 1)) return false;
    return true;
  }
};

class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    watchForFork();  // a forked child would have no helper threads
    for (int i = 1; i < threads; ++i) std::thread([this, i] { helperLoop(i); }).detach();
  }
  int threads() const { return threads_; }

  void run(Job& job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(&job);
      posted_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    in_parallel = true;
    job.work(0);
    in_parallel = false;
    {
      std::lock_guard<std::mutex> lock(mu_);  // after this no helper can pick the job up
      retire(&job);
    }
    spinUntil([&] { return job.helpers.load(std::memory_order_acquire) == 0; });
    // Taken even when the spin saw no helper left: the last one may still hold it.
    std::unique_lock<std::mutex> lock(job.mu);
    job.cv.wait(lock, [&] { return job.helpers.load(std::memory_order_relaxed) == 0; });
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  void retire(Job* job) {
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (*it == job) {
        jobs_.erase(it);
        return;
      }
    }
  }

  void helperLoop(int index) {
    pthread_setname_np(pthread_self(), "accel-pool");  // as the stream workers (stream.cpp)
    in_parallel = true;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (jobs_.empty()) {
        const uint64_t seen = posted_.load(std::memory_order_relaxed);
        lock.unlock();
        spinUntil([&] { return posted_.load(std::memory_order_acquire) != seen; });
        lock.lock();
      }
      cv_.wait(lock, [this] { return !jobs_.empty(); });
      Job* job = jobs_.front();
      if (job->handedOut()) {
        retire(job);  // all chunks handed out: let the others' jobs through
        continue;
      }
      {
        std::lock_guard<std::mutex> job_lock(job->mu);
        ++job->helpers;
      }
      lock.unlock();
      job->work(index);
      {
        // Notify under the lock: once it is released the caller may return and free the job.
        std::lock_guard<std::mutex> job_lock(job->mu);
        if (--job->helpers == 0) job->cv.notify_all();
      }
      lock.lock();
    }
  }

  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> jobs_;            // jobs that may still have chunks to hand out
  std::atomic<uint64_t> posted_{0};  // jobs ever posted: what a spinning helper watches
};

// OMP_NUM_THREADS is what sizes CPU torch's pool too: torchrun sets it to 1 for each of
// several ranks on one machine, so that their pools do not oversubscribe its cores.
int threadsFromEnv() {
  for (const char* name : {"TORCH_ACCEL_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* env = std::getenv(name);
    const int n = env != nullptr ? std::atoi(env) : 0;
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Leaked: helpers stay parked at exit instead of racing static destruction.
Pool& pool() {
  static Pool* const p = new Pool(threadsFromEnv());
  return *p;
}

}  // namespace

int numThreads() { return pool().threads(); }

void detail::parallelRun(int64_t begin, int64_t end, int64_t grain, RangeFn call, const void* fn) {
  const int threads = numThreads();
  if (threads == 1 || in_parallel || inBadFork()) {
    call(fn, begin, end);
    return;
  }
  const int64_t n = end - begin;
  // A few chunks per thread balance uneven work without paying an atomic per `grain`.
  const int64_t chunk = std::max({grain, int64_t{1}, (n + 4 * threads - 1) / (4 * threads)});
  Job job;
  job.call = call;
  job.fn = fn;
  job.begin = begin;
  job.end = end;
  job.chunk = chunk;
  job.start((n + chunk - 1) / chunk, threads);
  pool().run(job);
}

}  // namespace accel::rt::host
