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

// One group's quota, {0, 0} if unlimited or unreadable.
CpuQuota group_quota(const std::filesystem::path& dir, bool v2) {
  if (v2) {
    std::ifstream f(dir / "cpu.max");
    std::string quota;
    double period = 0;
    if (!(f >> quota >> period) || quota == "max" || period <= 0) return {};
    const double q = std::strtod(quota.c_str(), nullptr);
    return q > 0 ? CpuQuota{q / period, period} : CpuQuota{};
  }
  std::ifstream fq(dir / "cpu.cfs_quota_us"), fp(dir / "cpu.cfs_period_us");
  double q = 0, period = 0;
  if (!(fq >> q) || !(fp >> period) || q <= 0 || period <= 0) return {};
  return {q / period, period};
}

}  // namespace

double cpu_quota_cores() { return cpu_quota().cores; }

CpuQuota cpu_quota() {
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
  if (mount.empty()) return {};
  CpuQuota best;
  std::error_code ec;
  for (std::filesystem::path dir = mount / group.relative_path();; dir = dir.parent_path()) {
    if (std::filesystem::exists(dir, ec)) {
      const CpuQuota q = group_quota(dir, v2);
      if (q.cores > 0 && (best.cores == 0 || q.cores < best.cores)) best = q;
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

bool quota_stops(const CpuQuota& quota, int busy, int cores) {
  return quota.cores > 0 && quota.period_us > 0 && quota.cores < double(std::min(busy, cores));
}

QuotaCycle quota_cycle(const CpuQuota& quota) {
  if (!(quota.cores > 0) || !(quota.period_us > 0)) return {};
  return {quota.cores * quota.period_us, quota.period_us};
}

namespace {
// The wall µs a node whose work of `wall_us` spends `cpu_us` runs per cycle (its
// window); 0 when nothing stops it (no quota, no work, or a window of the whole cycle).
double stopping_window(double wall_us, double cpu_us, const QuotaCycle& cycle) {
  if (!(wall_us >= 0) || !(cpu_us >= 0) || !std::isfinite(wall_us) || !std::isfinite(cpu_us))
    throw InvalidArgument("a node's busy time and CPU time must be finite and >= 0 µs");
  if (!(cycle.cpu_us >= 0) || !(cycle.cycle_us >= 0) || !std::isfinite(cycle.cpu_us) ||
      !std::isfinite(cycle.cycle_us))
    throw InvalidArgument("a CPU quota's cycle must be finite and >= 0 µs");
  if (cycle.cpu_us == 0 || cycle.cycle_us == 0 || wall_us == 0 || cpu_us == 0) return 0;
  const double running = cpu_us / wall_us;       // threads on the cores, on average
  const double window = cycle.cpu_us / running;  // wall µs run per cycle
  return window >= cycle.cycle_us ? 0 : window;  // the quota covers them: no stop
}
}  // namespace

double quota_stretched_us(double wall_us, double cpu_us, const QuotaCycle& cycle) {
  const double window = stopping_window(wall_us, cpu_us, cycle);
  if (window == 0) return wall_us;
  // The work starts at a random moment of the cycle: in a stop (1 - f of the time; it
  // then starts a whole window) it meets floor(x) stops, in a window (f; a uniform part
  // of it left) floor(x) + 1 with probability frac(x).
  const double x = cpu_us / cycle.cpu_us, f = window / cycle.cycle_us;
  const double stops = std::floor(x) + (f * (x - std::floor(x)) > 0.5 ? 1.0 : 0.0);  // the median
  return wall_us + stops * (cycle.cycle_us - window);
}

double quota_back_to_back_us(double wall_us, double cpu_us, const QuotaCycle& cycle) {
  const double window = stopping_window(wall_us, cpu_us, cycle);
  if (window == 0) return wall_us;
  // Each run starts where the previous one left the node: inside a window, a uniform
  // part of it left. floor(x) + 1 stops with probability frac(x): the median is round(x).
  const double x = cpu_us / cycle.cpu_us;
  return wall_us + std::round(x) * (cycle.cycle_us - window);
}

double quota_wall_us(double cpu_us, const CpuQuota& quota, int busy, int cores) {
  if (!(cpu_us >= 0)) throw InvalidArgument("a step's CPU time must be >= 0 µs");
  if (busy < 1 || cores < 1)
    throw InvalidArgument("a node has at least 1 core and 1 busy thread, got " + std::to_string(cores) + " and " +
                          std::to_string(busy));
  if (!(quota.cores >= 0) || !(quota.period_us >= 0) || !std::isfinite(quota.cores) || !std::isfinite(quota.period_us))
    throw InvalidArgument("a CPU quota and its period must be >= 0");
  const double running = std::min(busy, cores);  // threads on the cores at once
  const double unstopped = cpu_us * double(busy) / running;
  if (!quota_stops(quota, busy, cores)) return unstopped;
  // The node spends `running` CPU µs per wall µs for as long as the step runs.
  return quota_stretched_us(unstopped, unstopped * running, quota_cycle(quota));
}

}  // namespace tessera
