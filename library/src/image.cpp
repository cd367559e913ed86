#include "tessera/image.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace tessera::detail {

namespace {

constexpr std::size_t kPooledFrom = std::size_t(256) << 10;  // smaller ones: plain malloc
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kMaxCached = std::size_t(4) << 30;

// Freed image buffers are kept for the next image of a similar size instead of
// going back to the kernel: a program that runs the pipeline repeatedly would
// otherwise pay a page fault (and the kernel's zeroing) per page on every run.
// Large buffers are mapped 2 MiB-aligned with MADV_HUGEPAGE, so even the first
// touch costs one fault per 2 MiB rather than per 4 KiB.
class Pool {
 public:
  void* take(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    // Reuse a cached buffer at most twice the request, so memory is not wasted.
    auto it = cached_.lower_bound(bytes);
    if (it != cached_.end() && it->first <= 2 * bytes) {
      void* p = it->second;
      sizes_[p] = it->first;
      cached_bytes_ -= it->first;
      cached_.erase(it);
      return p;
    }
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (bytes >= kHugePage) madvise(p, bytes, MADV_HUGEPAGE);  // advice only
    sizes_[p] = bytes;
    return p;
  }

  bool give_back(void* p) {
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return false;
    const std::size_t bytes = it->second;
    sizes_.erase(it);
    cached_.emplace(bytes, p);
    cached_bytes_ += bytes;
    while (cached_bytes_ > kMaxCached) {  // drop the largest first
      auto last = std::prev(cached_.end());
      munmap(last->second, last->first);
      cached_bytes_ -= last->first;
      cached_.erase(last);
    }
    return true;
  }

 private:
  std::mutex mutex_;
  std::map<void*, std::size_t> sizes_;        // buffers in use
  std::multimap<std::size_t, void*> cached_;  // free buffers by size
  std::size_t cached_bytes_ = 0;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: buffers may outlive static destructors
  return *p;
}

std::size_t round_up(std::size_t bytes) {
  const std::size_t unit = bytes >= kHugePage ? kHugePage : std::size_t(64) << 10;
  return (bytes + unit - 1) / unit * unit;
}

}  // namespace

void FreeFloats::operator()(float* p) const noexcept {
  if (!pool().give_back(p)) std::free(p);
}

FloatBuffer allocate_floats(std::size_t count) {
  if (count == 0) return FloatBuffer();
  const std::size_t bytes = count * sizeof(float);
  if (bytes < kPooledFrom) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return FloatBuffer(static_cast<float*>(p));
  }
  return FloatBuffer(static_cast<float*>(pool().take(round_up(bytes))));
}

}  // namespace tessera::detail
