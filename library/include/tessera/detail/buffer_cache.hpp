#pragma once
// The policy of the executor's image-buffer pool (image.cpp), on sizes alone: which
// requests it maps from the kernel and which it serves from buffers freed earlier.
// The pool runs it on real buffers; the scheduler runs it on a program's buffer list
// to price the page faults of a process's first run (first_touch in
// scheduler/program.hpp). Pure.
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>

namespace tessera::detail {

/// Below this many bytes a buffer is plain malloc'd memory, not the pool's.
inline constexpr std::size_t kPooledFromBytes = std::size_t(256) << 10;
/// Buffers from this size are mapped with huge pages advised.
inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;
/// The most free bytes the pool keeps; beyond it the largest free buffers are unmapped.
inline constexpr std::size_t kMaxCachedBytes = std::size_t(4) << 30;

/// The bytes the pool maps for a request of `bytes` (>= kPooledFromBytes): whole huge
/// pages from 2 MiB, whole 64 KiB below.
inline std::size_t pooled_size(std::size_t bytes) {
  const std::size_t unit = bytes >= kHugePageBytes ? kHugePageBytes : std::size_t(64) << 10;
  return (bytes + unit - 1) / unit * unit;
}

/// Whether the pool maps a request of `bytes` with huge pages advised: a pooled request
/// whose mapped size (pooled_size) is at least kHugePageBytes.
inline bool maps_huge_pages(std::size_t bytes) {
  return bytes >= kPooledFromBytes && pooled_size(bytes) >= kHugePageBytes;
}

/// Free buffers by size. A request takes the smallest free buffer of at least its size
/// and at most twice it (so memory is not wasted), or none.
template <class Handle>
class BufferCache {
 public:
  struct Buffer {
    std::size_t bytes = 0;
    Handle handle{};
  };

  std::optional<Buffer> take(std::size_t bytes) {
    auto it = free_.lower_bound(bytes);
    if (it == free_.end() || it->first > 2 * bytes) return std::nullopt;
    Buffer b{it->first, it->second};
    free_bytes_ -= it->first;
    free_.erase(it);
    return b;
  }

  /// Keeps `b` for later requests; `release(Buffer)` is called for each buffer dropped
  /// to stay within kMaxCachedBytes (the largest first).
  template <class Release>
  void give(Buffer b, Release&& release) {
    free_.emplace(b.bytes, b.handle);
    free_bytes_ += b.bytes;
    while (free_bytes_ > kMaxCachedBytes) {
      auto last = std::prev(free_.end());
      release(Buffer{last->first, last->second});
      free_bytes_ -= last->first;
      free_.erase(last);
    }
  }

  /// Drops every free buffer (`release(Buffer)` for each).
  template <class Release>
  void clear(Release&& release) {
    for (const auto& [bytes, handle] : free_) release(Buffer{bytes, handle});
    free_.clear();
    free_bytes_ = 0;
  }

  std::size_t free_bytes() const { return free_bytes_; }

 private:
  std::multimap<std::size_t, Handle> free_;
  std::size_t free_bytes_ = 0;
};

}  // namespace tessera::detail
