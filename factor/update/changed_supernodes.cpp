#include "factor/update/changed_supernodes.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cholsim::factor {
namespace {

void check_index(const char* what, Index index, Index bound) {
  if (index < 0 || index >= bound) {
    throw std::invalid_argument(std::string("changed entries: ") + what + " " + std::to_string(index) +
                                " is outside 0.." + std::to_string(bound - 1));
  }
}

// The supernodes an element's block lands in: its entry (a, b) goes to the supernode of
// column min(a, b) (elimination numbering), and its diagonal entries reach every DOF's own
// supernode, so the set is exactly the supernodes of its DOFs' columns.
void append_element_supernodes(const Symbolic& symbolic, std::span<const Index> dofs, std::vector<Index>& out) {
  const std::size_t first = out.size();
  for (Index dof : dofs) {
    check_index("DOF", dof, symbolic.size());
    out.push_back(supernode_of_column(symbolic, symbolic.inverse_permutation()[dof]));
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
}

void check_element_dofs(std::span<const Index> element_dofs, Index dofs_per_element) {
  if (dofs_per_element <= 0 || element_dofs.size() % static_cast<std::size_t>(dofs_per_element) != 0) {
    throw std::invalid_argument("changed entries: " + std::to_string(element_dofs.size()) +
                                " element DOFs do not split into elements of " +
                                std::to_string(dofs_per_element));
  }
}

// Marks every supernode that assembles an entry in a changed row or column: the entry
// (row, column) of s's block sits at offset (column − first_column)·m + position of row.
void mark_column_supernodes(const Symbolic& symbolic, std::span<const Index> user_columns,
                            std::vector<char>& marked) {
  std::vector<char> changed(static_cast<std::size_t>(symbolic.size()), 0);
  for (Index c : user_columns) {
    check_index("column", c, symbolic.size());
    changed[c] = 1;
  }
  const auto permutation = symbolic.permutation();
  for (Index s = 0; s < symbolic.supernode_count() && !user_columns.empty(); ++s) {
    const auto rows = symbolic.rows(s);
    const std::int64_t m = symbolic.row_count(s);
    for (std::int64_t offset : symbolic.a_targets(s)) {
      const Index row = rows[static_cast<std::size_t>(offset % m)];
      const auto column = static_cast<Index>(symbolic.first_column(s) + offset / m);
      if (changed[permutation[row]] || changed[permutation[column]]) {
        marked[s] = 1;
        break;
      }
    }
  }
}

}  // namespace

Index supernode_of_column(const Symbolic& symbolic, Index column) {
  Index low = 0;
  Index high = symbolic.supernode_count() - 1;
  while (low < high) {  // the last supernode whose first column is ≤ column
    const Index middle = low + (high - low + 1) / 2;
    if (symbolic.first_column(middle) <= column) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low;
}

ChangedEntries::ChangedEntries(Kind kind, std::vector<Index> indices, Index group)
    : kind_(kind), indices_(std::move(indices)), dofs_per_element_(group) {}

ChangedEntries ChangedEntries::columns(std::vector<Index> user_columns) {
  return {Kind::columns, std::move(user_columns), 1};
}

ChangedEntries ChangedEntries::supernodes(std::vector<Index> supernodes) {
  return {Kind::supernodes, std::move(supernodes), 1};
}

ChangedEntries ChangedEntries::elements(std::vector<Index> element_dofs, Index dofs_per_element) {
  check_element_dofs(element_dofs, dofs_per_element);
  return {Kind::element_dofs, std::move(element_dofs), dofs_per_element};
}

ChangedEntries ChangedEntries::all() { return {Kind::all, {}, 1}; }

std::vector<char> ChangedEntries::marked_supernodes(const Symbolic& symbolic) const {
  std::vector<char> marked(static_cast<std::size_t>(symbolic.supernode_count()), kind_ == Kind::all ? 1 : 0);
  switch (kind_) {
    case Kind::all:
      break;
    case Kind::columns:
      mark_column_supernodes(symbolic, indices_, marked);
      break;
    case Kind::supernodes:
      for (Index s : indices_) {
        check_index("supernode", s, symbolic.supernode_count());
        marked[s] = 1;
      }
      break;
    case Kind::element_dofs: {
      std::vector<Index> supernodes;
      for (std::size_t first = 0; first < indices_.size(); first += static_cast<std::size_t>(dofs_per_element_)) {
        supernodes.clear();
        append_element_supernodes(
            symbolic, std::span(indices_).subspan(first, static_cast<std::size_t>(dofs_per_element_)), supernodes);
        for (Index s : supernodes) marked[s] = 1;
      }
      break;
    }
  }
  return marked;
}

ElementSupernodeMap::ElementSupernodeMap(const Symbolic& symbolic, std::span<const Index> element_dofs,
                                         Index dofs_per_element)
    : supernode_count_(symbolic.supernode_count()) {
  check_element_dofs(element_dofs, dofs_per_element);
  const std::size_t elements = element_dofs.size() / static_cast<std::size_t>(dofs_per_element);
  offsets_.reserve(elements + 1);
  offsets_.push_back(0);
  for (std::size_t e = 0; e < elements; ++e) {
    append_element_supernodes(
        symbolic, element_dofs.subspan(e * static_cast<std::size_t>(dofs_per_element), static_cast<std::size_t>(dofs_per_element)),
        supernodes_);
    offsets_.push_back(static_cast<Index>(supernodes_.size()));
  }
}

void ElementSupernodeMap::mark(std::span<const Index> elements, std::span<char> marked) const {
  for (Index e : elements) {
    check_index("element", e, element_count());
    for (Index s : supernodes(e)) marked[s] = 1;
  }
}

std::vector<double> ElementSupernodeMap::supernode_badness(std::span<const double> element_error) const {
  if (static_cast<Index>(element_error.size()) != element_count()) {
    throw std::invalid_argument("supernode_badness: " + std::to_string(element_error.size()) +
                                " errors for " + std::to_string(element_count()) + " elements");
  }
  std::vector<double> badness(static_cast<std::size_t>(supernode_count_), 0.0);
  for (Index e = 0; e < element_count(); ++e) {
    for (Index s : supernodes(e)) badness[s] = std::max(badness[s], element_error[e]);
  }
  return badness;
}

}  // namespace cholsim::factor
