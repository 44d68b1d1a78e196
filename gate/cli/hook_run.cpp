#include <gate/cli/common.hpp>
#include <gate/cli/hook.hpp>

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <gate/agent/process.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>

namespace gate::cli::hook {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_tasks_shown = 5;
constexpr std::size_t k_reasons_shown = 5;
constexpr double k_check_timeout_s = 24 * 3600; // a replay-only check; the user can interrupt it
constexpr double k_git_timeout_s = 600;

std::vector<std::string> environment() { return process_env().entries; }

agent::ProcessResult git(const fs::path& cwd, std::vector<std::string> args) {
  agent::ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.env = environment();
  spec.timeout_s = k_git_timeout_s;
  return agent::run_process(spec);
}

// Text from a file or a process that may hold anything: redacted, quoted
// and escaped as JSON, so a task id cannot forge a line of the hook's output.
std::string shown(std::string_view s) {
  std::string out;
  json::append_quoted(redact(s), out);
  return out;
}

// One commit checked out in a temporary, detached work tree, removed (and
// unregistered from the repository) when this goes out of scope.
class TempWorktree {
public:
  TempWorktree(const fs::path& top, const std::string& sha) : top_(top) {
    std::string tmpl = (fs::temp_directory_path() / "gate-hook-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw Error(Exit::cannot_run, "gate pre-push hook: cannot create a temporary directory in " +
                                        fs::temp_directory_path().string());
    dir_ = tmpl;
    path_ = dir_ / "tree";
    agent::ProcessResult r = git(top_, {"worktree", "add", "--detach", "--quiet", path_.string(), sha});
    if (!r.started || r.exit_code != 0) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      throw Error(Exit::cannot_run,
                  "gate pre-push hook: cannot check out " + sha +
                      " in a temporary work tree: " + redact(r.started ? r.err : r.start_error));
    }
  }
  TempWorktree(const TempWorktree&) = delete;
  TempWorktree& operator=(const TempWorktree&) = delete;
  ~TempWorktree() {
    git(top_, {"worktree", "remove", "--force", path_.string()});
    std::error_code ec;
    fs::remove_all(dir_, ec);
    git(top_, {"worktree", "prune"}); // in case remove failed half-way
  }
  const fs::path& path() const { return path_; }

private:
  fs::path top_, dir_, path_;
};

struct Pushed {
  std::string ref, sha;
};

// git's pre-push stdin; deleted refs (an all-zero local sha) push no commit.
std::vector<Pushed> read_pushed(std::istream& in) {
  std::vector<Pushed> out;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string local_ref, local_sha, remote_ref, remote_sha;
    if (!(fields >> local_ref >> local_sha >> remote_ref >> remote_sha)) continue;
    if (local_sha.find_first_not_of('0') == std::string::npos) continue;
    if (seen.insert(local_sha).second) out.push_back({remote_ref, local_sha});
  }
  return out;
}

// The child's verdict.json as an object; null when it wrote none (it could
// not get that far) or it does not parse: the caller then knows only the
// exit code, and says what it can from that.
std::optional<boost::json::object> verdict_object(const fs::path& verdict_json) {
  boost::system::error_code ec;
  boost::json::value v;
  try {
    v = boost::json::parse(read_file(verdict_json), ec);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.get_object());
}

// The verdict's status and, when its confirmation could not be made, the
// command that records it ("" when unknown).
struct Decision {
  std::string status, command;
};

Decision decision(const fs::path& verdict_json) {
  Decision d;
  const auto verdict = verdict_object(verdict_json);
  if (!verdict) return d;
  const auto& o = *verdict;
  if (const auto* s = o.if_contains("status"); s != nullptr && s->is_string()) d.status = s->get_string();
  if (const auto* c = o.if_contains("confirmation"); c != nullptr && c->is_object())
    if (const auto* cmd = c->get_object().if_contains("command"); cmd != nullptr && cmd->is_string())
      d.command = cmd->get_string();
  return d;
}

