#include "progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera::bench {

std::string format_progress(double fraction, const std::string& label, double eta_seconds,
                            int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = int(std::lround(fraction * width));
  // Appending piecewise (not operator+ on temporaries) also avoids GCC 12's false
  // -Wrestrict warning on string concatenation.
  std::string bar;
  bar.reserve(std::size_t(width) + 2);
  bar += '[';
  bar.append(std::size_t(filled), '#');
  bar.append(std::size_t(width - filled), '.');
  bar += ']';
  char tail[96];
  if (std::isfinite(eta_seconds))
    std::snprintf(tail, sizeof tail, " %3d%% %-8s ETA %3.0fs", int(fraction * 100), label.c_str(),
                  std::max(0.0, eta_seconds));
  else
    std::snprintf(tail, sizeof tail, " %3d%% %-8s ETA   ?s", int(fraction * 100), label.c_str());
  bar += tail;
  return bar;
}

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressBar::update(double fraction, const std::string& label) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = fraction > 0.01 ? elapsed * (1 - fraction) / fraction : INFINITY;
  std::fprintf(stderr, "\r%s", format_progress(fraction, label, eta).c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace tessera::bench
