#include <gate/check/regex_program.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace gate::check {

namespace {

using detail::Assertion;
using detail::Op;

// What surrounds a position, as far as assertions care.
enum class Prev : std::uint8_t { start, newline, word, other };
enum class Next : std::uint8_t { end, final_newline, newline, word, other };

bool word_unit(std::uint32_t u) {
  return (u >= '0' && u <= '9') || (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || u == '_';
}
Prev prev_of(std::uint32_t u) { return u == '\n' ? Prev::newline : word_unit(u) ? Prev::word : Prev::other; }
Next next_of(std::uint32_t u) { return u == '\n' ? Next::newline : word_unit(u) ? Next::word : Next::other; }

bool holds(Assertion a, Prev p, Next n) {
  switch (a) {
  case Assertion::begin_text: return p == Prev::start;
  case Assertion::begin_line: return p == Prev::start || p == Prev::newline;
  case Assertion::end_text: return n == Next::end;
  case Assertion::end_text_or_nl: return n == Next::end || n == Next::final_newline;
  case Assertion::end_line: return n == Next::end || n == Next::final_newline || n == Next::newline;
  case Assertion::word_boundary: return (p == Prev::word) != (n == Next::word);
  case Assertion::not_word_boundary: return (p == Prev::word) == (n == Next::word);
  }
  return false;
}

constexpr std::int32_t k_unknown = -1;
constexpr std::int32_t k_matched = -2;
// The DFA cache is rebuilt from scratch beyond these, which keeps memory
// bounded while the time stays linear (each input unit costs at most one
// NFA step). A text that overflows it again and again gains nothing from
// states it never revisits: after k_max_rebuilds the search goes on as a
// plain NFA simulation, which is several times cheaper per unit than
// building a state.
constexpr std::size_t k_max_cached_states = 2048;
constexpr std::size_t k_max_cached_bytes = 8u << 20;
constexpr std::size_t k_max_rebuilds = 2;

// One search: a DFA whose states are sets of NFA instructions (those about
// to run, before empty transitions), built lazily from the NFA.
class Runner {
public:
  explicit Runner(std::shared_ptr<const detail::Program> prog)
      : keep_(std::move(prog)), prog_(*keep_), mark_(prog_.insts.size(), 0) {}

  std::size_t cached_bytes() const { return cached_bytes_; }

  bool search(std::string_view text) {
    const std::size_t first_generation = generation_;
    std::int32_t s = intern({0}, Prev::start);
    for (std::size_t i = 0; i < text.size();) {
      if (generation_ - first_generation >= k_max_rebuilds) {
        const State &st = states_[static_cast<std::size_t>(s)];
        return simulate(text, i, st.seeds, st.prev);
      }
      std::uint32_t u = 0;
      i += detail::decode_unit(text, i, u);
      std::int32_t t;
      if (u == '\n' && i == text.size()) {
        t = compute(s, u, Next::final_newline); // `$` may hold here only: not cached
      } else {
        std::int32_t *slot = cache_slot(s, u);
        t = *slot;
        if (t == k_unknown) {
          const std::size_t generation = generation_;
          t = compute(s, u, next_of(u));
          if (generation == generation_) *cache_slot(s, u) = t;
        }
      }
      if (t == k_matched) return true;
      s = t;
    }
    const State &last = states_[static_cast<std::size_t>(s)];
    return closure(last.seeds, last.prev, Next::end);
  }

private:
  struct State {
    std::vector<std::uint32_t> seeds;
    Prev prev = Prev::start;
    std::array<std::int32_t, 128> ascii;
    std::unordered_map<std::uint32_t, std::int32_t> other;
  };

  std::int32_t *cache_slot(std::int32_t s, std::uint32_t u) {
    State &st = states_[static_cast<std::size_t>(s)];
    if (u < 128) return &st.ascii[u];
    return &st.other.try_emplace(u, k_unknown).first->second;
  }

  // Follows empty transitions from `seeds` given the context; leaves the
  // consuming instructions reached in consumers_. True when match is reached.
  bool closure(const std::vector<std::uint32_t> &seeds, Prev p, Next n) {
    bump();
    consumers_.clear();
    stack_.assign(seeds.rbegin(), seeds.rend());
    bool matched = false;
    while (!stack_.empty()) {
      std::uint32_t pc = stack_.back();
      stack_.pop_back();
      if (mark_[pc] == stamp_) continue;
      mark_[pc] = stamp_;
      const detail::Inst &in = prog_.insts[pc];
      switch (in.op) {
      case Op::unit: consumers_.push_back(pc); break;
      case Op::match: matched = true; break;
      case Op::jump: stack_.push_back(in.x); break;
      case Op::split:
        stack_.push_back(in.y);
        stack_.push_back(in.x);
        break;
      case Op::assert:
        if (holds(in.assertion, p, n)) stack_.push_back(pc + 1);
        break;
      }
    }
    return matched;
  }

  // Consumes `u` from the NFA state `seeds` (followed by `n`): true when a
  // match ends before `u`, else the instructions to run after it in `next`.
  bool step(const std::vector<std::uint32_t> &seeds, Prev p, std::uint32_t u, Next n,
            std::vector<std::uint32_t> &next) {
    if (closure(seeds, p, n)) return true;
    bump();
    next.clear();
    // Search, not full match: a match may also start after this unit.
    next.push_back(0);
    mark_[0] = stamp_;
    for (std::uint32_t pc : consumers_) {
      const detail::Inst &in = prog_.insts[pc];
      if (mark_[pc + 1] != stamp_ && detail::ranges_contain(prog_.classes[in.x], u)) {
        mark_[pc + 1] = stamp_;
        next.push_back(pc + 1);
      }
    }
    return false;
  }

  std::int32_t compute(std::int32_t s, std::uint32_t u, Next n) {
    std::vector<std::uint32_t> next;
    const State &st = states_[static_cast<std::size_t>(s)];
    if (step(st.seeds, st.prev, u, n, next)) return k_matched;
    std::sort(next.begin(), next.end());
    return intern(std::move(next), prev_of(u));
  }

  bool simulate(std::string_view text, std::size_t i, std::vector<std::uint32_t> seeds, Prev prev) {
    std::vector<std::uint32_t> next;
    while (i < text.size()) {
      std::uint32_t u = 0;
      i += detail::decode_unit(text, i, u);
      Next n = (u == '\n' && i == text.size()) ? Next::final_newline : next_of(u);
      if (step(seeds, prev, u, n, next)) return true;
      seeds.swap(next);
      prev = prev_of(u);
    }
    return closure(seeds, prev, Next::end);
  }

  std::int32_t intern(std::vector<std::uint32_t> seeds, Prev p) {
    std::string key(1, static_cast<char>(p));
    key.append(reinterpret_cast<const char *>(seeds.data()), seeds.size() * sizeof(std::uint32_t));
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    if (states_.size() >= k_max_cached_states || cached_bytes_ > k_max_cached_bytes) {
      states_.clear();
      index_.clear();
      cached_bytes_ = 0;
      ++generation_;
    }
    cached_bytes_ += 2 * key.size() + sizeof(State);
    State st;
    st.seeds = std::move(seeds);
    st.prev = p;
    st.ascii.fill(k_unknown);
    states_.push_back(std::move(st));
    auto id = static_cast<std::int32_t>(states_.size() - 1);
    index_.emplace(std::move(key), id);
    return id;
  }

  void bump() {
    if (++stamp_ == 0) { // wrapped: old marks could look current
      std::fill(mark_.begin(), mark_.end(), 0);
      stamp_ = 1;
    }
  }

  std::shared_ptr<const detail::Program> keep_;
  const detail::Program &prog_;
  std::vector<std::uint32_t> mark_;
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> stack_, consumers_;
  std::vector<State> states_;
  std::unordered_map<std::string, std::int32_t> index_;
  std::size_t cached_bytes_ = 0;
  std::size_t generation_ = 0;
};

// The DFA states a thread built for its most recently used patterns. A
// suite checks the same few patterns over thousands of answers (and every
// task k times); building the states again for each answer was a fifth of
// a replayed run's time. Keyed by pattern and flags, not by Regex object,
// so equal patterns of different checks share states. Bounded: a few
// patterns per thread, and a runner that grew large is not kept.
class RunnerCache {
public:
  Runner& get(const std::string& key, const std::shared_ptr<detail::Program>& prog) {
    ++clock_;
    for (Slot& s : slots_)
      if (s.key == key) {
        s.used = clock_;
        return *s.runner;
      }
    Slot* slot = nullptr;
    if (slots_.size() < k_slots) {
      slot = &slots_.emplace_back();
    } else {
      slot = &*std::min_element(slots_.begin(), slots_.end(),
                                [](const Slot& a, const Slot& b) { return a.used < b.used; });
    }
    slot->key = key;
    slot->runner = std::make_unique<Runner>(prog);
    slot->used = clock_;
    return *slot->runner;
  }
  // Drops the runner of `key` when it grew large, or always (`all`: after a
  // search that threw, whose states may be half made).
  void trim(const std::string& key, bool all = false) {
    for (Slot& s : slots_)
      if (s.key == key && (all || s.runner->cached_bytes() > k_keep_bytes)) {
        s.key.clear();
        s.runner.reset();
        s.used = 0;
      }
  }

private:
  static constexpr std::size_t k_slots = 16;
  static constexpr std::size_t k_keep_bytes = 256u << 10;
  struct Slot {
    std::string key;
    std::unique_ptr<Runner> runner;
    std::uint64_t used = 0;
  };
  std::vector<Slot> slots_;
  std::uint64_t clock_ = 0;
};

} // namespace

bool Regex::search(std::string_view text) const {
  thread_local RunnerCache cache;
  bool found = false;
  try {
    found = cache.get(key_, prog_).search(text);
  } catch (...) {
    cache.trim(key_, true);
    throw;
  }
  cache.trim(key_);
  return found;
}

} // namespace gate::check
