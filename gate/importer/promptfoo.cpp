#include <gate/importer/detail.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <set>
#include <tuple>

#include <gate/config/config.hpp>
#include <gate/prompt/template.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>

namespace gate::importer {

namespace fs = std::filesystem;
namespace bj = boost::json;
using namespace detail;

namespace {

// At most this many reasons in the error when nothing can be imported; the
// report has them all.
constexpr std::size_t k_reasons_shown = 5;

// A prompt as gate.yaml's templates: a user message, perhaps a system one.
struct Prompt {
  std::string user;
  std::optional<std::string> system;
  std::set<std::string> slots;
  bool text = true; // one text, not a chat list: promptfoo's context.prompt is the user message
};

// The prompt's text after promptfoo's reading, as gate templates, or the
// reason it cannot be one.
std::optional<Prompt> as_templates(const Node& from, const std::string& text, std::string& why);

std::optional<Prompt> chat(const Node& from, const bj::value& messages, std::string& why) {
  const bj::array* a = messages.if_array();
  if (a == nullptr) {
    why = std::string("expected a list of chat messages ({role, content}), got ") +
          (messages.is_object() ? "a mapping" : "a " + std::string(bj::to_string(messages.kind())));
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> turns;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const bj::object* m = (*a)[i].if_object();
    const bj::value* role = m == nullptr ? nullptr : m->if_contains("role");
    const bj::value* content = m == nullptr ? nullptr : m->if_contains("content");
    if (content != nullptr && content->is_array()) {
      why = "a chat message whose content is a list of parts (text, images, cache_control); gate's "
            "prompt is text templates";
      return std::nullopt;
    }
    if (role == nullptr || !role->is_string() || content == nullptr || !content->is_string() ||
        m->size() != 2) {
      why = "a chat message that is not {role, content} with text content";
      return std::nullopt;
    }
    turns.emplace_back(std::string(role->as_string()), std::string(content->as_string()));
  }
  const bool shape = (turns.size() == 1 && turns[0].first == "user") ||
                     (turns.size() == 2 && turns[0].first == "system" && turns[1].first == "user");
  if (!shape) {
    why = "a conversation other than [system,] user; gate's prompt is a system and a user template";
    return std::nullopt;
  }
  Prompt p;
  auto user = as_templates(from, turns.back().second, why);
  if (!user) return std::nullopt;
  p = *user;
  p.text = false;
  if (turns.size() == 2) {
    auto system = as_templates(from, turns[0].second, why);
    if (!system) return std::nullopt;
    p.system = system->user;
    p.slots.insert(system->slots.begin(), system->slots.end());
  }
  return p;
}

bool nunjucks_tags(const std::string& text) {
  return text.find("{%") != std::string::npos || text.find("{#") != std::string::npos ||
         text.find("\\{{") != std::string::npos;
}

std::optional<Prompt> as_templates(const Node& from, const std::string& text, std::string& why) {
  if (nunjucks_tags(text)) {
    why = "nunjucks tags ({% %}, {# #}) or an escaped \\{{, which gate's {{var}} templates do not have";
    return std::nullopt;
  }
  const std::string_view trimmed = trim_space(text);
  if (trimmed.starts_with('[')) {
    // promptfoo sends a prompt that is a JSON list of messages as that chat.
    std::error_code ec;
    bj::value v = bj::parse(trimmed, ec);
    if (!ec) return chat(from, v, why);
  }
  try {
    const prompt::Template t = prompt::parse(text + "\n", from.where());
    Prompt p{text, std::nullopt, {}};
    for (const auto& s : t.slots)
      p.slots.insert(s.name);
    return p;
  } catch (const Error&) {
    why = "nunjucks beyond {{name}} (a filter, a field or an expression), which gate's templates do not have";
    return std::nullopt;
  }
}

std::string extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// promptfoo reads a prompt without file:// as a file's name when it looks
// like one (maybeFilePath: a "/", a "*", an extension); gate import does
// when such a file exists, so that `prompts: [prompts.txt]` is the file.
bool names_a_file(const fs::path& base, const std::string& spec) {
  if (spec.empty() || spec.find('\n') != std::string::npos || spec.find("{{") != std::string::npos)
    return false;
  std::error_code ec;
  return fs::is_regular_file(base / spec, ec);
}

// promptfoo's maybeFilePath (src/prompts/utils.ts) reads a one-line prompt
// as a file's name when a ':'-separated part of it ends in one of
// VALID_FILE_EXTENSIONS (src/prompts/constants.ts); such a file that does not
// exist stops promptfoo with ENOENT. (Its other signs of a path, "/", "*",
// are not followed here.)
bool looks_like_a_file(const std::string& spec) {
  if (spec.find('\n') != std::string::npos) return false;
  static const char* const k_exts[] = {".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md",
                                       ".mjs", ".mts", ".py", ".ts", ".txt",  ".yml",   ".yaml"};
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = spec.find(':', start);
    const std::string_view token =
        std::string_view(spec).substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    for (const char* ext : k_exts)
      if (token.ends_with(ext)) return true;
    if (colon == std::string::npos) return false;
    start = colon + 1;
  }
}

// One entry of `prompts`: inline text, a file (several prompts when split
// by "---" lines), a glob, or an object with raw/id.
void read_prompt(const Node& n, const ReadContext& rctx,
                 std::vector<std::pair<Node, std::optional<Prompt>>>& out, Findings& findings) {
  const fs::path& base = rctx.base;
  std::string why;
  std::string spec;
  for (const auto& [key, value] : n.is_map() ? n.entries : std::vector<Node::Entry>{})
    if (key != "raw" && key != "id" && key != "label")
      findings.unmapped_at(value, "prompt key " + quote_excerpt(key),
                           "not carried over: gate sends the prompt with gate.yaml's model settings");
  if (n.is_scalar()) {
    spec = n.text;
  } else if (n.is_map() && n.get("raw") != nullptr && n.get("raw")->is_scalar()) {
    out.emplace_back(n, as_templates(n, n.get("raw")->text, why));
    if (!out.back().second) findings.unmapped_at(n, "prompt", why);
    return;
  } else if (n.is_map() && n.get("id") != nullptr && n.get("id")->is_scalar()) {
    spec = n.get("id")->text;
  } else {
    findings.unmapped_at(n, "prompt",
                         "expected a text, a file:// name or {raw|id, label}, got " + describe(n));
    return;
  }
  if (!spec.starts_with("file://") && !names_a_file(base, spec)) {
    if (looks_like_a_file(spec))
      throw_bad_input(
          n.where() + ": prompt " + quote_excerpt(spec) +
          ": no such file; promptfoo reads a prompt ending in a file extension as a file and stops "
          "(ENOENT), so gate import does too");
    out.emplace_back(n, as_templates(n, spec, why));
    if (!out.back().second) findings.unmapped_at(n, "prompt", why);
    return;
  }
  if (spec.starts_with("file://")) spec = spec.substr(7);
  for (const std::string& rel : expand_glob(base, spec, n)) {
    const std::string ext = extension(rel);
    const std::string what = "prompt " + quote_excerpt("file://" + rel);
    if (ext == ".json" || ext == ".yaml" || ext == ".yml") {
      const std::string text = read_text(rctx, rel, n);
      if (nunjucks_tags(text)) {
        // promptfoo renders the file's text with nunjucks before it parses the chat.
        out.emplace_back(n, as_templates(n, text, why));
        findings.unmapped_at(n, what, why);
        continue;
      }
      const std::string file = report_name(base, base / rel);
      const bj::value v =
          ext == ".json" ? json::parse_strict(text, file) : to_json(read_yaml(text, file, true));
      out.emplace_back(n, chat(n, v, why));
    } else if (ext == ".md" || ext == ".j2") {
      out.emplace_back(n, as_templates(n, read_text(rctx, rel, n), why)); // the whole file, as it is
    } else if (ext == ".txt") {
      // promptfoo splits a text file into prompts at lines of "---", each
      // part trimmed, empty ones dropped.
      const std::string text = read_text(rctx, rel, n);
      std::vector<std::string> parts(1);
      for (std::size_t at = 0; at <= text.size();) {
        std::size_t nl = text.find('\n', at);
        if (nl == std::string::npos) nl = text.size();
        std::string_view line = std::string_view(text).substr(at, nl - at);
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (trim_space(line) == "---")
          parts.emplace_back();
        else
          parts.back().append(line).append("\n");
        at = nl + 1;
      }
      std::erase_if(parts, [](const std::string& p) { return trim_space(p).empty(); });
      for (std::size_t i = 0; i < parts.size(); ++i) {
        out.emplace_back(n, as_templates(n, std::string(trim_space(parts[i])), why));
        if (!out.back().second)
          findings.unmapped_at(n, parts.size() == 1 ? what : what + " part " + std::to_string(i + 1), why);
      }
      continue;
    } else {
      why = "a prompt function or template in a " +
            (ext.empty() ? std::string("file without extension") : ext + " file") +
            ", which promptfoo runs or reads with a loader of its own";
      out.emplace_back(n, std::nullopt);
    }
    if (!out.back().second) findings.unmapped_at(n, what, why);
  }
}

std::string slug(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= 48) break;
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum || (c >= 'A' && c <= 'Z'))
      out += static_cast<char>(alnum ? c : c - 'A' + 'a');
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

