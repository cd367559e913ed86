#pragma once
// A one-line progress bar with ETA on stderr (rank 0 only). Pure apart from stderr.
#include <chrono>
#include <string>

namespace tessera::bench {

/// Formats "[#####.....]  45% p3pc     ETA 12s". `fraction` is clamped to [0, 1].
std::string format_progress(double fraction, const std::string& label, double eta_seconds,
                            int width = 30);

/// Throttled progress printer; does nothing when disabled.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  /// Overall fraction done and the current stage's name; redraws at most 10 times a second.
  void update(double fraction, const std::string& label);
  /// Ends the line.
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace tessera::bench
