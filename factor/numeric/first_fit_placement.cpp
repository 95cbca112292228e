#include "factor/numeric/first_fit_placement.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace cholsim::factor {

std::optional<std::int64_t> FirstFitPlacement::place(std::int64_t bytes) {
  const std::int64_t length = rounded(std::max<std::int64_t>(bytes, 1));
  for (auto gap = gaps_.begin(); gap != gaps_.end(); ++gap) {
    if (gap->second < length) continue;
    const std::int64_t offset = gap->first;
    const std::int64_t rest = gap->second - length;
    gaps_.erase(gap);
    if (rest > 0) gaps_.emplace(offset + length, rest);
    return offset;
  }
  // No gap holds it: it goes at the end (remove() keeps no gap touching the end).
  if (end_ + length > capacity_) return std::nullopt;
  const std::int64_t offset = end_;
  end_ += length;
  high_water_ = std::max(high_water_, end_);
  return offset;
}

void FirstFitPlacement::remove(std::int64_t offset, std::int64_t bytes) {
  const std::int64_t length = rounded(std::max<std::int64_t>(bytes, 1));
  if (offset < 0 || offset + length > end_) {
    throw std::logic_error("FirstFitPlacement::remove: block outside the placed range");
  }
  auto gap = gaps_.emplace(offset, length).first;
  // Merge with the neighbouring gaps so that a later block finds the whole hole.
  if (const auto next = std::next(gap); next != gaps_.end() && offset + length == next->first) {
    gap->second += next->second;
    gaps_.erase(next);
  }
  if (gap != gaps_.begin()) {
    const auto previous = std::prev(gap);
    if (previous->first + previous->second == gap->first) {
      previous->second += gap->second;
      gaps_.erase(gap);
      gap = previous;
    }
  }
  if (gap->first + gap->second == end_) {  // the top of the range is free again
    end_ = gap->first;
    gaps_.erase(gap);
  }
}

}  // namespace cholsim::factor
