// populate_pages (linalg/huge_page_allocator.hpp): the pages of a fresh range are resident
// afterwards, on any thread count, and ranges smaller than a page or not page-aligned are fine.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

#include "linalg/huge_page_allocator.hpp"

namespace cholsim::linalg {
namespace {

// Pages of [data, data + bytes) the kernel reports resident (mincore).
std::size_t resident_pages(void* data, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> residency((bytes + page - 1) / page);
  if (::mincore(data, bytes, residency.data()) != 0) return 0;
  std::size_t count = 0;
  for (const unsigned char flag : residency) count += flag & 1u;
  return count;
}

TEST(PopulatePages, FreshPagesAreResidentAfterwards) {
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    constexpr std::size_t bytes = std::size_t{16} << 20;
    void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(data, MAP_FAILED);
    const std::size_t pages = bytes / static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_EQ(resident_pages(data, bytes), 0u) << "a fresh mapping has no pages yet";
    populate_pages(data, bytes, threads);
    EXPECT_EQ(resident_pages(data, bytes), pages);
    ::munmap(data, bytes);
  }
}

TEST(PopulatePages, PartialPagesAreLeftAlone) {
  std::vector<double> small(10, 1.5);
  populate_pages(small.data(), small.size() * sizeof(double), 2);  // no whole page inside
  for (const double v : small) EXPECT_EQ(v, 1.5);
  populate_pages(small.data(), 0, 2);
}

}  // namespace
}  // namespace cholsim::linalg