// The tasks of a verdict.json whose pass rate fell, regressed ones (the
// per-task test says so) first, then by the size of the fall: "id: passed
// 3/3 → 0/3 (regressed)". Empty when the file cannot be read (the headline
// still says why the gate failed).
std::vector<std::string> worse_tasks(const fs::path& verdict_json) {
  struct Row {
    bool regressed;
    double drop;
    std::string text;
  };
  std::vector<Row> rows;
  const auto verdict = verdict_object(verdict_json);
  const auto* tasks = verdict ? verdict->if_contains("tasks") : nullptr;
  if (tasks == nullptr || !tasks->is_array()) return {};
  for (const auto& t : tasks->get_array()) {
    if (!t.is_object()) continue;
    const auto& o = t.get_object();
    auto num = [&](const char* k) {
      const auto* n = o.if_contains(k);
      return n != nullptr && n->is_int64() ? n->get_int64() : std::int64_t{0};
    };
    const std::int64_t c_b = num("c_b"), n_b = num("n_b"), c_a = num("c_a"), n_a = num("n_a");
    if (n_b <= 0 || n_a <= 0) continue;
    const double drop = static_cast<double>(c_b) / static_cast<double>(n_b) -
                        static_cast<double>(c_a) / static_cast<double>(n_a);
    const auto* r = o.if_contains("regressed");
    const bool regressed = r != nullptr && r->is_bool() && r->get_bool();
    if (drop <= 0 && !regressed) continue;
    const auto* id = o.if_contains("id");
    rows.push_back({regressed, drop,
                    shown(id != nullptr && id->is_string() ? std::string_view(id->get_string()) : "?") +
                        ": passed " + std::to_string(c_b) + "/" + std::to_string(n_b) + " → " +
                        std::to_string(c_a) + "/" + std::to_string(n_a) + (regressed ? " (regressed)" : "")});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.regressed != b.regressed ? a.regressed : a.drop > b.drop;
  });
  std::vector<std::string> out;
  for (const auto& r : rows)
    out.push_back(r.text);
  return out;
}

// The check's text output without its "verdict: <file>" line (the hook
// names the files itself), the reasons cut after a few.
std::string summary(const std::string& out) {
  std::istringstream in(out);
  std::string line, text;
  std::size_t reasons = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("verdict: ") || line.starts_with("report: ")) continue;
    if (line.starts_with("  ") && ++reasons > k_reasons_shown) continue;
    text += "  " + line + "\n";
  }
  if (reasons > k_reasons_shown) text += "    … and " + std::to_string(reasons - k_reasons_shown) + " more\n";
  return text;
}

bool mentions_mode(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--mode" || a == "-m" || a.starts_with("--mode=")) return true;
  return false;
}

// Checks one pushed commit; returns true when the push may go on.
// The install-time check options other than --mode, each after a space.
std::string extra_args(const std::vector<std::string>& check_args) {
  std::string out;
  for (std::size_t i = 0; i < check_args.size(); ++i) {
    if (check_args[i] == "--mode" || check_args[i] == "-m") {
      ++i;
      continue;
    }
    if (check_args[i].starts_with("--mode=")) continue;
    out += " " + shell_word(check_args[i]);
  }
  return out;
}

