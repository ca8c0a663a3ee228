#include "runtime/host/fault.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace accel::rt::host {
namespace {

const char* const kSiteNames[kFaultSites] = {"malloc", "memcpy", "launch"};

[[noreturn]] void malformed(const std::string& spec, const std::string& why) {
  throw std::runtime_error("TORCH_ACCEL_FAULTS='" + spec + "': " + why +
                           " (expected e.g. malloc:0.01,memcpy:0.001,launch:0.001,seed:7)");
}

}  // namespace

FaultInjector::FaultInjector(const std::string& spec) {
  uint64_t seed = 0;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) malformed(spec, "'" + item + "' has no ':'");
    const std::string key = item.substr(0, colon);
    const std::string value = item.substr(colon + 1);
    char* rest = nullptr;
    if (key == "seed") {
      seed = std::strtoull(value.c_str(), &rest, 10);
      if (value.empty() || *rest != '\0') malformed(spec, "seed '" + value + "' is not a number");
      continue;
    }
    int site = 0;
    while (site < kFaultSites && key != kSiteNames[site]) ++site;
    if (site == kFaultSites) malformed(spec, "unknown fault site '" + key + "'");
    const double rate = std::strtod(value.c_str(), &rest);
    if (value.empty() || *rest != '\0' || !(rate >= 0.0 && rate <= 1.0)) {
      malformed(spec, "rate '" + value + "' of " + key + " is not in [0, 1]");
    }
    rate_[site] = rate;
    enabled_ = enabled_ || rate > 0.0;
  }
  // Distinct streams per site, so adding memcpy faults does not move the malloc faults.
  for (int s = 0; s < kFaultSites; ++s) rng_[s].seed(seed * kFaultSites + s);
}

bool FaultInjector::inject(FaultSite site) {
  if (!enabled_) return false;
  const int s = static_cast<int>(site);
  if (rate_[s] <= 0.0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  // 53 random bits as a double in [0, 1): the same on every platform, unlike the std
  // distributions.
  const double u = static_cast<double>(rng_[s]() >> 11) * 0x1.0p-53;
  if (u >= rate_[s]) return false;
  ++count_[s];
  return true;
}

uint64_t FaultInjector::injected(FaultSite site) const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_[static_cast<int>(site)];
}

std::string FaultInjector::summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (int s = 0; s < kFaultSites; ++s) {
    out += (s ? " " : "") + std::string(kSiteNames[s]) + "=" + std::to_string(count_[s]);
  }
  return out;
}

FaultInjector& processFaults() {
  static FaultInjector* faults = [] {
    const char* spec = std::getenv("TORCH_ACCEL_FAULTS");
    // Never destroyed: worker threads may still draw while the process exits.
    auto* f = new FaultInjector(spec != nullptr ? spec : "");
    if (f->enabled()) {
      std::atexit([] {
        std::fprintf(stderr, "torch_accel faults injected: %s\n",
                     processFaults().summary().c_str());
      });
    }
    return f;
  }();
  return *faults;
}

}  // namespace accel::rt::host
