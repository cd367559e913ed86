#include "tessera/perfdb/records.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "names_detail.hpp"
#include "tessera/error.hpp"

namespace tessera::perfdb {

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running:
      return "running";
    case RunStatus::complete:
      return "complete";
    case RunStatus::failed:
      return "failed";
  }
  return "failed";
}

RunStatus parse_run_status(std::string_view name) {
  if (name == "running") return RunStatus::running;
  if (name == "complete") return RunStatus::complete;
  if (name == "failed") return RunStatus::failed;
  throw InvalidArgument("bad run status '" + std::string(name) +
                        "' (expected running, complete or failed)");
}

Machine local_machine() {
  Machine m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  if (m.hostname.empty()) m.hostname = "localhost";
  m.name = m.hostname;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos) {
        auto first = line.find_first_not_of(" \t", colon + 1);
        if (first != std::string::npos) m.cpu_model = line.substr(first);
      }
      break;
    }
  }
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  m.cpu_quota = cpu_quota_cores();
  m.nodes = 1;
  return m;
}

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

namespace detail {

std::string_view path_name(Path p) { return to_string(p); }

std::string_view layout_name(Layout l) { return to_string(l); }

std::optional<Path> path_from(std::string_view s) {
  for (Path p : kPaths)
    if (path_name(p) == s) return p;
  return std::nullopt;
}

std::optional<Layout> layout_from(std::string_view s) {
  for (Layout l : kLayouts)
    if (layout_name(l) == s) return l;
  return std::nullopt;
}

Path parse_path_or_throw(std::string_view s, std::string_view where) {
  if (auto p = path_from(s)) return *p;
  throw InvalidArgument(std::string(where) + ": bad path '" + std::string(s) +
                        "' (expected send, recv or full)");
}

Layout parse_layout_or_throw(std::string_view s, std::string_view where) {
  if (auto l = layout_from(s)) return *l;
  throw InvalidArgument(std::string(where) + ": bad layout '" + std::string(s) +
                        "' (expected cc, cn, nc or nn)");
}

}  // namespace detail
}  // namespace tessera::perfdb