// How the report names a provider: its id ({id: ...}, {ID: {config}}), else its shape.
std::string provider_name(const Node& p) {
  if (p.is_scalar()) return p.text;
  if (const Node* id = p.get("id"); id != nullptr && id->is_scalar()) return id->text;
  if (p.is_map() && p.entries.size() == 1 && p.entries[0].second.is_map()) return p.entries[0].first;
  return describe(p);
}

// The top-level keys gate import reads; any other is listed.
const std::vector<std::string> k_top_keys = {"description",     "prompts", "providers",
                                             "targets",         "tests",   "defaultTest",
                                             "evaluateOptions", "$schema", "assertionTemplates"};

std::string model_block(const std::optional<Model>& m) {
  std::string y = "model:\n";
  if (!m) {
    return y + "  # No provider of the promptfoo config maps to one gate speaks (import-report.txt):\n"
               "  # set provider, base_url and name to the model under test.\n"
               "  provider: openai\n  name: REPLACE-ME\n  temperature: 0\n";
  }
  const config::Provider* p = config::find_provider(m->provider);
  y += "  # from promptfoo's " + init::yaml_scalar(m->id) + "\n";
  y += "  provider: " + m->provider + "\n";
  if (!m->base_url.empty()) y += "  base_url: " + init::yaml_scalar(m->base_url) + "\n";
  if (!m->api.empty()) y += "  api: " + m->api + "\n";
  if (!m->api_version.empty()) y += "  api_version: " + init::yaml_scalar(m->api_version) + "\n";
  y += "  api_key_env: " + init::yaml_scalar(m->api_key_env.empty() ? p->api_key_env : m->api_key_env) +
       "   # gate never writes the key anywhere\n";
  y += "  name: " + init::yaml_scalar(m->name) + "\n";
  for (const char* key : {"temperature", "top_p", "max_tokens", "seed"})
    if (auto it = m->settings.find(key); it != m->settings.end())
      y += std::string("  ") + key + ": " + it->second + "\n";
  if (!m->extra.empty()) y += "  extra: " + json::canonical(m->extra) + "\n";
  return y;
}

} // namespace

