#include <doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <gate/check/check.hpp>
#include <gate/config/config.hpp>
#include <gate/init/init.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;
using gate::Error;
using gate::testing::TempDir;
namespace init = gate::init;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string file_text(const std::vector<init::File>& files, const fs::path& path) {
  for (const auto& f : files)
    if (f.path == path) return f.text;
  FAIL("no file " << path);
  return "";
}

// The error's message, or "" when `f` does not throw gate::Error(bad_input).
template <class F> std::string bad_input(F f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  FAIL("no error");
  return "";
}

} // namespace

TEST_CASE("the written starting point loads: config, pinned suite, check types from the table") {
  TempDir tmp;
  init::write_files(tmp.path(), init::starter_files({}));
  const gate::config::Config cfg = gate::config::load(tmp.path() / "gate.yaml");
  CHECK(cfg.model.provider == "openai");
  CHECK(cfg.model.name == "gpt-4o-mini");
  CHECK(cfg.model.api_key_env == "OPENAI_API_KEY");
  CHECK(cfg.model.seed == 7);
  CHECK(cfg.prompt.system_file.lexically_normal() == tmp.path() / "prompts" / "support.md");
  CHECK(cfg.baseline.lexically_normal() == tmp.path() / "baselines" / "support.json");

  const gate::suite::Suite s = gate::suite::load(cfg.suite, cfg.suite_version);
  CHECK(s.version == "v1");
  REQUIRE(s.cases.size() == 6);
  std::set<std::string> types;
  for (const auto& c : s.cases) {
    CHECK_MESSAGE(c.vars.contains("customer"), c.id); // the prompt's one variable
    for (const auto& check : c.checks) {
      CHECK_FALSE(gate::check::is_agent_type(check.type));
      types.insert(gate::check::type_name(check.type));
    }
  }
  CHECK(types.size() >= 8);
  CHECK(gate::suite::verify(cfg.suite).size() == 1);
}

TEST_CASE("provider and model: anthropic's key variable and no seed; odd names stay one YAML value") {
  TempDir tmp;
  init::Options o;
  o.provider = "anthropic";
  o.model = "my model: #1 \"x\"\nbase_url: https://evil.example";
  o.base_url = "http://127.0.0.1:8080/v1";
  const auto files = init::starter_files(o);
  init::write_files(tmp.path(), files);
  const gate::config::Config cfg = gate::config::load(tmp.path() / "gate.yaml");
  CHECK(cfg.model.provider == "anthropic");
  CHECK(cfg.model.name == *o.model);
  CHECK(cfg.model.base_url == "http://127.0.0.1:8080/v1");
  CHECK(cfg.model.api_key_env == "ANTHROPIC_API_KEY");
  CHECK_FALSE(cfg.model.seed.has_value());
  CHECK(file_text(files, ".github/workflows/gate.yml")
            .find("ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}") != std::string::npos);
}

TEST_CASE("provider gemini and azure: their key variables, gemini's default model, azure's own endpoint") {
  TempDir tmp;
  init::Options o;
  o.provider = "gemini";
  std::filesystem::create_directories(tmp.path() / "g");
  std::filesystem::create_directories(tmp.path() / "a");
  init::write_files(tmp.path() / "g", init::starter_files(o));
  gate::config::Config cfg = gate::config::load(tmp.path() / "g" / "gate.yaml");
  CHECK(cfg.model.name == "gemini-2.5-flash");
  CHECK(cfg.model.base_url == "https://generativelanguage.googleapis.com/v1beta/openai");
  CHECK(cfg.model.api_key_env == "GEMINI_API_KEY");
  o.provider = "azure";
  o.model = "gpt4o-prod";
  o.base_url = "https://r.openai.azure.com/openai/v1";
  init::write_files(tmp.path() / "a", init::starter_files(o));
  cfg = gate::config::load(tmp.path() / "a" / "gate.yaml");
  CHECK(cfg.model.provider == "azure");
  CHECK(cfg.model.api_key_env == "AZURE_OPENAI_API_KEY");
  CHECK_FALSE(cfg.model.seed.has_value());
}

TEST_CASE("a model named like a YAML null or boolean stays a string") {
  for (const char* name : {"null", "true", "~", "123"}) {
    TempDir tmp;
    init::Options o;
    o.model = name;
    init::write_files(tmp.path(), init::starter_files(o));
    CHECK(gate::config::load(tmp.path() / "gate.yaml").model.name == name);
  }
}

