#include "tessera/result_set.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "tessera/error.hpp"
#include "tessera/io.hpp"

namespace tessera {
namespace fs = std::filesystem;
namespace {

// append(), not "'" + string: GCC 12 warns falsely (-Wrestrict) about the latter.
std::string quoted(const fs::path& p) { return std::string("'").append(p.string()).append("'"); }

std::string reason(int err) { return std::strerror(err); }

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// Temporary names carry the host and PID of their owner, so a later run can tell
// a dead run's leftovers from a live concurrent one (on this host).
std::string temp_prefix(const fs::path& target, const char* kind) {
  return std::string(".").append(target.filename().string()).append(".tessera-").append(kind).append("-");
}

std::string temp_suffix() {
  static int counter = 0;
  return host_name() + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// "HOST-PID-N" -> PID if HOST is this host; -1 otherwise.
pid_t owner_on_this_host(const std::string& suffix) {
  const auto n = suffix.rfind('-');
  if (n == std::string::npos || n == 0) return -1;
  const auto p = suffix.rfind('-', n - 1);
  if (p == std::string::npos) return -1;
  if (suffix.substr(0, p) != host_name()) return -1;
  const std::string pid = suffix.substr(p + 1, n - p - 1);
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return -1;
  return pid_t(std::stol(pid));
}

void sync_path(const fs::path& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open " + quoted(path) + ": " + reason(errno));
  const int rc = ::fsync(fd), err = errno;
  ::close(fd);
  // Some filesystems cannot sync a directory; that is not a failure to write.
  if (rc != 0 && !(directory && (err == EINVAL || err == EROFS)))
    throw IoError("cannot write " + quoted(path) + ": " + reason(err));
}

// What may be replaced: nothing, an empty directory or a previous result set.
void require_replaceable(const fs::path& target) {
  std::error_code ec;
  const auto st = fs::symlink_status(target, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw IoError("cannot use output directory " + quoted(target) + ": " + ec.message());
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw IoError("cannot create output directory " + quoted(target) + ": it exists and is not a directory");
  if (fs::exists(target / ResultSet::kManifestName, ec)) return;
  if (fs::is_empty(target, ec) && !ec) return;
  if (ec) throw IoError("cannot use output directory " + quoted(target) + ": " + ec.message());
  throw IoError("refusing to replace " + quoted(target) +
                ": it holds files that are not a tessera result set (no " + ResultSet::kManifestName +
                "); choose a new or empty directory");
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void ResultSet::remove_stale(const fs::path& target) {
  const fs::path parent = target.parent_path();
  const std::string tmp = temp_prefix(target, "tmp"), old = temp_prefix(target, "old");
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool is_tmp = name.rfind(tmp, 0) == 0, is_old = name.rfind(old, 0) == 0;
    if (!is_tmp && !is_old) continue;
    const pid_t pid = owner_on_this_host(name.substr((is_tmp ? tmp : old).size()));
    if (pid <= 0 || alive(pid)) continue;
    std::error_code ignored;
    // A set moved aside by a run killed before the new one moved in is the only
    // complete set there is: put it back.
    if (is_old && !fs::exists(fs::symlink_status(target, ignored))) {
      fs::rename(it->path(), target, ignored);
      if (!ignored) continue;
    }
    fs::remove_all(it->path(), ignored);
  }
}

ResultSet::ResultSet(fs::path target, std::string program, std::vector<std::string> arguments)
    : program_(std::move(program)), arguments_(std::move(arguments)) {
  if (target.empty()) throw InvalidArgument("empty output directory name");
  const std::string shown = quoted(target);
  std::error_code ec;
  target_ = fs::absolute(target, ec).lexically_normal();
  if (target_.filename().empty()) target_ = target_.parent_path();
  if (target_.filename().empty() || target_.filename() == "." || target_.filename() == "..")
    throw IoError("cannot use " + shown + " as output directory: it has no name of its own to replace");
  if (fs::is_symlink(target_, ec)) {
    target_ = fs::canonical(target_, ec);
    if (ec) throw IoError("cannot create output directory " + shown + ": " + ec.message());
  }
  fs::create_directories(target_.parent_path(), ec);
  if (ec) throw IoError("cannot create output directory " + shown + ": " + ec.message());
  remove_stale(target_);
  require_replaceable(target_);
  staging_ = target_.parent_path() / (temp_prefix(target_, "tmp") + temp_suffix());
  if (::mkdir(staging_.c_str(), 0755) != 0)
    throw IoError("cannot create output directory " + shown + ": " + reason(errno) + " (creating " +
                  quoted(staging_) + ")");
}

ResultSet::~ResultSet() {
  if (committed_ || staging_.empty()) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

fs::path ResultSet::file(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
    throw InvalidArgument("result file name '" + name + "' must be a plain name without '/' or leading '.'");
  files_.push_back(name);
  return staging_ / name;
}

void ResultSet::commit() {
  if (committed_) throw InvalidArgument("result set " + quoted(target_) + " already committed");
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& name : files_) {
    const fs::path p = staging_ / name;
    struct stat st{};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      throw IoError("cannot write " + quoted(target_ / name) + ": it was not written");
    sync_path(p, false);
    files.push_back({{"name", name}, {"bytes", std::uint64_t(st.st_size)}});
  }
  const nlohmann::json manifest = {{"program", program_}, {"version", TESSERA_VERSION},
                                   {"arguments", arguments_}, {"time_utc", utc_now()},
                                   {"host", host_name()},     {"files", files}};
  write_file(staging_ / kManifestName, manifest.dump(2) + "\n");
  sync_path(staging_, true);
  // The target may have changed since the constructor looked.
  require_replaceable(target_);
  const fs::path parent = target_.parent_path();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(target_, ec))) {
    if (::rename(staging_.c_str(), target_.c_str()) != 0)
      throw IoError("cannot create output directory " + quoted(target_) + ": " + reason(errno));
  } else if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    // staging_ now holds the previous set.
    fs::remove_all(staging_, ec);
  } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
    // No atomic exchange here: move the old set aside, the new one in, and let
    // remove_stale() put the old one back if we die in between.
    const fs::path aside = parent / (temp_prefix(target_, "old") + temp_suffix());
    if (::rename(target_.c_str(), aside.c_str()) != 0)
      throw IoError("cannot replace " + quoted(target_) + ": " + reason(errno));
    if (::rename(staging_.c_str(), target_.c_str()) != 0) {
      const int err = errno;
      ::rename(aside.c_str(), target_.c_str());
      throw IoError("cannot replace " + quoted(target_) + ": " + reason(err));
    }
    fs::remove_all(aside, ec);
  } else {
    throw IoError("cannot replace " + quoted(target_) + ": " + reason(errno));
  }
  committed_ = true;
  sync_path(parent, true);
}

}  // namespace tessera
