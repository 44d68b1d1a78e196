#include <gate/importer/detail.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cctype>
#include <re2/re2.h>

#include <gate/util/input.hpp>
#include <gate/util/json.hpp>

namespace gate::importer::detail {

namespace bj = boost::json;
namespace fs = std::filesystem;

const CodeRunner& code_runner(CodeLanguage language) {
  static const CodeRunner k_python{k_python_runner_name, k_python_runner,
                                   "runs promptfoo's inline python assertions (script checks)"};
  static const CodeRunner k_javascript{k_javascript_runner_name, k_javascript_runner,
                                       "runs promptfoo's javascript assertions under node (script checks)"};
  switch (language) {
  case CodeLanguage::python: return k_python;
  case CodeLanguage::javascript: return k_javascript;
  }
  return k_python; // unreachable: every language is a case above
}

namespace {

std::string lower_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// Node reads a .js file as CommonJS unless the nearest package.json says
// "type": "module". The copy in suite/ names its kind in its extension, so
// it loads as it did next to the config, whatever package.json sits above
// the suite.
std::string module_extension(const fs::path& file) {
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    std::error_code ec;
    if (fs::is_regular_file(dir / "package.json", ec)) {
      try {
        const bj::value pkg = bj::parse(gate::read_file(dir / "package.json", 1 << 20));
        const bj::value* type = pkg.is_object() ? pkg.as_object().if_contains("type") : nullptr;
        return type != nullptr && type->is_string() && type->as_string() == "module" ? ".mjs" : ".cjs";
      } catch (const std::exception&) {
        return ".cjs"; // node refuses to load next to a broken package.json; so will the runner
      }
    }
    if (dir == dir.parent_path()) break;
  }
  return ".cjs";
}

// A grader file's copy in suite/promptfoo_graders/, or nullopt with `why`.
std::optional<std::string> grader_copy(const std::string& rel, const Node& from, const AssertContext& ctx,
                                       std::string& why) {
  const std::string ext = lower_extension(rel);
  if (ext == ".ts" || ext == ".cts" || ext == ".mts") {
    why = "a TypeScript grader, which promptfoo compiles with its own loader; gate's runner runs JavaScript "
          "under node";
    return std::nullopt;
  }
  if (ext != ".js" && ext != ".cjs" && ext != ".mjs") {
    why = "a file:// value that is not a JavaScript file (.js, .cjs, .mjs)";
    return std::nullopt;
  }
  if (ctx.read == nullptr || ctx.suite_files == nullptr) {
    why = "a grader file, read only when importing a config";
    return std::nullopt;
  }
  const std::string code = read_text(*ctx.read, rel, from);
  // The copy stands alone in suite/: a grader that loads files of its own
  // would load nothing there.
  static const re2::RE2 k_local(R"((?:\brequire\s*\(|\bimport\s*\(|\bfrom)\s*['"]\.\.?/)");
  if (re2::RE2::PartialMatch(code, k_local)) {
    why = "the grader loads files of its own (a relative require or import), which gate import does not copy";
    return std::nullopt;
  }
  const std::string kind = ext == ".js" ? module_extension(fs::absolute(ctx.read->base / rel)) : ext;
  const std::string stem = fs::path(rel).stem().string();
  for (int n = 1;; ++n) {
    const std::string name =
        std::string("promptfoo_graders/") + stem + (n == 1 ? "" : "-" + std::to_string(n)) + kind;
    auto [it, fresh] = ctx.suite_files->emplace(name, code);
    if (fresh || it->second == code) return name;
  }
}

void add_threshold(const Node& a, bj::array& argv, bool& ok, std::string& why) {
  const Node* t = a.get("threshold");
  if (t == nullptr) return;
  const bj::value v = to_json(*t);
  if (!v.is_number()) {
    why = "threshold " + describe(*t) + " is not a number";
    ok = false;
    return;
  }
  argv.push_back("--threshold");
  argv.push_back(bj::string(json::canonical(v)));
}

} // namespace

// Inline python that reads only `output` runs faithfully from a script
// check: the generated runner builds main(output, context) as promptfoo
// does and reads its result as promptfoo does. A grader file or code that
// reads `context` would get another context than promptfoo's.
// JavaScript, inline or from a file, gets context.vars (the test's vars as
// promptfoo holds them) and, for a one-text prompt, context.prompt; the
// runner reports any other context field it is asked for as an error.
std::optional<bj::object> map_code(CodeLanguage language, const Node& a, const AssertContext& ctx,
                                   Findings& findings, const std::string& what, bool negated,
                                   std::string& why) {
  const bool js = language == CodeLanguage::javascript;
  const Node* value = a.get("value");
  if (value == nullptr || !value->is_scalar()) {
    why = "expected a text value, got " + (value == nullptr ? std::string("none") : describe(*value));
    return std::nullopt;
  }
  const bool file = value->text.starts_with("file://");
  if (file && !js) {
    why = "a grader file, which promptfoo calls with its context (vars, prompt, test); gate import maps "
          "inline code that reads only output";
    return std::nullopt;
  }
  const CodeRunner& runner = code_runner(language);
  bj::array argv{js ? "node" : "python3", runner.name};
  if (negated) argv.push_back("--inverse");
  bool ok = true;
  add_threshold(a, argv, ok, why);
  if (!ok) return std::nullopt;
  if (js) {
    if (ctx.js_vars != nullptr && !ctx.js_vars->empty()) {
      argv.push_back("--vars");
      argv.push_back(bj::string(json::canonical(*ctx.js_vars)));
    }
    if (const Node* config = a.get("config")) {
      argv.push_back("--config");
      argv.push_back(bj::string(json::canonical(to_json(*config))));
    }
    if (ctx.text_prompt) argv.push_back("--prompt-from-case");
  }
  if (file) {
    // promptfoo's file://PATH:FUNCTION, the path relative to the config.
    const std::string spec = value->text.substr(7);
    const std::size_t colon = spec.find(':');
    const std::string rel = spec.substr(0, colon);
    auto copy = grader_copy(rel, *value, ctx, why);
    if (!copy) return std::nullopt;
    argv.push_back("--file");
    argv.push_back(bj::string(*copy));
    if (colon != std::string::npos) {
      argv.push_back("--function");
      argv.push_back(bj::string(spec.substr(colon + 1)));
    }
  } else {
    auto code = render_value(value->text, *ctx.vars, why);
    if (!code) return std::nullopt;
    if (!js && code->find("context") != std::string::npos) {
      why = "the code reads context, which a gate script check cannot give as promptfoo does; gate import "
            "maps inline code that reads only output";
      return std::nullopt;
    }
    argv.push_back("--");
    argv.push_back(bj::string(*code));
  }
  if (ctx.runners != nullptr) ctx.runners->insert(static_cast<int>(language));
  findings.note_at(a, what,
                   js ? std::string("a script check runs it with node from PATH through ") + runner.name +
                            " (written to the suite), as promptfoo runs javascript; its context has vars" +
                            (ctx.text_prompt ? " and prompt" : "") +
                            " (another field makes the check errored); within gate's 10 s timeout"
                      : std::string("a script check runs it with python3 from PATH through ") + runner.name +
                            " (written to the suite), as promptfoo runs inline python; within gate's 10 s "
                            "timeout");
  return bj::object{{"type", "script"}, {"argv", std::move(argv)}};
}

} // namespace gate::importer::detail
