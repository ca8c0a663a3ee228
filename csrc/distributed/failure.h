// The first failure of a collective (or of a whole process group), set by whichever thread
// runs the transport and read by the caller's thread.
#pragma once

#include <exception>
#include <mutex>
#include <string>

namespace accel::dist {

class Failure {
 public:
  // Keeps the first failure: later ones are usually its consequences.
  void set(std::exception_ptr error, const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) return;
    error_ = std::move(error);
    message_ = message;
  }
  bool failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_ != nullptr;
  }
  std::exception_ptr error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  std::string message() const {
    std::lock_guard<std::mutex> lock(mu_);
    return message_;
  }

 private:
  mutable std::mutex mu_;
  std::exception_ptr error_;
  std::string message_;
};

}  // namespace accel::dist
