#include "factor/analysis/minimum_degree.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

namespace cholsim::factor {
namespace {

// What a vertex of the quotient graph currently is.
enum class Kind : unsigned char {
  variable,  ///< not yet eliminated (a principal supervariable)
  element,   ///< eliminated: stands for the clique of the variables in its list
  absorbed,  ///< an element absorbed into a newer one, or a variable merged into another
  dense,     ///< taken out before the ordering, placed last
};

// The quotient graph and the AMD elimination on it. Notation of the paper: "me" is the
// pivot, Lme the variables of the element it becomes, Le the variables of element e, and
// |X| always counts original vertices (supervariables weigh their size).
//
// All lists live in one array, `storage_`: a variable's list holds its elements first
// (element_count_ of them), then its variable neighbours; an element's list holds its
// variables. Lists only shrink, except that a new element is appended at `free_`; when the
// array is full, the live lists are compacted to its front (garbage collection).
class MinimumDegree {
 public:
  // Takes the graph's neighbour array over as its own workspace (no copy when the caller
  // moves it in and reserved the elbow room: adjacency_graph's spare_capacity). The graph
  // must hold no self loops (adjacency_graph's never do).
  MinimumDegree(AdjacencyGraph graph, const MinimumDegreeOptions& options,
                std::span<const Index> constraint_sets = {});
  std::vector<Index> order();

 private:
  void take_out_dense_vertices(const AdjacencyGraph& graph, const MinimumDegreeOptions& options);
  void load_graph(AdjacencyGraph&& graph, double elbow_room);

  Index select_pivot();
  [[nodiscard]] bool is_candidate(Index i) const { return constraint_.empty() || constraint_[i] == current_set_; }
  [[nodiscard]] bool same_set(Index i, Index j) const { return constraint_.empty() || constraint_[i] == constraint_[j]; }
  void open_next_set();
  [[nodiscard]] std::size_t set_end(std::size_t begin) const;
  void insert_by_degree(Index i, Index degree);
  void remove_from_degree_list(Index i);

  void form_pivot_element(Index me);
  void gather_variable(Index j);
  void store_pivot_element(Index me);
  void make_room(Offset needed);
  void compute_external_weights();
  void update_variable_lists(Index me);
  Index bucket_of(std::uint32_t hash) const;
  void mass_eliminate(Index i, Index me);
  void detect_supervariables();
  void merge_bucket(Index first);
  void finish_pivot_element(Index me);
  void append_members(Index to, Index from);

  Index n_;
  Index active_;  // vertices the minimum degree search orders (n minus dense ones)
  bool aggressive_;

  std::vector<Index> storage_;
  Offset free_ = 0;
  std::vector<Offset> start_;
  std::vector<Index> length_;
  std::vector<Index> element_count_;
  std::vector<Kind> kind_;
  // Vertices a principal variable stands for; negated while it belongs to the pivot's Lme,
  // which both marks membership and keeps its weight; 0 for every other kind. So the hot
  // scans tell a live variable (> 0) with one load instead of two.
  std::vector<Index> weight_;
  // Variables: approximate external degree (an upper bound). Elements: |Le|.
  std::vector<Index> degree_;

  // Doubly linked lists of variables by degree; the next pivot heads the lowest one. With
  // constraint sets only the current set's variables are listed (candidates_ of them); the
  // others keep their degree bounds in degree_ until their set opens.
  std::vector<Index> degree_head_, degree_next_, degree_previous_;
  Index min_degree_ = 0;
  Index candidates_ = 0;

  // Constraint sets (empty: none): vertex v may be a pivot only once every vertex of a lower
  // set is eliminated. set_members_ lists the vertices set by set in increasing set order;
  // current_set_ is the open set, next_set_begin_ where the next set starts in set_members_.
  std::vector<Index> constraint_;
  std::vector<Index> set_members_;
  Index current_set_ = 0;
  std::size_t next_set_begin_ = 0;

  // Hash buckets of the variables of Lme for supervariable detection.
  std::vector<Index> bucket_head_, bucket_next_, hash_;

