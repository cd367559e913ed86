// The image-buffer pool's policy on sizes (tessera/detail/buffer_cache.hpp): what it
// serves from freed buffers, what it maps, what it drops. Pure.
#include "tessera/detail/buffer_cache.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace tessera::detail;

TEST(BufferCache, ServesTheSmallestFreeBufferOfAtLeastTheRequestAndAtMostTwiceIt) {
  BufferCache<int> cache;
  EXPECT_FALSE(cache.take(100));  // nothing freed yet: the pool maps
  auto keep = [](const BufferCache<int>::Buffer&) { FAIL() << "nothing should be dropped"; };
  cache.give({150, 1}, keep);
  cache.give({100, 2}, keep);
  const auto b = cache.take(90);  // 100 and 150 fit; the smaller is taken
  ASSERT_TRUE(b);
  EXPECT_EQ(b->bytes, 100u);
  EXPECT_EQ(b->handle, 2);
  EXPECT_FALSE(cache.take(70));   // 150 > 2 x 70: memory would be wasted
  EXPECT_FALSE(cache.take(151));  // too small
  const auto c = cache.take(75);  // 150 = 2 x 75: still served
  ASSERT_TRUE(c);
  EXPECT_EQ(c->handle, 1);
  EXPECT_EQ(cache.free_bytes(), 0u);
}

TEST(BufferCache, KeepsAtMostFourGibibytesDroppingTheLargestFirst) {
  constexpr std::size_t GiB = std::size_t(1) << 30;
  BufferCache<int> cache;
  std::vector<int> dropped;
  auto drop = [&](const BufferCache<int>::Buffer& b) { dropped.push_back(b.handle); };
  cache.give({GiB, 1}, drop);
  cache.give({3 * GiB, 2}, drop);
  EXPECT_TRUE(dropped.empty());
  cache.give({GiB / 2, 3}, drop);  // 4.5 GiB free: the 3 GiB buffer goes
  EXPECT_EQ(dropped, std::vector<int>{2});
  EXPECT_EQ(cache.free_bytes(), GiB + GiB / 2);
  cache.clear(drop);
  EXPECT_EQ(dropped, (std::vector<int>{2, 3, 1}));  // by size
  EXPECT_EQ(cache.free_bytes(), 0u);
  EXPECT_FALSE(cache.take(1));
}

TEST(BufferCache, PooledSizesAreWholeHugePagesFromTwoMebibytesAnd64KibibytesBelow) {
  EXPECT_EQ(pooled_size(256 << 10), std::size_t(256) << 10);
  EXPECT_EQ(pooled_size((256 << 10) + 1), std::size_t(320) << 10);
  EXPECT_EQ(pooled_size((2 << 20) - 1), std::size_t(2) << 20);  // 64 KiB units reach 2 MiB
  EXPECT_EQ(pooled_size((2 << 20) + 1), std::size_t(4) << 20);   // huge pages
}

TEST(BufferCache, HugePagesFromAMappedSizeOfTwoMiB) {
  EXPECT_FALSE(maps_huge_pages(64 << 10));              // malloc'd
  EXPECT_FALSE(maps_huge_pages((2 << 20) - (64 << 10)));  // small pages
  EXPECT_TRUE(maps_huge_pages((2 << 20) - 1));            // rounded up to 2 MiB
  EXPECT_TRUE(maps_huge_pages(std::size_t(8) << 20));
}
