#include <gate/cli/trusted.hpp>

#include <map>
#include <set>

#include <gate/util/error.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

// "task "a" runs 0, 2; task "b" run 1": the runs of `list` (sorted) by task.
std::string runs_by_task(const std::vector<run::Miss>& list) {
  std::string out;
  for (std::size_t i = 0; i < list.size();) {
    std::size_t j = i;
    std::string runs;
    for (; j < list.size() && list[j].task_id == list[i].task_id; ++j)
      if (j == i || list[j].run != list[j - 1].run)
        runs += (runs.empty() ? "" : ", ") + std::to_string(list[j].run);
    out += (out.empty() ? "" : "; ") + std::string("task \"") + list[i].task_id + "\" run" +
           (runs.find(',') == std::string::npos ? " " : "s ") + runs;
    i = j;
  }
  return out;
}

} // namespace

std::optional<cache::Store> open_trusted(const std::optional<fs::path>& dir) {
  if (!dir) return std::nullopt;
  if (!fs::is_directory(*dir))
    throw Error(Exit::bad_input, "--trusted-cache: expected a cache directory, " + dir->string() + " is " +
                                     (fs::exists(*dir) ? "not a directory" : "missing"));
  return std::optional<cache::Store>(std::in_place, *dir);
}

void refuse_tampered(const std::vector<run::Miss>& tampered, const cache::Store& store,
                     const cache::Store& trusted) {
  constexpr std::size_t k_named = 10;
  std::string message = std::to_string(tampered.size()) + " replayed cache entr" +
                        (tampered.size() == 1 ? "y differs" : "ies differ") + " from the trusted cache " +
                        trusted.root().string() + ": ";
  bool from_branch = false;
  std::set<std::string> remotes;
  for (std::size_t i = 0; i < tampered.size(); ++i) {
    const run::Miss& m = tampered[i];
    if (m.remote.empty())
      from_branch = true;
    else
      remotes.insert(m.remote);
    if (i >= k_named) continue;
    message += (i == 0 ? "" : "; ") + store.path_for(m.key).string() + " (task \"" + m.task_id + "\" run " +
               std::to_string(m.run) +
               (m.remote.empty() ? ")"
                                 : ", served by the remote cache " + m.remote + ", removed from " +
                                       store.root().string() + ")");
  }
  if (tampered.size() > k_named) message += "; … and " + std::to_string(tampered.size() - k_named) + " more";
  // Who can fix it differs: the branch's author for a committed entry, the
  // shared cache's owner for one whose token let someone write it there.
  if (from_branch)
    message +=
        ". An answer edited on the branch is not evidence: restore these entries from the base branch, "
        "or record them again in CI";
  for (const auto& where : remotes)
    message +=
        ". The shared cache " + where +
        " serves answers that differ from the base branch's: whoever holds its token (cache.remote_auth_env) "
        "can write it; delete those entries there and record them again in CI";
  throw Error(Exit::bad_input, message);
}

std::string recorded_outside_ci(const std::vector<run::Miss>& untrusted, const cache::Store& trusted,
                                std::string_view of_what) {
  // Who supplied each answer: the branch (its committed cache) or a shared cache.
  std::map<std::string, std::vector<run::Miss>> by_source;
  for (const auto& m : untrusted)
    by_source[m.remote].push_back(m);
  std::string sources;
  for (const auto& [remote, list] : by_source)
    sources +=
        (sources.empty() ? "" : "; ") +
        (remote.empty() ? std::string("the branch supplied ") : "the remote cache " + remote + " supplied ") +
        runs_by_task(list);
  return std::to_string(untrusted.size()) + " replayed answer" + (untrusted.size() == 1 ? "" : "s") +
         std::string(of_what) + (untrusted.size() == 1 ? " was" : " were") +
         " recorded outside CI (not in the trusted cache " + trusted.root().string() + "): " + sources;
}

} // namespace gate::cli
