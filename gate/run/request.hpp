#pragma once

#include <string>
#include <vector>

#include <gate/cache/entry.hpp>
#include <gate/config/config.hpp>
#include <gate/model/api.hpp>
#include <gate/suite/suite.hpp>

namespace gate::run {

// Everything about a case's request that is the same for all its runs: the
// call sent upstream, the canonical form the cache hashes (ignore rules
// applied) and the fingerprint that identifies "the same request" across
// reports.
struct PreparedRequest {
  model::ApiCall call;
  std::string hashed_body; // canonical body with the ignore rules applied
  std::string fingerprint;
};

PreparedRequest prepare(const suite::Case& c, const config::Config& cfg);

// The judge's call for an llm_judge check of `c` on `answer`: the model
// config with config `judge:` applied (judge_model), the fixed prompt of
// check/judge.hpp. Cached and streamed like the task's own calls.
config::ModelConfig judge_model(const config::Config& cfg);
PreparedRequest prepare_judge(const suite::Case& c, const config::Config& cfg, const std::string& rubric,
                              const std::string& answer);

// A request recorded in the cache, sent again (the baseline side of a
// confirmation, whose prompt may be gone from the working tree): the
// recorded body, streamed as `cfg` asks. The cache holds the body with
// cache.ignore applied, so the ignored parts are not sent.
PreparedRequest resend(const cache::Entry& recorded, const config::Config& cfg);

// Refuses cases whose requests differ but hash alike once cache.ignore has
// removed its parts (`/messages`, say): they would share cache entries, and
// replay would hand one task the other's answers. Identical requests may
// share. Throws Error(bad_input) naming both tasks. Agent cases are skipped.
void refuse_shared_keys(const std::vector<const suite::Case*>& cases,
                        const std::vector<PreparedRequest>& prepared);

// Removes each JSON pointer in `pointers` from `canonical_json` and returns
// the canonical result; a pointer that does not resolve is skipped.
std::string apply_ignore(const std::string& canonical_json, const std::vector<std::string>& pointers);

} // namespace gate::run
