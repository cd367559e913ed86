#pragma once
// Non-owning views of row-major float images, and a small owning image. Pure.
#include <cassert>
#include <cstddef>
#include <vector>

namespace tessera {

/// A row-major view: pixel (x, y) is at data[y * stride + x]; stride in floats.
template <class T>
struct BasicView {
  T* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;

  T& at(int x, int y) const {
    return data[std::ptrdiff_t(y) * stride + x];
  }
  T* row(int y) const { return data + std::ptrdiff_t(y) * stride; }
  /// The view of the w x h rectangle whose top-left pixel is (x, y) (may be negative
  /// when this view is itself the interior of a larger, haloed buffer).
  BasicView sub(int x, int y, int w, int h) const { return {&at(x, y), w, h, stride}; }
  operator BasicView<const T>() const { return {data, width, height, stride}; }
};
using View = BasicView<float>;
using ConstView = BasicView<const float>;

/// An owning, contiguous float image (stride == width).
class Image {
 public:
  Image() = default;
  Image(int width, int height, float value = 0.0f)
      : width_(width), height_(height), pixels_(std::size_t(width) * std::size_t(height), value) {}
  int width() const { return width_; }
  int height() const { return height_; }
  float* data() { return pixels_.data(); }
  const float* data() const { return pixels_.data(); }
  float& at(int x, int y) { return pixels_[std::size_t(y) * std::size_t(width_) + std::size_t(x)]; }
  float at(int x, int y) const { return pixels_[std::size_t(y) * std::size_t(width_) + std::size_t(x)]; }
  View view() { return {data(), width_, height_, width_}; }
  ConstView view() const { return {data(), width_, height_, width_}; }
  bool empty() const { return pixels_.empty(); }

 private:
  int width_ = 0;
  int height_ = 0;
  std::vector<float> pixels_;
};

}  // namespace tessera
