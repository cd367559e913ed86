#include "tessera/io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>

#include "tessera/error.hpp"

namespace tessera {
namespace fs = std::filesystem;

Image read_image(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IoError("cannot read image '" + path.string() + "': no such file");
  if (fs::is_directory(path, ec))
    throw IoError("cannot read image '" + path.string() + "': it is a directory");
  cv::Mat m = cv::imread(path.string(), cv::IMREAD_ANYDEPTH | cv::IMREAD_ANYCOLOR);
  if (m.empty()) throw IoError("cannot read image '" + path.string() + "': not an image OpenCV can decode");
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

namespace {

// Writes through a temporary file in the same folder and renames it, so a reader
// (or a crash) never sees half a file.
void write_atomically(const fs::path& path, const cv::Mat& m, const std::string& ext) {
  const fs::path tmp =
      path.parent_path() / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()) + ext);
  bool ok = false;
  try {
    ok = cv::imwrite(tmp.string(), m);
  } catch (const cv::Exception&) {
    ok = false;
  }
  std::error_code ec;
  if (!ok) {
    fs::remove(tmp, ec);
    throw IoError("cannot write '" + path.string() + "'");
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw IoError("cannot write '" + path.string() + "': " + ec.message());
  }
}

cv::Mat as_mat(const Image& image) {
  return cv::Mat(image.height(), image.width(), CV_32F, const_cast<float*>(image.data()));
}

}  // namespace

void write_float_tiff(const fs::path& path, const Image& image) {
  write_atomically(path, as_mat(image), ".tiff");
}

void write_png_preview(const fs::path& path, const Image& image) {
  double lo = 0, hi = 0;
  cv::minMaxLoc(as_mat(image), &lo, &hi);
  if (lo < 0 && hi > 0) {
    const double m = std::max(-lo, hi);
    lo = -m;
    hi = m;
  }
  const double range = hi > lo ? hi - lo : 1.0;
  cv::Mat out;
  as_mat(image).convertTo(out, CV_8U, 255.0 / range, -lo * 255.0 / range);
  write_atomically(path, out, ".png");
}

}  // namespace tessera
