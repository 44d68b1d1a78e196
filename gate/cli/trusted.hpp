#pragma once

// The trusted-cache rule (`--trusted-cache DIR`, docs/ci.md): every answer
// gate replays is compared with the copy the base branch trusts. One rule
// for the suite's runs and for a confirmation's fresh runs, which a branch
// could otherwise supply to turn an inconclusive verdict.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/run/runner.hpp>

namespace gate::cli {

// The trusted store named by --trusted-cache, or nullopt without one; a
// missing or non-directory path is bad input.
std::optional<cache::Store> open_trusted(const std::optional<std::filesystem::path>& dir);

// Entries the branch rewrote are not evidence: throws Error(bad_input)
// naming each entry (its path in `store`), its task and its run.
[[noreturn]] void refuse_tampered(const std::vector<run::Miss>& tampered, const cache::Store& store,
                                  const cache::Store& trusted);

// The warning for replayed answers the trusted cache does not hold, by
// task: "<n> replayed answer(s) <of what> recorded outside CI ...".
std::string recorded_outside_ci(const std::vector<run::Miss>& untrusted, const cache::Store& trusted,
                                std::string_view of_what);

} // namespace gate::cli
