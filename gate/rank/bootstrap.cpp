#include <gate/rank/detail.hpp>

#include <algorithm>

namespace gate::rank {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t bound) {
  // Lemire's multiply-shift: the high word of x·bound is uniform once the
  // few low words that would favour some values are rejected.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
  auto low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

namespace detail {

Resamples bootstrap(const Patterns& p, std::size_t anchor, std::int64_t count, std::uint64_t seed) {
  Resamples out;
  const std::size_t n = p.players, tasks = p.of_task.size();
  out.elo.reserve(static_cast<std::size_t>(count) * n);
  if (tasks == 0) return out;
  SplitMix64 rng{seed};
  std::vector<std::int64_t> weight(p.size());
  for (std::int64_t b = 0; b < count; ++b) {
    std::fill(weight.begin(), weight.end(), 0);
    for (std::size_t t = 0; t < tasks; ++t)
      ++weight[p.of_task[rng.below(tasks)]];
    Fit f = fit_pooled(pooled(p, weight), true);
    if (f.prior) ++out.prior;
    out.converged = out.converged && f.converged;
    for (std::size_t i = 0; i < n; ++i)
      out.elo.push_back(elo(f.strength[i], f.strength[anchor]));
  }
  return out;
}

} // namespace detail

} // namespace gate::rank