TEST_CASE("bad options are bad input naming what was expected") {
  init::Options o;
  o.provider = "bedrock";
  CHECK(bad_input([&] { init::starter_files(o); }) ==
        "gate init: unknown provider \"bedrock\"; expected one of openai, anthropic, azure, gemini");
  // Azure's endpoint and deployment are the user's own: no default for either.
  o.provider = "azure";
  o.model = "gpt4o-prod";
  CHECK(bad_input([&] { init::starter_files(o); }) ==
        "gate init: provider azure needs --base-url (your resource's endpoint, e.g. "
        "https://NAME.openai.azure.com/openai/v1) and --model (your deployment's name)");
  o = {};
  o.model = "";
  CHECK(bad_input([&] { init::starter_files(o); }).find("--model must be a non-empty") != std::string::npos);
  o = {};
  o.base_url = "api.openai.com";
  CHECK(bad_input([&] { init::starter_files(o); }).find("--base-url must start with http") !=
        std::string::npos);
}

TEST_CASE("write_files writes nothing when any target is in the way, and names each") {
  const auto files = init::starter_files({});
  SUBCASE("a file") {
    TempDir tmp;
    fs::create_directories(tmp.path() / ".github" / "workflows");
    std::ofstream(tmp.path() / ".github" / "workflows" / "gate.yml") << "mine\n";
    std::ofstream(tmp.path() / "gate.yaml") << "mine\n";
    const std::string e = bad_input([&] { init::write_files(tmp.path(), files); });
    CHECK(e.find("gate.yaml exists") != std::string::npos);
    CHECK(e.find(".github/workflows/gate.yml exists") != std::string::npos);
    CHECK(e.find("prompts") == std::string::npos);
    CHECK_FALSE(fs::exists(tmp.path() / "prompts"));
    CHECK(slurp(tmp.path() / "gate.yaml") == "mine\n");
  }
  SUBCASE("a dangling symlink") {
    TempDir tmp;
    fs::create_directories(tmp.path() / "prompts");
    fs::create_symlink(tmp.path() / "nowhere", tmp.path() / "prompts" / "support.md");
    CHECK(bad_input([&] { init::write_files(tmp.path(), files); }).find("prompts/support.md exists") !=
          std::string::npos);
    CHECK_FALSE(fs::exists(tmp.path() / "gate.yaml"));
  }
  SUBCASE("a file where a directory must be") {
    TempDir tmp;
    std::ofstream(tmp.path() / "evals") << "not a directory\n";
    const std::string e = bad_input([&] { init::write_files(tmp.path(), files); });
    CHECK(e.find("evals exists and is not a directory") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp.path() / "gate.yaml"));
  }
  SUBCASE("a name the file system cannot hold") {
    TempDir tmp;
    const std::string e = bad_input([&] {
      init::write_files(tmp.path(), {{std::string(300, 'x'), "", ""}});
    });
    CHECK(e.find(" cannot be looked at: ") != std::string::npos);
  }
  SUBCASE("no directory") {
    TempDir tmp;
    CHECK(bad_input([&] { init::write_files(tmp.path() / "missing", files); }).find("is not a directory") !=
          std::string::npos);
  }
}

TEST_CASE("a write that fails half-way takes the files already written with it") {
  TempDir tmp;
  // The first file is where the second needs a directory: nothing is in
  // the way when they are checked, and the second fails as a full disk
  // would fail it, whoever runs the test.
  const std::vector<init::File> files = {{"first", "1\n", ""}, {"first/second", "2\n", ""}};
  try {
    init::write_files(tmp.path(), files);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == gate::Exit::cannot_run);
  }
  CHECK_FALSE(fs::exists(tmp.path() / "first"));
  CHECK(fs::is_empty(tmp.path()));
}

TEST_CASE("the workflow is examples/workflows/pr-gate.yml, with the cache where gate.yaml keeps it") {
  // This file is tests/unit/; the examples are two levels up.
  const fs::path example =
      fs::path(__FILE__).parent_path().parent_path().parent_path() / "examples" / "workflows" / "pr-gate.yml";
  auto body = [](std::string text) { return text.substr(text.find("\nname: gate\n")); };
  std::string written = file_text(init::starter_files({}), ".github/workflows/gate.yml");
  for (std::size_t at; (at = written.find("path: evals/cache")) != std::string::npos;)
    written.replace(at, 17, "path: .gate/cache");
  CHECK_MESSAGE(body(written) == body(slurp(example)),
                "gate/init/templates.cpp's workflow and examples/workflows/pr-gate.yml differ: change both");
}

TEST_CASE("next commands: a cd first for another directory, shell-quoted; the provider's key variable") {
  const auto here = init::next_commands(".", {});
  REQUIRE(here.size() > 2);
  CHECK(here[0].starts_with("# 1."));
  CHECK(here[1] == "export OPENAI_API_KEY='paste-your-key-here'");
  init::Options o;
  o.provider = "anthropic";
  const auto there = init::next_commands("my repo", o);
  CHECK(there[0] == "cd 'my repo'");
  CHECK(there[2] == "export ANTHROPIC_API_KEY='paste-your-key-here'");
  CHECK(init::next_commands("sub/dir", {})[0] == "cd sub/dir");
}
