#include "tessera/cpu_quota.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tessera/error.hpp"

namespace tessera {

namespace {

// One group's quota in cores, 0 if unlimited or unreadable.
double group_quota(const std::filesystem::path& dir, bool v2) {
  if (v2) {
    std::ifstream f(dir / "cpu.max");
    std::string quota;
    double period = 0;
    if (!(f >> quota >> period) || quota == "max" || period <= 0) return 0;
    const double q = std::strtod(quota.c_str(), nullptr);
    return q > 0 ? q / period : 0;
  }
  std::ifstream fq(dir / "cpu.cfs_quota_us"), fp(dir / "cpu.cfs_period_us");
  double q = 0, period = 0;
  if (!(fq >> q) || !(fp >> period) || q <= 0 || period <= 0) return 0;
  return q / period;
}

}  // namespace

double cpu_quota_cores() {
  // /proc/self/cgroup: "ID:CONTROLLERS:PATH"; v1 lists `cpu` among the controllers, v2 is
  // "0::PATH".
  std::ifstream groups("/proc/self/cgroup");
  std::filesystem::path mount, group;
  bool v2 = false;
  for (std::string line; std::getline(groups, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::stringstream list(controllers);
    bool cpu = false;
    for (std::string c; std::getline(list, c, ',');) cpu = cpu || c == "cpu";
    if (cpu) {
      for (const char* m : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"})
        if (std::filesystem::exists(std::filesystem::path(m) / "cpu.cfs_quota_us")) {
          mount = m;
          break;
        }
      group = path;
      v2 = false;
      break;
    }
    if (controllers.empty() && line.rfind("0::", 0) == 0 && std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers")) {
      mount = "/sys/fs/cgroup";
      group = path;
      v2 = true;
    }
  }
  if (mount.empty()) return 0;
  double best = 0;
  std::error_code ec;
  for (std::filesystem::path dir = mount / group.relative_path();; dir = dir.parent_path()) {
    if (std::filesystem::exists(dir, ec)) {
      const double q = group_quota(dir, v2);
      if (q > 0 && (best == 0 || q < best)) best = q;
    }
    if (dir == mount || !dir.has_relative_path() || dir.parent_path() == dir) break;
  }
  return best;
}


int quota_cores(int cores, double quota) {
  if (cores < 1) throw InvalidArgument("a node has at least 1 core, got " + std::to_string(cores));
  if (!(quota >= 0) || !std::isfinite(quota)) throw InvalidArgument("a CPU quota must be >= 0 cores (0 = none)");
  if (quota == 0) return cores;
  return std::clamp(int(std::ceil(quota - 1e-9)), 1, cores);
}

}  // namespace tessera
