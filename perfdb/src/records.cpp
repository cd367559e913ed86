#include "tessera/perfdb/records.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "names_detail.hpp"
#include "tessera/cpu_quota.hpp"
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
  const CpuQuota quota = cpu_quota();
  m.cpu_quota = quota.cores;
  m.cpu_period_us = quota.period_us;
  m.nodes = 1;
  return m;
}

double cpu_quota_cores() { return tessera::cpu_quota_cores(); }

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