std::string finding_line(const Finding& f) {
  return terminal_safe(f.where) + ": " + terminal_safe(f.what) + ": " + terminal_safe(f.reason);
}

Import import_promptfoo(const fs::path& config_path, const std::string& suite_name,
                        const std::vector<fs::path>& allow_outside) {
  const fs::path base = config_path.parent_path().empty() ? fs::path(".") : config_path.parent_path();
  const std::string config_name = config_path.filename().string();
  const std::string ext = extension(config_name);
  if (ext == ".js" || ext == ".cjs" || ext == ".mjs" || ext == ".ts")
    throw_bad_input(config_name +
                    ": a JavaScript config, which only promptfoo can run; expected YAML or JSON "
                    "(promptfoo's own examples are promptfooconfig.yaml)");
  std::string text = gate::read_file(config_path, std::size_t{1} << 20);
  const Node root = ext == ".json" ? from_json(json::parse_strict(text, config_name), config_name, 0)
                                   : read_yaml(text, config_name, false);
  if (!root.is_map())
    throw_bad_input(config_name + ": expected a promptfoo config (a mapping), got " + describe(root));

  Findings findings;
  std::set<std::string> files_read;
  const ReadContext rctx{base, &findings, allow_outside, &files_read};
  for (const auto& [key, value] : root.entries)
    if (std::find(k_top_keys.begin(), k_top_keys.end(), key) == k_top_keys.end())
      findings.unmapped_at(value, "key " + quote_excerpt(key), "not carried over by gate import");

  // Prompts: all that gate can template are written; gate.yaml runs the first.
  std::vector<std::pair<Node, std::optional<Prompt>>> prompts;
  if (root.get("prompts") == nullptr) {
    // promptfoo's readConfig sets prompts: ["{{prompt}}"] when there is none.
    const Node p = scalar_node("{{prompt}}", config_name, 0);
    findings.note_at(p, "prompts",
                     "none in the config: promptfoo's default prompt {{prompt}}, the test's var");
    read_prompt(p, rctx, prompts, findings);
  } else if (const Node* p = root.get("prompts")) {
    if (p->is_list()) {
      for (const Node& item : p->items)
        read_prompt(item, rctx, prompts, findings);
    } else if (p->is_map()) {
      for (const auto& [spec, label] : p->entries) {
        // {"file://prompt.txt": "label"}: the key is the prompt.
        Node n = label;
        n.kind = Node::Kind::scalar, n.text = spec, n.quoted = true;
        read_prompt(n, rctx, prompts, findings);
      }
    } else {
      read_prompt(*p, rctx, prompts, findings);
    }
  }
  const Prompt* chosen_prompt = nullptr;
  std::vector<init::File> files;
  std::size_t prompt_index = 0;
  for (auto& [from, prompt] : prompts) {
    if (!prompt) continue;
    const std::string name = "prompts/prompt-" + std::to_string(++prompt_index);
    files.push_back(
        {name + ".md", prompt->user + "\n", "a promptfoo prompt as a gate template (user message)"});
    if (prompt->system) files.push_back({name + ".system.md", *prompt->system + "\n", "its system message"});
    if (chosen_prompt == nullptr)
      chosen_prompt = &*prompt;
    else
      findings.unmapped_at(from, "prompt " + std::to_string(prompt_index),
                           "written to " + name +
                               ".md but not run: gate.yaml runs one prompt (prompt-1); point "
                               "prompt.user_file at it to compare it with the baseline");
  }
  if (chosen_prompt == nullptr) {
    std::string reasons;
    for (const auto& f : findings.unmapped)
      if (f.what.starts_with("prompt")) reasons += "; " + finding_line(f);
    throw_bad_input(config_name + ": no prompt gate can use" + reasons);
  }

  // Providers: gate.yaml has one model, the first gate speaks.
  std::optional<Model> model;
  const Node* providers = root.get("providers") != nullptr ? root.get("providers") : root.get("targets");
  if (providers != nullptr) {
    std::vector<Node> list = providers->is_list() ? providers->items : std::vector<Node>{*providers};
    for (const Node& p : list) {
      std::string why;
      Findings local;
      std::optional<Model> m = map_provider(p, local, why);
      const std::string what = "provider " + quote_excerpt(m ? m->id : provider_name(p));
      if (!m) {
        findings.unmapped_at(p, what, why);
      } else if (model) {
        findings.unmapped_at(p, what,
                             "not run: gate.yaml has one model (" + model->id +
                                 "); change its model block to this one to compare");
      } else {
        model = m;
        for (auto& f : local.unmapped)
          findings.unmapped.push_back(std::move(f));
        for (auto& f : local.notes)
          findings.notes.push_back(std::move(f));
      }
    }
  }
  if (const Node* e = root.get("evaluateOptions"); e != nullptr && e->is_map())
    for (const auto& [key, value] : e->entries)
      if (key != "repeat")
        findings.unmapped_at(value, "evaluateOptions." + key, "not carried over by gate import");

  std::string runs = "3";
  if (const Node* e = root.get("evaluateOptions"); e != nullptr && e->get("repeat") != nullptr) {
    const bj::value r = to_json(*e->get("repeat"));
    if (r.is_int64() && r.as_int64() >= 1 && r.as_int64() <= 1000)
      runs = std::to_string(r.as_int64());
    else
      findings.unmapped_at(*e->get("repeat"), "evaluateOptions.repeat", "expected an integer in 1..1000");
  }

  // Tests → cases.
  Import out;
  const std::vector<Test> tests = read_tests(root, rctx);
  AssertContext actx;
  actx.anthropic = model && model->provider == "anthropic";
  if (model && (model->extra.contains("tools") || model->extra.contains("functions")))
    actx.tools = actx.anthropic ? AssertContext::Tools::anthropic : AssertContext::Tools::openai;
  actx.read = &rctx;
  actx.text_prompt = chosen_prompt->text;
  std::set<int> runners;
  actx.runners = &runners;
  std::map<std::string, std::string> suite_files;
  actx.suite_files = &suite_files;
  std::string cases;
  std::set<std::string> ids;
  std::size_t index = 0;
  for (const Test& t : tests) {
    ++index;
    ++out.tests;
    const Node* asserts = t.node.get("assert");
    if (!t.tag.empty()) {
      out.assertions += asserts->items.size(); // read, and listed with the test
      continue;
    }
    actx.vars = &t.vars;
    actx.js_vars = &t.js_vars;
    actx.rubric_prompt = t.rubric_prompt;
    bj::array checks;
    out.assertions += asserts->items.size();
    // A test threshold passes the test on a share of its assertions' weights:
    // one weighted check, when promptfoo's share can be computed exactly.
    std::optional<bj::object> scored;
    if (const Node* threshold = read_threshold(t.node.get("threshold"), findings)) {
      std::vector<const Node*> items;
      for (const Node& a : asserts->items)
        items.push_back(&a);
      std::string why;
      scored = weighted_checks(items, threshold, actx, findings, why);
      if (!scored)
        findings.unmapped_at(
            *threshold, "threshold " + describe(*threshold),
            "not kept (" + why +
                "); each assertion is a check of its own, and the case passes only when every "
                "one does");
    }
    if (scored) {
      checks.push_back(std::move(*scored));
    } else {
      for (const Node& a : asserts->items)
        if (auto c = map_assert(a, actx, findings)) checks.push_back(std::move(*c));
    }
    const Node* description = t.node.get("description");
    const std::string label = description != nullptr && description->is_scalar() ? description->text : "";
    if (checks.empty()) {
      findings.unmapped_at(t.node, "test " + (label.empty() ? std::to_string(index) : quote_excerpt(label)),
                           asserts->items.empty()
                               ? "left out of the suite: it has no assertion, and a gate case needs a check"
                               : "left out of the suite: none of its assertions maps to a gate check");
      continue;
    }
    std::string id = slug(label);
    if (id.empty()) id = "test-" + std::to_string(index);
    for (std::size_t n = 2; !ids.insert(id).second; ++n)
      id = (slug(label).empty() ? "test-" + std::to_string(index) : slug(label)) + "-" + std::to_string(n);
    bj::object vars;
    for (const auto& name : chosen_prompt->slots) {
      auto it = t.vars.find(name);
      vars[name] = it == t.vars.end() ? "" : it->second; // nunjucks renders an undefined var as ""
    }
    bj::object meta{{"promptfoo", t.node.where()}};
    if (!label.empty()) meta["description"] = label;
    if (const Node* m = t.node.get("metadata")) meta["metadata"] = to_json(*m);
    out.checks += checks.size();
    cases += json::canonical(bj::object{{"id", id},
                                        {"vars", std::move(vars)},
                                        {"checks", std::move(checks)},
                                        {"metadata", std::move(meta)}}) +
             "\n";
    ++out.cases;
  }
  if (out.cases == 0) {
    // Only the report is written (below).
    files.clear();
  } else {
    if (!model)
      findings.unmapped.push_back({config_name + ":0", "providers",
                                   "none maps to a model gate speaks; gate.yaml's model is a placeholder"});
    // What is written loads: the cases parse as gate parses them.
    (void)suite::parse_cases(cases, "the imported cases");

    const suite::Metadata meta{suite_name, "v1", {suite::VersionInfo{"v1", sha256_hex(cases), out.cases}}};
    std::string yaml = "# Written by `gate import promptfoo` from " + init::yaml_scalar(config_name) +
                       "; what it could not\n# carry over is in import-report.txt (docs/import.md).\n";
    yaml += "suite:\n  path: suite\n  version: v1\nprompt:\n";
    if (chosen_prompt->system) yaml += "  system_file: prompts/prompt-1.system.md\n";
    yaml += "  user_file: prompts/prompt-1.md\n";
    yaml += model_block(model);
    yaml += "runs: " + runs + "\ncache:\n  dir: cache   # recorded answers: commit them to replay offline\n";
    yaml += "baseline: baseline.json\noutputs:\n  dir: .gate/out\n";

    files.insert(files.begin(), {"gate.yaml", yaml, "the configuration: suite, prompt and model"});
    files.push_back(
        {"suite/metadata.json", suite::format_metadata(meta), "the suite, version v1 pinned by sha256"});
    files.push_back({"suite/versions/v1/cases.jsonl", cases, std::to_string(out.cases) + " cases"});
    for (int language : runners) {
      const CodeRunner& r = code_runner(static_cast<CodeLanguage>(language));
      files.push_back({fs::path("suite") / r.name, std::string(r.text), r.what});
    }
    for (const auto& [name, text] : suite_files)
      files.push_back({fs::path("suite") / name, text, "a javascript grader file the config names"});
  }
  // In file order: the config first, then the other files by name, each by line.
  auto order = [&](const Finding& f) {
    const std::size_t colon = f.where.rfind(':');
    const std::string file = f.where.substr(0, colon);
    return std::make_tuple(file != config_name, file, std::stoul(f.where.substr(colon + 1)));
  };
  for (auto* list : {&findings.unmapped, &findings.notes})
    std::stable_sort(list->begin(), list->end(),
                     [&](const Finding& a, const Finding& b) { return order(a) < order(b); });
  out.unmapped = std::move(findings.unmapped);
  out.notes = std::move(findings.notes);
  out.files_read.push_back(config_name);
  files_read.erase(config_name);
  out.files_read.insert(out.files_read.end(), files_read.begin(), files_read.end());
  if (out.cases == 0) {
    // The message carries the report's first reasons and how many there are.
    const std::size_t n = out.unmapped.size();
    std::string reasons =
        "; " + std::to_string(n) + (n == 1 ? " reason" : " reasons") +
        (n > k_reasons_shown ? " (the first " + std::to_string(k_reasons_shown) + " here)" : "");
    for (std::size_t i = 0; i < n && i < k_reasons_shown; ++i)
      reasons += "; " + finding_line(out.unmapped[i]);
    out.failure = config_name + ": no test with an assertion gate can check (" + std::to_string(out.tests) +
                  " tests read); nothing to import" + reasons;
  }
  out.files = std::move(files);
  out.files.push_back(
      {"import-report.txt", report_text(out, config_name), "what was not carried over, and why"});
  return out;
}

std::string report_text(const Import& im, const std::string& config_name) {
  std::string r = "gate import promptfoo " + terminal_safe(config_name) + "\n\n";
  r += std::to_string(im.tests) + " tests read, " + std::to_string(im.cases) + " cases written; " +
       std::to_string(im.assertions) + " assertions read, " + std::to_string(im.checks) +
       " checks written.\n\n";
  r += "Not carried over (" + std::to_string(im.unmapped.size()) + "):\n";
  for (const auto& f : im.unmapped)
    r += "  " + finding_line(f) + "\n";
  r += "\nCarried over with a difference (" + std::to_string(im.notes.size()) + "):\n";
  for (const auto& f : im.notes)
    r += "  " + finding_line(f) + "\n";
  r += "\nFiles read (" + std::to_string(im.files_read.size()) + "):\n";
  for (const auto& f : im.files_read)
    r += "  " + terminal_safe(f) + "\n";
  return r;
}

} // namespace gate::importer
