#include <gate/cli/trusted.hpp>

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
  for (std::size_t i = 0; i < tampered.size() && i < k_named; ++i)
    message += (i == 0 ? "" : "; ") + store.path_for(tampered[i].key).string() + " (task \"" +
               tampered[i].task_id + "\" run " + std::to_string(tampered[i].run) + ")";
  if (tampered.size() > k_named) message += "; … and " + std::to_string(tampered.size() - k_named) + " more";
  throw Error(Exit::bad_input, message + ". An answer edited on the branch is not evidence: restore these "
                                         "entries from the base branch, or record them again in CI");
}

std::string recorded_outside_ci(const std::vector<run::Miss>& untrusted, const cache::Store& trusted,
                                std::string_view of_what) {
  return std::to_string(untrusted.size()) + " replayed answer" + (untrusted.size() == 1 ? "" : "s") +
         std::string(of_what) + (untrusted.size() == 1 ? " was" : " were") +
         " recorded outside CI (not in the trusted cache " + trusted.root().string() +
         ", so the branch supplied them): " + runs_by_task(untrusted);
}

} // namespace gate::cli
