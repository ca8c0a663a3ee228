#include "runtime/host/parallel.h"

#include "runtime/fork.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "runtime/driver.h"

namespace accel::rt::host {
namespace {

// Set on pool threads, and on a caller while it runs a job, so nested loops run inline.
thread_local bool in_parallel = false;

// One parallelFor call. It lives on the caller's stack; the caller returns only once no
// helper holds it.
struct Job {
  detail::RangeFn call;
  const void* fn;
  int64_t begin, end, chunk, chunks;
  std::atomic<int64_t> next{0};  // next chunk to hand out

  std::mutex mu;
  std::condition_variable cv;
  int helpers = 0;  // helpers working on it
  std::exception_ptr error;

  // Runs chunks until none are left (or one threw, which ends the job early).
  void work() {
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      const int64_t b = begin + i * chunk;
      try {
        call(fn, b, std::min(end, b + chunk));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next.store(chunks, std::memory_order_relaxed);
      }
    }
  }
};

class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    watchForFork();  // a forked child would have no helper threads
    for (int i = 1; i < threads; ++i) std::thread([this] { helperLoop(); }).detach();
  }
  int threads() const { return threads_; }

  void run(Job& job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(&job);
    }
    cv_.notify_all();
    in_parallel = true;
    job.work();
    in_parallel = false;
    {
      std::lock_guard<std::mutex> lock(mu_);  // after this no helper can pick the job up
      retire(&job);
    }
    std::unique_lock<std::mutex> lock(job.mu);
    job.cv.wait(lock, [&] { return job.helpers == 0; });
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

  void helperLoop() {
    in_parallel = true;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return !jobs_.empty(); });
      Job* job = jobs_.front();
      if (job->next.load(std::memory_order_relaxed) >= job->chunks) {
        retire(job);  // all chunks handed out: let the others' jobs through
        continue;
      }
      {
        std::lock_guard<std::mutex> job_lock(job->mu);
        ++job->helpers;
      }
      lock.unlock();
      job->work();
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
  std::deque<Job*> jobs_;  // jobs that may still have chunks to hand out
};

int threadsFromEnv() {
  if (const char* env = std::getenv("TORCH_ACCEL_NUM_THREADS")) {
    const int n = std::atoi(env);
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
  job.chunks = (n + chunk - 1) / chunk;
  pool().run(job);
}

}  // namespace accel::rt::host