bool check_commit(const Repo& repo, const fs::path& gate_binary, const fs::path& verdicts, const Pushed& p,
                  const std::string& config, const std::vector<std::string>& check_args) {
  const std::string short_sha = p.sha.substr(0, 12);
  TempWorktree tree(repo.top, p.sha); // its error names the commit itself
  std::cerr << "gate pre-push hook: checked commit " << short_sha << " (" << terminal_safe(p.ref) << ")";
  const fs::path out_dir = verdicts / short_sha;
  // The commands the hook prints run from anywhere: absolute paths.
  const fs::path config_path = fs::path(config).is_absolute() ? fs::path(config) : repo.top / config;
  std::error_code ec;
  fs::remove_all(out_dir, ec); // an earlier push's verdict of this commit is not this one's
  agent::ProcessSpec spec;
  spec.argv = {gate_binary.string(), "check", "--config", config,          "--quiet",
               "--format",           "text",  "--out",    out_dir.string()};
  if (!mentions_mode(check_args)) spec.argv.insert(spec.argv.end(), {"--mode", "replay-only"});
  spec.argv.insert(spec.argv.end(), check_args.begin(), check_args.end());
  spec.cwd = tree.path();
  spec.env = environment();
  spec.timeout_s = k_check_timeout_s;
  const agent::ProcessResult r = agent::run_process(spec);
  // Exit 0 and 1 are also an undecided verdict (on_inconclusive: warn or
  // fail): never "passed" nor "a regression" for it, and the hook says
  // what would decide it.
  const Decision d =
      r.started && (r.exit_code == 0 || r.exit_code == 1) ? decision(out_dir / "verdict.json") : Decision{};
  const bool undecided = d.status == "inconclusive";
  const std::string decide = "  decide it with your key exported: " +
                             terminal_safe(d.command.empty() ? "gate check --config " + config +
                                                                   " --mode replay" + extra_args(check_args)
                                                             : d.command) +
                             "\n";
  if (r.started && r.exit_code == 0) {
    if (!undecided) {
      std::cerr << ": passed\n";
      return true;
    }
    std::cerr << ": inconclusive, not decided (the push goes on)\n" << summary(r.out) << decide;
    return true;
  }
  std::cerr << ":\n";
  if (!r.started) {
    std::cerr << "  " << terminal_safe(r.start_error) << "\n";
  } else if (r.exit_code == 1) {
    std::cerr << summary(r.out);
    const std::vector<std::string> worse = worse_tasks(out_dir / "verdict.json");
    if (!worse.empty()) std::cerr << "  tasks that got worse (" << worse.size() << "):\n";
    for (std::size_t i = 0; i < worse.size() && i < k_tasks_shown; ++i)
      std::cerr << "    " << terminal_safe(worse[i]) << "\n";
    if (worse.size() > k_tasks_shown)
      std::cerr << "    … and " << (worse.size() - k_tasks_shown) << " more\n";
    std::cerr << "  full verdict: " << terminal_safe((out_dir / "verdict.md").string())
              << " (HTML: " << terminal_safe((out_dir / "verdict.html").string()) << ")\n";
  } else {
    std::string tail = r.err.empty() ? r.out : r.err;
    if (tail.size() > 2000) tail = "…" + tail.substr(tail.size() - 2000);
    // The child gate's own output: already terminal-safe line by line.
    std::cerr << terminal_safe(tail, Newlines::keep) << (tail.ends_with('\n') ? "" : "\n");
  }
  const std::string how = "--config " + config;
  switch (r.exit_code) {
  case 1:
    if (undecided) {
      std::cerr
          << "gate pre-push hook: push blocked: the verdict is inconclusive and on_inconclusive is fail.\n"
          << decide;
      break;
    }
    std::cerr
        << "gate pre-push hook: push blocked: the gate failed: a regression against the baseline. If "
           "the change is intended, accept it and commit the new baseline: gate baseline update --report "
        << terminal_safe(shell_word((out_dir / "report.json").string())) << " --config "
        << terminal_safe(shell_word(config_path.string())) << "\n";
    break;
  case 4:
    // gate check, not gate run: it also records the confirmation runs a
    // configured confirmation needs, which gate run never makes.
    std::cerr << "gate pre-push hook: push blocked: responses are missing from the cache (replay-only). "
                 "Record them with your key: gate check "
              << terminal_safe(how) << " --mode replay" << terminal_safe(extra_args(check_args))
              << ", then commit the cache.\n";
    break;
  default:
    std::cerr << "gate pre-push hook: push blocked: gate could not check commit " << short_sha << " (exit "
              << r.exit_code << ", above).\n";
  }
  return false;
}

} // namespace

std::optional<std::string> git_line(const char* command) {
  FILE* pipe = ::popen(command, "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr)
    out += buf.data();
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) return std::nullopt;
  return out.substr(0, out.find('\n'));
}

Repo find_repo() {
  auto top = git_line("git rev-parse --show-toplevel 2>/dev/null");
  auto hooks = git_line("git rev-parse --git-path hooks 2>/dev/null");
  if (!top || !hooks)
    throw Error(Exit::bad_input, "gate hook: not inside a git work tree (run it from your repository)");
  return {fs::path(*top), fs::absolute(*hooks).lexically_normal()};
}

int run(const std::string& config, const std::vector<std::string>& check_args) {
  const Repo repo = find_repo();
  // Verdicts go inside the git directory: they outlive the temporary work
  // tree, and are never committed by accident.
  auto gate_dir = git_line("git rev-parse --git-path gate-hook 2>/dev/null");
  const fs::path verdicts = fs::absolute(gate_dir ? *gate_dir : ".git/gate-hook").lexically_normal();
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const fs::path gate_binary =
      n > 0 ? fs::path(std::string(self, static_cast<std::size_t>(n))) : fs::path("gate");
  bool ok = true;
  for (const Pushed& p : read_pushed(std::cin))
    ok = check_commit(repo, gate_binary, verdicts, p, config, check_args) && ok;
  if (!ok) std::cerr << "To push anyway, once: git push --no-verify\n";
  return ok ? 0 : 1;
}

} // namespace gate::cli::hook