  // Scratch marks: a value ≥ mark_flag_ is "set in this pass". For elements in
  // compute_external_weights, mark_ − mark_flag_ is |Le \ Lme|. 64 bits so that the flag,
  // raised by n + 1 per pivot, never wraps and the array never needs clearing.
  std::vector<std::int64_t> mark_;
  std::int64_t mark_flag_ = 1;

  // Each principal variable heads a chain of the original vertices it stands for.
  std::vector<Index> member_next_, member_tail_;

  std::vector<Index> pivot_element_;  // Lme while it is formed and updated
  Index eliminated_ = 0;  // original vertices eliminated so far
  std::vector<Index> order_;
};

constexpr Index kNone = -1;

MinimumDegree::MinimumDegree(AdjacencyGraph graph, const MinimumDegreeOptions& options,
                             std::span<const Index> constraint_sets)
    : n_(graph.vertex_count()),
      active_(n_),
      aggressive_(options.aggressive_absorption),
      start_(static_cast<std::size_t>(n_), 0),
      length_(static_cast<std::size_t>(n_), 0),
      element_count_(static_cast<std::size_t>(n_), 0),
      kind_(static_cast<std::size_t>(n_), Kind::variable),
      weight_(static_cast<std::size_t>(n_), 1),
      degree_(static_cast<std::size_t>(n_), 0),
      degree_head_(static_cast<std::size_t>(n_) + 1, kNone),
      degree_next_(static_cast<std::size_t>(n_), kNone),
      degree_previous_(static_cast<std::size_t>(n_), kNone),
      bucket_head_(static_cast<std::size_t>(n_), kNone),
      bucket_next_(static_cast<std::size_t>(n_), kNone),
      hash_(static_cast<std::size_t>(n_), 0),
      mark_(static_cast<std::size_t>(n_), 0),
      member_next_(static_cast<std::size_t>(n_), kNone),
      member_tail_(static_cast<std::size_t>(n_)) {
  std::iota(member_tail_.begin(), member_tail_.end(), 0);
  order_.reserve(static_cast<std::size_t>(n_));
  if (!constraint_sets.empty() && n_ > 0) {
    if (static_cast<Index>(constraint_sets.size()) != n_) {
      throw std::invalid_argument("constrained minimum degree: " + std::to_string(constraint_sets.size()) +
                                  " constraint sets for " + std::to_string(n_) + " vertices");
    }
    constraint_.assign(constraint_sets.begin(), constraint_sets.end());
    set_members_.resize(static_cast<std::size_t>(n_));
    std::iota(set_members_.begin(), set_members_.end(), 0);
    std::stable_sort(set_members_.begin(), set_members_.end(),
                     [this](Index a, Index b) { return constraint_[a] < constraint_[b]; });
    current_set_ = constraint_[set_members_.front()];
    next_set_begin_ = set_end(0);
  }
  take_out_dense_vertices(graph, options);
  load_graph(std::move(graph), options.elbow_room);
}

void MinimumDegree::take_out_dense_vertices(const AdjacencyGraph& graph,
                                            const MinimumDegreeOptions& options) {
  if (options.dense_row_factor < 0.0) return;
  const double threshold =
      std::max(16.0, options.dense_row_factor * std::sqrt(static_cast<double>(n_)));
  for (Index v = 0; v < n_; ++v) {
    if (graph.offsets[v + 1] - graph.offsets[v] > threshold) {
      kind_[v] = Kind::dense;
      weight_[v] = 0;
      --active_;
    }
  }
}

// The graph's lists (no self loops: the constructor's precondition) become the first lists
// of storage_ where they are, the dense vertices' entries squeezed out by a forward
// compaction if there are any, and the elbow room is appended. Building the scalar graph
// and copying it had cost as much as the elimination itself on 3-DOF shells (perf).
void MinimumDegree::load_graph(AdjacencyGraph&& graph, double elbow_room) {
  storage_ = std::move(graph.neighbors);
  const bool has_dense = active_ < n_;
  for (Index v = 0; v < n_; ++v) {
    const Offset begin = graph.offsets[v];
    const Offset end = graph.offsets[v + 1];
    start_[v] = has_dense ? free_ : begin;
    if (kind_[v] == Kind::dense) continue;
    if (has_dense) {
      for (Offset p = begin; p < end; ++p) {
        if (kind_[storage_[p]] != Kind::dense) storage_[free_++] = storage_[p];
      }
    } else {
      free_ = end;
    }
    length_[v] = static_cast<Index>(free_ - start_[v]);
    insert_by_degree(v, length_[v]);
  }
  const auto elbow = static_cast<Offset>(std::max(0.0, elbow_room) * static_cast<double>(free_));
  // Plus n: every pivot's element fits once between collections even without edges.
  storage_.resize(static_cast<std::size_t>(free_ + elbow + (elbow_room > 0.0 ? n_ : 0)));
}

void MinimumDegree::insert_by_degree(Index i, Index degree) {
  degree_[i] = degree;
  if (!is_candidate(i)) return;
  ++candidates_;
  degree_previous_[i] = kNone;
  degree_next_[i] = degree_head_[degree];
  if (degree_next_[i] != kNone) degree_previous_[degree_next_[i]] = i;
  degree_head_[degree] = i;
  min_degree_ = std::min(min_degree_, degree);
}

void MinimumDegree::remove_from_degree_list(Index i) {
  if (!is_candidate(i)) return;
  --candidates_;
  if (degree_previous_[i] != kNone) {
    degree_next_[degree_previous_[i]] = degree_next_[i];
  } else {
    degree_head_[degree_[i]] = degree_next_[i];
  }
  if (degree_next_[i] != kNone) degree_previous_[degree_next_[i]] = degree_previous_[i];
}

Index MinimumDegree::select_pivot() {
  while (candidates_ == 0) open_next_set();
  while (degree_head_[min_degree_] == kNone) ++min_degree_;
  const Index me = degree_head_[min_degree_];
  remove_from_degree_list(me);
  return me;
}

std::size_t MinimumDegree::set_end(std::size_t begin) const {
  std::size_t end = begin;
  while (end < set_members_.size() && constraint_[set_members_[end]] == constraint_[set_members_[begin]]) ++end;
  return end;
}

// The next constraint set's remaining principal variables enter the degree lists with the
// degree bounds they have kept while their set waited.
void MinimumDegree::open_next_set() {
  assert(next_set_begin_ < set_members_.size());
  const std::size_t end = set_end(next_set_begin_);
  current_set_ = constraint_[set_members_[next_set_begin_]];
  min_degree_ = n_;
  for (std::size_t k = next_set_begin_; k < end; ++k) {
    const Index v = set_members_[k];
    if (kind_[v] == Kind::variable && weight_[v] > 0) insert_by_degree(v, degree_[v]);
  }
  next_set_begin_ = end;
}

std::vector<Index> MinimumDegree::order() {
  while (eliminated_ < active_) {
    const Index me = select_pivot();
    form_pivot_element(me);
    compute_external_weights();
    update_variable_lists(me);
    mark_flag_ += n_ + 1;
    detect_supervariables();
    mark_flag_ += n_ + 1;
    finish_pivot_element(me);
  }
  for (Index v = 0; v < n_; ++v) {
    if (kind_[v] == Kind::dense) order_.push_back(v);
  }
  return std::move(order_);
}

// Lme = the pivot's variable neighbours ∪ the variables of its elements, which it absorbs.
void MinimumDegree::form_pivot_element(Index me) {
  eliminated_ += weight_[me];
  weight_[me] = -weight_[me];  // keeps the pivot out of its own Lme
  pivot_element_.clear();
  const Offset begin = start_[me];
  const Offset elements_end = begin + element_count_[me];
  for (Offset p = begin; p < elements_end; ++p) {
    const Index e = storage_[p];
    if (kind_[e] != Kind::element) continue;
    for (Offset q = start_[e]; q < start_[e] + length_[e]; ++q) gather_variable(storage_[q]);
    kind_[e] = Kind::absorbed;
  }
  for (Offset p = elements_end; p < begin + length_[me]; ++p) gather_variable(storage_[p]);
  kind_[me] = Kind::element;
  length_[me] = 0;  // its old list is dead: garbage collection may reclaim it
  store_pivot_element(me);
}

void MinimumDegree::gather_variable(Index j) {
  if (weight_[j] <= 0) return;  // not a variable, or already in Lme
  remove_from_degree_list(j);
  weight_[j] = -weight_[j];
  pivot_element_.push_back(j);
}

void MinimumDegree::store_pivot_element(Index me) {
  const auto size = static_cast<Offset>(pivot_element_.size());
  make_room(size);
  start_[me] = free_;
  length_[me] = static_cast<Index>(size);
  std::copy(pivot_element_.begin(), pivot_element_.end(), storage_.begin() + free_);
  free_ += size;
}

// Garbage collection: moves the live lists, in storage order, to the front of the array.
// The absorbed elements' and eliminated variables' lists (length 0) are what it reclaims;
// the array grows only if that is not enough. Each live list's first entry is swapped for
// the marker −(v + 1), so one sweep finds the lists in storage order without sorting them.
void MinimumDegree::make_room(Offset needed) {
  if (free_ + needed <= static_cast<Offset>(storage_.size())) return;
  std::vector<Index> first_entry(static_cast<std::size_t>(n_));
  for (Index v = 0; v < n_; ++v) {
    const bool has_list = kind_[v] == Kind::variable || kind_[v] == Kind::element;
    if (!has_list || length_[v] == 0) continue;
    first_entry[v] = storage_[start_[v]];
    storage_[start_[v]] = -(v + 1);
  }
  Offset out = 0;
  for (Offset p = 0; p < free_;) {
    if (storage_[p] >= 0) {  // a dead entry
      ++p;
      continue;
    }
    const Index v = -storage_[p] - 1;
    storage_[p] = first_entry[v];
    std::copy(storage_.begin() + p, storage_.begin() + p + length_[v], storage_.begin() + out);
    start_[v] = out;
    out += length_[v];
    p += length_[v];
  }
  free_ = out;
  if (free_ + needed > static_cast<Offset>(storage_.size())) {
    storage_.resize(static_cast<std::size_t>(std::max(free_ + needed, 2 * static_cast<Offset>(storage_.size()))));
  }
}

// For every element e adjacent to a variable of Lme: mark_[e] − mark_flag_ = |Le \ Lme|
// (the paper's Algorithm 2), found by subtracting the weight of each variable of Lme ∩ Le
// from |Le|.
void MinimumDegree::compute_external_weights() {
  const Index* const storage = storage_.data();
  const Kind* const kind = kind_.data();
  std::int64_t* const mark = mark_.data();
  for (Index i : pivot_element_) {
    const Index weight = -weight_[i];
    const Index* const elements = storage + start_[i];
    for (Index p = 0; p < element_count_[i]; ++p) {
      const Index e = elements[p];
      if (kind[e] != Kind::element) continue;
      if (mark[e] < mark_flag_) mark[e] = mark_flag_ + degree_[e];
      mark[e] -= weight;
    }
  }
}

// For each variable i of Lme (the paper's Algorithm 3): prunes its lists — absorbed elements,
// and variables that now reach i through the pivot element — puts the pivot element first,
// bounds its degree without Lme's part and hashes the lists for supervariable detection.
// A variable left with nothing but the pivot element is indistinguishable from the pivot and
// is eliminated with it (mass elimination).
void MinimumDegree::update_variable_lists(Index me) {
  Kind* const kind = kind_.data();
  const Index* const weight = weight_.data();
  const std::int64_t* const mark = mark_.data();
  for (Index i : pivot_element_) {
    Index* const list = storage_.data() + start_[i];
    Index out = 0;
    std::int64_t external_degree = 0;
    std::uint32_t hash = 0;  // wraps: only equal lists must hash equal
    for (Index p = 0; p < element_count_[i]; ++p) {
      const Index e = list[p];
      if (kind[e] != Kind::element) continue;
      const std::int64_t outside = mark[e] - mark_flag_;
      if (outside == 0 && aggressive_) {
        kind[e] = Kind::absorbed;  // Le ⊆ Lme: the pivot element covers it
        continue;
      }
      external_degree += outside;
      hash += static_cast<std::uint32_t>(e);
      list[out++] = e;
    }
    const Index elements_kept = out;
    for (Index p = element_count_[i]; p < length_[i]; ++p) {
      const Index j = list[p];
      if (weight[j] <= 0) continue;  // not a variable, or reached through me
      external_degree += weight[j];
      hash += static_cast<std::uint32_t>(j);
      list[out++] = j;
    }
    if (out == 0 && same_set(i, me)) {
      mass_eliminate(i, me);
      continue;
    }
    // The pivot element goes to the front of the element part, the element there to its
    // end and the first variable to the end of the list (i lost at least one entry, me
    // itself or the element through which i reached me, so there is room). This order is
    // not cosmetic: it is the order in which i's pivot element will gather its variables,
    // hence the order they enter the degree lists, hence every later tie between equal
    // degrees. It is SuiteSparse AMD's order; appending me at the end of the elements
    // instead left the algorithm the same but broke ties differently, ±5 % of nnz(L) on one
    // labelling either way (issue 23: 3D 7-point 40³ 1.041, elasticity 20³ 1.048).
    assert(out < length_[i]);
    list[out] = list[elements_kept];
    list[elements_kept] = list[0];
    list[0] = me;
    element_count_[i] = elements_kept + 1;
    length_[i] = out + 1;
    degree_[i] = static_cast<Index>(std::min<std::int64_t>(degree_[i], external_degree));
    hash_[i] = bucket_of(hash);
    bucket_next_[i] = bucket_head_[hash_[i]];
    bucket_head_[hash_[i]] = i;
  }
}

// A bucket in [0, n): the plain sum modulo n keeps the buckets of neighbouring variables
// near each other in memory (a scrambling hash made bucket_head_ a cache miss per variable,
// 14 % of the time on a 2D grid); 32-bit, as a 64-bit division was 8 % (both profiled).
Index MinimumDegree::bucket_of(std::uint32_t hash) const {
  return static_cast<Index>(hash % static_cast<std::uint32_t>(n_));
}

void MinimumDegree::mass_eliminate(Index i, Index me) {
  eliminated_ -= weight_[i];  // negative: i is in Lme
  weight_[i] = 0;
  kind_[i] = Kind::absorbed;
  length_[i] = 0;
  append_members(me, i);
}

// Variables of Lme with the same lists are indistinguishable: they will always have the
// same degree and be eliminated together, so they merge into one supervariable. Only
// variables with equal hashes are compared.
void MinimumDegree::detect_supervariables() {
  for (Index i : pivot_element_) {
    if (weight_[i] >= 0) continue;  // mass-eliminated
    const Index bucket = hash_[i];
    const Index first = bucket_head_[bucket];
    if (first == kNone) continue;
    bucket_head_[bucket] = kNone;
    merge_bucket(first);
  }
}

void MinimumDegree::merge_bucket(Index first) {
  for (Index i = first; i != kNone; i = bucket_next_[i]) {
    if (weight_[i] >= 0 || bucket_next_[i] == kNone) continue;  // merged, or nothing to compare
    const Offset begin = start_[i];
    const Offset end = begin + length_[i];
    for (Offset p = begin; p < end; ++p) mark_[storage_[p]] = mark_flag_;
    Index previous = i;
    for (Index j = bucket_next_[i]; j != kNone; j = bucket_next_[j]) {
      const bool same_shape =
          length_[j] == length_[i] && element_count_[j] == element_count_[i] && same_set(i, j);
      const bool same = same_shape && std::all_of(storage_.begin() + start_[j],
                                                  storage_.begin() + start_[j] + length_[j],
                                                  [this](Index x) { return mark_[x] == mark_flag_; });
      if (!same) {
        previous = j;
        continue;
      }
      weight_[i] += weight_[j];  // both negative: Lme membership is kept
      weight_[j] = 0;
      kind_[j] = Kind::absorbed;
      length_[j] = 0;
      append_members(i, j);
      bucket_next_[previous] = bucket_next_[j];
    }
    ++mark_flag_;
  }
}

// Final degrees of Lme's variables (the paper's bound: min of n − k, the previous bound plus
// |Lme \ i|, and the external-degree sum plus |Lme \ i|), Lme compacted to its remaining
// principal variables, and the pivot's vertices appended to the order: the variables merged
// into it or mass-eliminated with it first, in increasing index, the principal last.
//
// That placement changes nnz(L). A mass-eliminated variable's neighbours all lie in the
// pivot's element, but it need not be adjacent to all of them (its other elements were
// subsets of Lme): ordered before the pivot, its column of L holds only its own neighbours;
// ordered after, the whole clique the pivot leaves behind. SuiteSparse AMD places the
// non-principal variables of an element this way, and with it our nnz(L) equals
// SuiteSparse's exactly on the graphs tests/factor/analysis compares (principal first cost a
// few entries more on one relabelled small 3D grid in thirteen; 13 instead of 12 on the
// test's 5-vertex graph). Putting mass-eliminated variables before merged ones as well saved
// 3 entries in 2.8 million once in 36 bench-size orderings; matching the reference was worth more.
void MinimumDegree::finish_pivot_element(Index me) {
  Index element_weight = 0;
  for (Index i : pivot_element_) {
    if (weight_[i] < 0) element_weight -= weight_[i];
  }
  Offset out = start_[me];
  for (Index i : pivot_element_) {
    if (weight_[i] >= 0) continue;
    const Index weight = -weight_[i];
    weight_[i] = weight;
    const Index outside_lme = element_weight - weight;
    const Index degree = std::min(degree_[i] + outside_lme, active_ - eliminated_ - weight);
    insert_by_degree(i, degree);
    storage_[out++] = i;
  }
  length_[me] = static_cast<Index>(out - start_[me]);
  degree_[me] = element_weight;
  weight_[me] = 0;
  if (length_[me] == 0) kind_[me] = Kind::absorbed;  // a root of the assembly tree
  const auto members_begin = static_cast<std::ptrdiff_t>(order_.size());
  for (Index v = member_next_[me]; v != kNone; v = member_next_[v]) order_.push_back(v);
  std::sort(order_.begin() + members_begin, order_.end());
  order_.push_back(me);
}

void MinimumDegree::append_members(Index to, Index from) {
  member_next_[member_tail_[to]] = from;
  member_tail_[to] = member_tail_[from];
}

}  // namespace

std::vector<Index> approximate_minimum_degree(const AdjacencyGraph& graph,
                                              const MinimumDegreeOptions& options) {
  // The ordering works in a copy of the lists anyway; this one leaves the self loops out.
  AdjacencyGraph loop_free;
  loop_free.offsets.assign(graph.offsets.size(), 0);
  loop_free.neighbors.reserve(graph.neighbors.size());
  for (Index v = 0; v < graph.vertex_count(); ++v) {
    for (Index p = graph.offsets[v]; p < graph.offsets[v + 1]; ++p) {
      if (graph.neighbors[p] != v) loop_free.neighbors.push_back(graph.neighbors[p]);
    }
    loop_free.offsets[v + 1] = static_cast<Index>(loop_free.neighbors.size());
  }
  return MinimumDegree(std::move(loop_free), options).order();
}

std::vector<Index> constrained_minimum_degree(AdjacencyGraph graph, std::span<const Index> constraint_sets,
                                              const MinimumDegreeOptions& options) {
  return MinimumDegree(std::move(graph), options, constraint_sets).order();
}

std::vector<Index> minimum_degree_ordering(const linalg::SymmetricCscMatrix& pattern,
                                           Index dofs_per_node, const MinimumDegreeOptions& options) {
  // Room for the elbow reserved up front: the graph has at most 2·nnz(A lower) entries.
  const double entries_bound = 2.0 * static_cast<double>(pattern.nnz_lower());
  const auto spare = static_cast<Offset>(std::max(0.0, options.elbow_room) * entries_bound) + pattern.size();
  AdjacencyGraph graph = adjacency_graph(pattern, dofs_per_node, spare);
  return expand_node_ordering(MinimumDegree(std::move(graph), options).order(), dofs_per_node);
}

}  // namespace cholsim::factor
