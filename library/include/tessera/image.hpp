#pragma once
// Non-owning views of row-major float images, and a small owning image. Pure.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <memory>

namespace tessera {

/// A row-major view: pixel (x, y) is at data[y * stride + x]; stride in floats.
template <class T>
struct BasicView {
  T* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;

  T& at(int x, int y) const { return data[std::ptrdiff_t(y) * stride + x]; }
  T* row(int y) const { return data + std::ptrdiff_t(y) * stride; }
  /// The view of the w x h rectangle whose top-left pixel is (x, y) (may be negative
  /// when this view is itself the interior of a larger, haloed buffer).
  BasicView sub(int x, int y, int w, int h) const { return {&at(x, y), w, h, stride}; }
  operator BasicView<const T>() const { return {data, width, height, stride}; }
};
using View = BasicView<float>;
using ConstView = BasicView<const float>;

namespace detail {
/// Float storage for large images: 2 MiB-aligned and, where the kernel allows,
/// backed by transparent huge pages, so first touch costs one fault per 2 MiB
/// rather than per 4 KiB. Contents start uninitialised.
struct FreeFloats {
  void operator()(float* p) const noexcept;
};
using FloatBuffer = std::unique_ptr<float[], FreeFloats>;
FloatBuffer allocate_floats(std::size_t count);

/// Fresh memory mapped exactly as an image buffer the pool cannot serve from its cache
/// (huge pages advised from 2 MiB); release with unmap_fresh. tessera-bench times the
/// first touch of such memory with it: what a process's first run pays per buffer.
void* map_fresh(std::size_t bytes);
void unmap_fresh(void* p, std::size_t bytes) noexcept;
}  // namespace detail

/// Bytes of image buffers this process has mapped from the kernel so far: each one's
/// pages fault on first touch. Buffers the library's pool serves again (a program's
/// later runs) are not counted, nor those below 256 KiB (plain malloc).
std::size_t image_bytes_mapped();
/// Gives the free image buffers the pool keeps for later images back to the kernel: the
/// next images map (and first-touch) their memory again. Local.
void release_free_image_buffers();

/// An owning, contiguous float image (stride == width). Move-only.
class Image {
 public:
  Image() = default;
  /// Uninitialised pixels: the caller writes every one.
  Image(int width, int height)
      : width_(width),
        height_(height),
        pixels_(detail::allocate_floats(std::size_t(width) * std::size_t(height))) {}
  Image(int width, int height, float value) : Image(width, height) {
    std::fill_n(pixels_.get(), pixel_count(), value);
  }
  int width() const { return width_; }
  int height() const { return height_; }
  std::size_t pixel_count() const { return std::size_t(width_) * std::size_t(height_); }
  float* data() { return pixels_.get(); }
  const float* data() const { return pixels_.get(); }
  float& at(int x, int y) { return pixels_[std::size_t(y) * std::size_t(width_) + std::size_t(x)]; }
  float at(int x, int y) const { return pixels_[std::size_t(y) * std::size_t(width_) + std::size_t(x)]; }
  View view() { return {data(), width_, height_, width_}; }
  ConstView view() const { return {data(), width_, height_, width_}; }
  bool empty() const { return pixel_count() == 0; }

 private:
  int width_ = 0;
  int height_ = 0;
  detail::FloatBuffer pixels_;
};

}  // namespace tessera
