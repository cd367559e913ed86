#include "tessera/io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "tessera/error.hpp"

namespace tessera {
namespace fs = std::filesystem;

namespace {

// OpenCV, libpng and libtiff print warnings (an sRGB profile libpng dislikes, an
// unknown TIFF tag) on stderr, which is the programs' channel for their own
// messages. OpenCV's logging is turned down to errors; the codecs' own prints are
// caught while a codec runs (the root calls this single-threaded) and kept only to
// explain a failure.
void quiet_opencv() {
  static const bool once = [] {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_ERROR);
    return true;
  }();
  (void)once;
}

class CapturedStderr {
 public:
  CapturedStderr() {
    quiet_opencv();
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = file_ ? ::dup(STDERR_FILENO) : -1;
    if (saved_ >= 0) ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~CapturedStderr() { release(); }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;
  /// Restores stderr; returns the first line printed meanwhile (empty if none).
  std::string release() {
    std::string line;
    if (saved_ < 0) return line;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    std::rewind(file_);
    char buf[512];
    if (std::fgets(buf, sizeof buf, file_)) line = buf;
    std::fclose(file_);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
  }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

// What a codec said, as a suffix to our own message.
std::string said(const std::string& line) { return line.empty() ? "" : " (" + line + ")"; }

std::string describe(const fs::path& path, int err) {
  return "cannot write '" + path.string() + "': " + std::strerror(err);
}

}  // namespace

Image read_image(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IoError("cannot read image '" + path.string() + "': no such file");
  if (fs::is_directory(path, ec))
    throw IoError("cannot read image '" + path.string() + "': it is a directory");
  if (::access(path.c_str(), R_OK) != 0)
    throw IoError("cannot read image '" + path.string() + "': " + std::strerror(errno));
  cv::Mat m;
  CapturedStderr codec;
  try {
    m = cv::imread(path.string(), cv::IMREAD_ANYDEPTH | cv::IMREAD_ANYCOLOR);
  } catch (const cv::Exception& e) {
    throw IoError("cannot read image '" + path.string() + "': " + e.msg + said(codec.release()));
  }
  const std::string note = codec.release();
  if (m.empty())
    throw IoError("cannot read image '" + path.string() + "': not an image OpenCV can decode" + said(note));
  if (m.channels() == 3)
    cv::cvtColor(m, m, cv::COLOR_BGR2GRAY);
  else if (m.channels() == 4)
    cv::cvtColor(m, m, cv::COLOR_BGRA2GRAY);
  else if (m.channels() != 1)
    throw IoError("cannot read image '" + path.string() + "': " + std::to_string(m.channels()) + " channels");
  cv::Mat f;
  m.convertTo(f, CV_32F);
  Image image(f.cols, f.rows);
  for (int y = 0; y < f.rows; ++y) std::copy_n(f.ptr<float>(y), f.cols, image.view().row(y));
  return image;
}

void write_file(const fs::path& path, std::string_view bytes) {
  // append(), not "." + string: GCC 12 warns falsely (-Wrestrict) about the latter.
  const fs::path tmp =
      path.parent_path() / std::string(".").append(path.filename().string()).append(".tmp").append(
                               std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(describe(path, errno));
  auto fail = [&](int err, bool opened) {
    if (opened) ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError(describe(path, err));
  };
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno, true);
    done += std::size_t(n);
  }
  if (::fsync(fd) != 0) fail(errno, true);
  if (::close(fd) != 0) fail(errno, false);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno, false);
}

namespace {

void encode_and_write(const fs::path& path, const cv::Mat& m, const char* ext) {
  std::vector<unsigned char> bytes;
  bool ok = false;
  CapturedStderr codec;
  try {
    ok = cv::imencode(ext, m, bytes);
  } catch (const cv::Exception& e) {
    throw IoError("cannot write '" + path.string() + "': cannot encode " + ext + ": " + e.msg +
                  said(codec.release()));
  }
  const std::string note = codec.release();
  if (!ok) throw IoError("cannot write '" + path.string() + "': cannot encode " + ext + said(note));
  write_file(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

cv::Mat as_mat(const Image& image) {
  return cv::Mat(image.height(), image.width(), CV_32F, const_cast<float*>(image.data()));
}

}  // namespace

void write_float_tiff(const fs::path& path, const Image& image) { encode_and_write(path, as_mat(image), ".tiff"); }

std::size_t count_non_finite(const Image& image) {
  const float* p = image.data();
  std::size_t n = 0;
  for (std::size_t i = 0, end = image.pixel_count(); i < end; ++i) n += !std::isfinite(p[i]);
  return n;
}

void write_png_preview(const fs::path& path, const Image& image) {
  cv::Mat src = as_mat(image);
  double lo = 0, hi = 0;
  const std::size_t bad = count_non_finite(image);
  if (bad == 0) {
    cv::minMaxLoc(src, &lo, &hi);
  } else {
    // Scale on the finite values only; the rest saturates to the ends of the range.
    lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const float* p = image.data();
    for (std::size_t i = 0, end = image.pixel_count(); i < end; ++i)
      if (std::isfinite(p[i])) lo = std::min(lo, double(p[i])), hi = std::max(hi, double(p[i]));
    if (lo > hi) lo = hi = 0;
  }
  if (lo < 0 && hi > 0) {
    const double m = std::max(-lo, hi);
    lo = -m;
    hi = m;
  }
  if (bad != 0) {
    src = src.clone();
    for (int y = 0; y < src.rows; ++y)
      for (float& v : std::span(src.ptr<float>(y), std::size_t(src.cols)))
        if (!std::isfinite(v)) v = v > 0 ? float(hi) : float(lo);
  }
  const double range = hi > lo ? hi - lo : 1.0;
  cv::Mat out;
  src.convertTo(out, CV_8U, 255.0 / range, -lo * 255.0 / range);
  encode_and_write(path, out, ".png");
}

void write_png_u8(const fs::path& path, const Image& image) {
  cv::Mat src = as_mat(image).clone();
  src.setTo(0.0f, src != src);  // NaN (the only value unequal to itself) as 0
  cv::Mat out;
  src.convertTo(out, CV_8U);  // rounds to nearest and saturates
  encode_and_write(path, out, ".png");
}

}  // namespace tessera
