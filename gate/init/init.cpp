#include <gate/init/init.hpp>

#include <algorithm>
#include <cctype>
#include <set>

#include <gate/config/config.hpp>
#include <gate/init/templates.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::init {

namespace fs = std::filesystem;

namespace {

const fs::path k_suite_dir = "evals/support";

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string provider_list() {
  std::string out;
  for (const auto& p : config::providers())
    out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

const config::Provider& provider_of(const Options& o) {
  const config::Provider* p = config::find_provider(o.provider);
  if (p == nullptr)
    throw_bad_input("gate init: unknown provider \"" + o.provider + "\"; expected one of " + provider_list());
  return *p;
}

std::size_t case_count() {
  return static_cast<std::size_t>(std::count(templates::k_cases.begin(), templates::k_cases.end(), '\n'));
}

} // namespace

std::string yaml_scalar(std::string_view s) {
  bool plain = !s.empty() && s.back() != ':' && (std::isalnum(static_cast<unsigned char>(s[0])) != 0);
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                      std::string_view("._/:@+-").find(c) != std::string_view::npos);
  // Words YAML reads as null or a boolean stay strings only when quoted.
  for (std::string_view word : {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"})
    plain = plain && s != word;
  if (plain) return std::string(s);
  std::string out;
  json::append_quoted(s, out);
  return out;
}

std::string default_model(const std::string& provider) {
  if (provider == "openai") return "gpt-4o-mini";
  if (provider == "anthropic") return "claude-haiku-4-5";
  if (provider == "gemini") return "gemini-2.5-flash";
  return ""; // azure: the deployment's name, which only its owner knows
}

std::vector<File> starter_files(const Options& o) {
  const config::Provider& p = provider_of(o);
  const std::string model = o.model.value_or(default_model(p.name));
  const std::string base_url = o.base_url.value_or(p.base_url);
  if (p.name == "azure" && (base_url.empty() || !o.model))
    throw_bad_input("gate init: provider azure needs --base-url (your resource's endpoint, e.g. "
                    "https://NAME.openai.azure.com/openai/v1) and --model (your deployment's name)");
  if (model.empty() || !valid_utf8(model)) throw_bad_input("gate init: --model must be a non-empty model id");
  if (!(base_url.starts_with("http://") || base_url.starts_with("https://")) || !valid_utf8(base_url))
    throw_bad_input("gate init: --base-url must start with http:// or https://, got \"" + base_url + "\"");
  // gate.yaml is committed: a key in the URL would be too (the URL is not
  // quoted back, it holds the secret).
  if (const std::string secret = config::credentials_in_url(base_url); !secret.empty())
    throw_bad_input(
        "gate init: --base-url carries " + secret +
        ", which would be written to gate.yaml and committed; pass the URL without it and put the "
        "key in $" +
        (p.api_key_env.empty() ? std::string("the variable model.api_key_env names") : p.api_key_env) +
        " (gate sends it as the provider's key header)");

  std::string yaml(templates::k_gate_yaml);
  replace_all(yaml, "@PROVIDER@", p.name);
  replace_all(yaml, "@BASE_URL@", yaml_scalar(base_url));
  replace_all(yaml, "@KEY_ENV@", p.api_key_env);
  replace_all(yaml, "@MODEL@", yaml_scalar(model));
  // Only OpenAI's API takes a sampling seed; gate sends none to Anthropic.
  replace_all(yaml, "@SEED@", p.name == "openai" ? "  seed: 7\n" : "");
  std::string workflow(templates::k_workflow);
  replace_all(workflow, "@KEY_ENV@", p.api_key_env);

  // The pin is computed, never written by hand: the suite loads as written.
  const std::string cases(templates::k_cases);
  const std::vector<suite::Case> parsed = suite::parse_cases(cases, "gate init's cases");
  const std::size_t count = parsed.size();
  std::set<std::string> types;
  for (const auto& c : parsed)
    for (const auto& check : c.checks)
      types.insert(check::type_name(check.type));
  const suite::Metadata meta{"support", "v1", {suite::VersionInfo{"v1", sha256_hex(cases), count}}};
  return {
      {"gate.yaml", yaml, "the configuration: suite, prompt, model (" + model + "), cache, baseline"},
      {"prompts/support.md", std::string(templates::k_prompt), "the system prompt under test, a template"},
      {k_suite_dir / "metadata.json", suite::format_metadata(meta), "the suite, version v1 pinned by sha256"},
      {k_suite_dir / "versions" / "v1" / "cases.jsonl", cases,
       std::to_string(count) + " cases, " + std::to_string(types.size()) + " check types between them"},
      {".github/workflows/gate.yml", workflow, "the pull-request gate for GitHub Actions"},
      {".gitignore", std::string(templates::k_gitignore), "keeps local reports (.gate/) out of git"},
  };
}

void write_files(const fs::path& dir, const std::vector<File>& files, const std::string& command) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw_bad_input(command + ": " + dir.string() + " is not a directory (create it first, or pass another)");
  std::vector<std::string> in_the_way;
  for (const File& f : files) {
    // symlink_status: a dangling symlink is in the way too (a rename would replace it).
    const fs::file_type type = fs::symlink_status(dir / f.path, ec).type();
    if (type != fs::file_type::not_found) {
      in_the_way.push_back(
          (dir / f.path).lexically_normal().string() +
          (type == fs::file_type::none ? " cannot be looked at: " + ec.message() : " exists"));
      continue;
    }
    for (fs::path parent = f.path.parent_path(); !parent.empty(); parent = parent.parent_path()) {
      // symlink_status: a directory symlink inside DIR would take the file
      // to wherever it points, outside DIR.
      const fs::file_type t = fs::symlink_status(dir / parent, ec).type();
      if (t == fs::file_type::symlink) {
        in_the_way.push_back((dir / parent).lexically_normal().string() +
                             " is a symlink (no file is written through one: it would land outside " +
                             dir.string() + ")");
        break;
      }
      if (t != fs::file_type::not_found && t != fs::file_type::directory) {
        in_the_way.push_back((dir / parent).lexically_normal().string() + " exists and is not a directory");
        break;
      }
    }
  }
  if (!in_the_way.empty()) {
    std::string message = command + ": nothing written, ";
    for (std::size_t i = 0; i < in_the_way.size(); ++i)
      message += (i == 0 ? "" : "; ") + in_the_way[i];
    throw_bad_input(message + " (" + command +
                    " never overwrites; move them aside or run it in another directory)");
  }
  // All or none here too: a write that fails half-way (a full disk) takes
  // the files already written with it, so a rerun finds nothing in the way.
  std::vector<fs::path> written;
  try {
    for (const File& f : files) {
      ensure_directory((dir / f.path).parent_path());
      write_file_atomically(dir / f.path, f.text);
      written.push_back(dir / f.path);
    }
  } catch (...) {
    for (const fs::path& p : written)
      fs::remove(p, ec);
    throw;
  }
}

std::vector<std::string> next_commands(const std::string& dir, const Options& o) {
  const config::Provider& p = provider_of(o);
  std::vector<std::string> out;
  if (dir != "." && dir != "./") out.push_back("cd " + shell_word(dir));
  out.insert(out.end(),
             {"# 1. Your key, in the environment only (gate never writes it to a file):",
              "export " + p.api_key_env + "='paste-your-key-here'",
              "# 2. Call the model and record its answers (" + std::to_string(case_count()) +
                  " cases x 3 runs) into evals/cache:",
              "gate run --config gate.yaml --mode replay",
              "# 3. Make that report the baseline, then gate against it (replayed, no calls):",
              "gate baseline update --report .gate/out/report.json --config gate.yaml",
              "gate check --config gate.yaml",
              "# 4. Commit the suite, prompt, cache and baseline (.gate/ holds local reports only),",
              "#    and check every push offline with the pre-push hook:",
              "git add gate.yaml prompts evals baselines .github .gitignore",
              "git commit -m 'Add a gate suite'", "gate hook install --config gate.yaml"});
  return out;
}

} // namespace gate::init
