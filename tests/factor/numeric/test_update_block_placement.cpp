// Where update blocks live: the panel layout (multifrontal.hpp), the first-fit placement and
// the arena built on it (first_fit_placement.hpp, update_block_arena.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>
#include <set>

#include "factor/numeric/first_fit_placement.hpp"
#include "factor/numeric/multifrontal.hpp"
#include "factor/numeric/update_block_arena.hpp"

namespace cholsim::factor {
namespace {

// Every lower-triangle entry gets its own slot, inside entries(), for the widths the rule picks.
TEST(PanelLowerLayout, EveryLowerEntryHasItsOwnSlotInsideTheBlock) {
  for (const Index size : {Index{1}, Index{63}, Index{64}, Index{65}, Index{511}, Index{512}, Index{1024}, Index{2200}, Index{4100}}) {
    SCOPED_TRACE(size);
    const PanelLowerLayout layout = PanelLowerLayout::for_size(size);
    std::set<std::int64_t> slots;
    for (Index j = 0; j < size; j += (size > 300 ? 17 : 1)) {
      for (Index i = j; i < size; i += (size > 300 ? 13 : 1)) {
        const std::int64_t slot = layout.column_offset(j) + (i - j);
        EXPECT_LT(slot, layout.entries());
        EXPECT_TRUE(slots.insert(slot).second);
      }
    }
    // The half panel wasted per panel stays within 1/8 of the block (plus one 64-panel's worth).
    const double lower = 0.5 * static_cast<double>(size) * (size + 1);
    EXPECT_LE(static_cast<double>(layout.entries()), lower * (1.0 + 1.0 / 8) + 64.0 * size);
  }
  EXPECT_EQ(PanelLowerLayout::for_size(511).panel_width, 64);
  EXPECT_EQ(PanelLowerLayout::for_size(512).panel_width, 128);
  EXPECT_EQ(PanelLowerLayout::for_size(1024).panel_width, 256);
  EXPECT_EQ(PanelLowerLayout::for_size(100000).panel_width, 256);
}

// A block keeping its first columns (under a left-looking top) is a prefix of the whole one:
// same slots for the kept columns, all inside entries(), which grows with the kept columns.
TEST(PanelLowerLayout, KeptColumnsAreAPrefixOfTheWholeBlock) {
  for (const Index size : {Index{1}, Index{100}, Index{600}, Index{2200}}) {
    const PanelLowerLayout whole = PanelLowerLayout::for_size(size);
    std::vector<Index> kept_counts{0, 1, size / 3, whole.panel_width, size - 1, size, size + 5};
    std::sort(kept_counts.begin(), kept_counts.end());
    std::int64_t previous = 0;
    for (const Index kept : kept_counts) {
      SCOPED_TRACE(std::to_string(size) + " rows, " + std::to_string(kept) + " kept");
      const PanelLowerLayout layout = PanelLowerLayout::for_size(size, kept);
      EXPECT_EQ(layout.columns(), std::min(kept, size));
      EXPECT_GE(layout.entries(), previous);
      previous = layout.entries();
      for (Index j = 0; j < layout.columns(); j += 7) {
        EXPECT_EQ(layout.column_offset(j), whole.column_offset(j));
        EXPECT_LT(layout.column_offset(j) + (size - 1 - j), layout.entries());
      }
    }
    EXPECT_EQ(PanelLowerLayout::for_size(size, 0).entries(), 0);
    EXPECT_EQ(PanelLowerLayout::for_size(size, size).entries(), whole.entries());
  }
}

TEST(FirstFitPlacement, PlacesAtTheLowestGapThatFitsAndMergesGaps) {
  FirstFitPlacement placement(1 << 20);
  const std::int64_t a = *placement.place(100);  // rounded to 128
  const std::int64_t b = *placement.place(64);
  const std::int64_t c = *placement.place(256);
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 128);
  EXPECT_EQ(c, 192);
  EXPECT_EQ(placement.high_water(), 448);
  placement.remove(a, 100);
  placement.remove(b, 64);                // merges with a's gap: 192 bytes free at 0
  EXPECT_EQ(*placement.place(150), 0);    // fits the merged gap, not the end
  EXPECT_EQ(*placement.place(200), 448);  // the 0..192 gap has 0 bytes left below c
  placement.remove(448, 200);             // the top block: the end comes back down
  EXPECT_EQ(*placement.place(64), 448);
  EXPECT_EQ(placement.high_water(), 448 + 256);
}

TEST(FirstFitPlacement, RefusesWhatTheCapacityCannotHoldAndBadRemovals) {
  FirstFitPlacement placement(1024);
  EXPECT_TRUE(placement.place(1000).has_value());
  EXPECT_FALSE(placement.place(64).has_value());
  placement.remove(0, 1000);
  EXPECT_TRUE(placement.place(1024).has_value());
  EXPECT_THROW(placement.remove(2048, 64), std::logic_error);
}

TEST(UpdateBlockArena, ReusesReleasedBlocksAndReportsTheHighWaterMark) {
  UpdateBlockArena arena(1 << 20);
  double* first = arena.allocate(1000);
  ASSERT_NE(first, nullptr);
  for (int i = 0; i < 1000; ++i) first[i] = i;  // the pages are usable
  double* second = arena.allocate(500);
  ASSERT_NE(second, nullptr);
  EXPECT_GE(second, first + 1000);
  arena.release(first, 1000);
  EXPECT_EQ(arena.allocate(800), first);        // the freed place is reused, not fresh pages
  EXPECT_EQ(arena.allocate(1 << 20), nullptr);  // more than the reservation: the caller falls back
  EXPECT_EQ(arena.high_water_bytes(), FirstFitPlacement::rounded(8000) + FirstFitPlacement::rounded(4000));
}

}  // namespace
}  // namespace cholsim::factor
