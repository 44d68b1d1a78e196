#pragma once

#include <string_view>
#include <vector>

#include <gate/config/config.hpp>
#include <gate/suite/suite.hpp>

namespace gate::run {

// Selects cases by --filter globs (any match), then --sample N (a seeded
// sample that does not depend on the suite's order), then --shard i/n.
// The result keeps the suite's order.
std::vector<const suite::Case*> select(const suite::Suite& s, const config::Config& c);

// The 1-based shard a task id belongs to among `count`: a hash of the id
// alone, so adding or removing a task never moves another.
int shard_of(std::string_view task_id, int count);

} // namespace gate::run
