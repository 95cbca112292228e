#include "linalg/parallel_loops.hpp"

#include <map>
#include <memory>

#include "linalg/blas_threads.hpp"

namespace cholsim::linalg {

int resolve_thread_count(int requested) { return requested > 0 ? requested : hardware_threads(); }

tbb::task_arena& thread_arena(int threads) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<tbb::task_arena>> arenas;  // one per count, until exit
  const int count = resolve_thread_count(threads);
  const std::lock_guard lock(mutex);
  std::unique_ptr<tbb::task_arena>& arena = arenas[count];
  if (!arena) arena = std::make_unique<tbb::task_arena>(count);
  return *arena;
}

}  // namespace cholsim::linalg
