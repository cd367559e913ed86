#include "tessera/image.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

#include "tessera/detail/buffer_cache.hpp"

namespace tessera::detail {

namespace {

// Freed image buffers are kept for the next image of a similar size instead of
// going back to the kernel: a program that runs the pipeline repeatedly would
// otherwise pay a page fault (and the kernel's zeroing) per page on every run.
// Large buffers are mapped with MADV_HUGEPAGE, so even the first touch costs one
// fault per 2 MiB rather than per 4 KiB. Which requests are mapped and which reuse a
// free buffer is BufferCache's policy, the one the scheduler prices first runs with.
class Pool {
 public:
  void* take(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    if (auto b = cached_.take(bytes)) {
      sizes_[b->handle] = b->bytes;
      return b->handle;
    }
    void* p = map_fresh(bytes);
    sizes_[p] = bytes;
    mapped_ += bytes;
    return p;
  }

  std::size_t mapped() {
    std::lock_guard lock(mutex_);
    return mapped_;
  }

  void release_free() {
    std::lock_guard lock(mutex_);
    cached_.clear([](const BufferCache<void*>::Buffer& b) { unmap_fresh(b.handle, b.bytes); });
  }

  bool give_back(void* p) {
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return false;
    cached_.give({it->second, p}, [](const BufferCache<void*>::Buffer& b) { unmap_fresh(b.handle, b.bytes); });
    sizes_.erase(it);
    return true;
  }

 private:
  std::mutex mutex_;
  std::map<void*, std::size_t> sizes_;  // buffers in use
  BufferCache<void*> cached_;           // free buffers
  std::size_t mapped_ = 0;              // ever mapped
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: buffers may outlive static destructors
  return *p;
}

}  // namespace

void FreeFloats::operator()(float* p) const noexcept {
  if (!pool().give_back(p)) std::free(p);
}

void* map_fresh(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (bytes >= kHugePageBytes) madvise(p, bytes, MADV_HUGEPAGE);  // advice only
  return p;
}

void unmap_fresh(void* p, std::size_t bytes) noexcept { munmap(p, bytes); }

FloatBuffer allocate_floats(std::size_t count) {
  if (count == 0) return FloatBuffer();
  const std::size_t bytes = count * sizeof(float);
  if (bytes < kPooledFromBytes) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return FloatBuffer(static_cast<float*>(p));
  }
  return FloatBuffer(static_cast<float*>(pool().take(pooled_size(bytes))));
}

}  // namespace tessera::detail

namespace tessera {
std::size_t image_bytes_mapped() { return detail::pool().mapped(); }
void release_free_image_buffers() { detail::pool().release_free(); }
}  // namespace tessera
