#include "tessera/image.hpp"

#include <cstdlib>
#include <new>
#include <sys/mman.h>

namespace tessera::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t(2) << 20;
}

void FreeFloats::operator()(float* p) const noexcept { std::free(p); }

FloatBuffer allocate_floats(std::size_t count) {
  if (count == 0) return FloatBuffer();
  const std::size_t bytes = count * sizeof(float);
  if (bytes < 2 * kHugePage) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return FloatBuffer(static_cast<float*>(p));
  }
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
  // Advice only: without transparent huge pages this is a no-op.
  madvise(p, rounded, MADV_HUGEPAGE);
  return FloatBuffer(static_cast<float*>(p));
}

}  // namespace tessera::detail
