#include <cstdlib>
#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/github/github.hpp>
#include <gate/net/fetch.hpp>
#include <gate/render/escape.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_short_reasons = 20;

std::string env(const char* name) { return process_env().get(name); }

// Where the full verdict is: the workflow run's page when known.
std::string artifact_hint() {
  const std::string server = env("GITHUB_SERVER_URL"), repo = env("GITHUB_REPOSITORY"),
                    run = env("GITHUB_RUN_ID");
  if (server.empty() || repo.empty() || run.empty()) return "the gate-report artifact of this workflow run";
  return "the gate-report artifact of [this workflow run](" + server + "/" + repo + "/actions/runs/" + run +
         ")";
}

// The form posted when the full verdict is too long for a comment: the
// headline and the first reasons from the verdict JSON, escaped as table
// cells are (they carry task ids and model text).
std::string short_form(const boost::json::object& verdict, const std::string& mark, const fs::path& file) {
  std::string out =
      mark + "\n### " + render::md_cell(json::get_string(verdict, "headline", file.string())) + "\n\n";
  const auto* reasons = verdict.if_contains("reasons");
  std::size_t shown = 0, total = 0;
  if (reasons != nullptr && reasons->is_array())
    for (const auto& r : reasons->as_array()) {
      if (!r.is_string()) continue;
      ++total;
      if (shown < k_short_reasons) {
        out += "- " + render::md_cell(render::truncate_utf8(r.as_string(), 500)) + "\n";
        ++shown;
      }
    }
  if (total > shown) out += "- … and " + std::to_string(total - shown) + " more\n";
  out += "\n*Truncated: the full verdict is too long for a comment; it is in " + artifact_hint() + ".*\n";
  return out;
}

} // namespace

int cmd_comment(const Args& args) {
  po::options_description desc("gate comment options");
  desc.add_options()("help,h", "show this help")("report,r", po::value<std::string>()->required(),
                                                 "the verdict JSON (gate check --json); its Markdown is read "
                                                 "from the .md file beside it unless --markdown is given")(
      "markdown", po::value<std::string>(), "the Markdown verdict to post")(
      "pr", po::value<std::int64_t>(),
      "the pull request number (default: from GITHUB_EVENT_PATH); in a workflow_run job, posted to only "
      "when that PR's head is the run's commit")(
      "id", po::value<std::string>()->default_value("verdict"),
      "which gate comment to keep updated (one per id, e.g. per suite)");
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate comment --report verdict.json [--pr N] [--id NAME]")) return 0;

  const fs::path report = vm["report"].as<std::string>();
  const boost::json::value v = json::parse_strict(read_file(report), report.string());
  const boost::json::object& verdict = json::as_object(v, report.string());
  if (json::get_string(verdict, "schema", report.string()) != "gate.verdict/1")
    throw Error(Exit::bad_input,
                report.string() + ": expected a gate.verdict/1 document (gate check --json)");
  fs::path md_file = report;
  md_file.replace_extension(".md");
  if (vm.count("markdown")) md_file = vm["markdown"].as<std::string>();
  if (!fs::exists(md_file))
    throw Error(Exit::bad_input, "no Markdown verdict at " + md_file.string() + " (pass --markdown FILE)");

  std::optional<std::int64_t> pr;
  if (vm.count("pr")) pr = vm["pr"].as<std::int64_t>();
  const github::Target target = github::target_from_env(process_env(), pr);
  const github::Send send = [](const net::FetchRequest& r) { return net::fetch(r, process_env()); };
  const std::string where = target.repo + "#" + std::to_string(target.pr);
  // In a workflow_run job (the fork commenter) the PR number comes from the
  // PR run's artifact, which the fork's code wrote: it is only believed when
  // that PR's head is the commit the triggering run was for.
  if (const std::string event = env("GITHUB_EVENT_PATH"); !event.empty()) {
    if (const auto run_sha = github::run_head_sha(read_file(event), event)) {
      const std::string head = github::pr_head_sha(target, send);
      if (head != *run_sha) {
        std::cerr << "gate: warning: not commenting on " << terminal_safe(where) << ": its head is "
                  << terminal_safe(head.substr(0, 12)) << ", but the run that made this verdict was for "
                  << terminal_safe(run_sha->substr(0, 12))
                  << " (the PR number is the artifact's, which the PR's code wrote; a newer push gets its "
                     "own run)\n";
        return 0;
      }
    }
  }
  const std::string mark = github::marker(vm["id"].as<std::string>());
  // The Markdown was redacted when gate wrote it; redact again in case the
  // token is one gate never saw then.
  const std::string body = mark + "\n" + redact(read_file(md_file));
  const std::string short_body = short_form(verdict, mark, report);

  const github::Posted p = github::upsert_comment(target, mark, body, short_body, send);
  switch (p.outcome) {
  case github::Outcome::forbidden:
    std::cerr << "gate: warning: GitHub refused the comment on " << terminal_safe(where)
              << " (403: " << terminal_safe(p.warning)
              << "); a fork PR's token is read-only, so the verdict is in the job summary only\n";
    return 0;
  case github::Outcome::updated:
    std::cout << "updated gate's comment " << p.comment_id << " on " << terminal_safe(where);
    break;
  case github::Outcome::created:
    std::cout << "commented on " << terminal_safe(where) << " (comment " << p.comment_id << ")";
    break;
  }
  std::cout << (p.truncated ? ", in the truncated form (the full verdict is over GitHub's limit)" : "")
            << "\n";
  return 0;
}

} // namespace gate::cli
