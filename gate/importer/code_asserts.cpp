#include <gate/importer/detail.hpp>

#include <boost/json/value.hpp>
#include <stdexcept>

#include <gate/util/json.hpp>

namespace gate::importer::detail {

namespace bj = boost::json;

const CodeRunner& code_runner(CodeLanguage language) {
  static const CodeRunner k_python{k_python_runner_name, k_python_runner,
                                   "runs promptfoo's inline python assertions (script checks)"};
  switch (language) {
  case CodeLanguage::python: return k_python;
  case CodeLanguage::javascript: break;
  }
  throw std::logic_error("no runner for this language yet");
}

// Inline python that reads only `output` runs faithfully from a script
// check: the generated runner builds main(output, context) as promptfoo
// does and reads its result as promptfoo does. A grader file or code that
// reads `context` would get another context than promptfoo's.
std::optional<bj::object> map_code(CodeLanguage language, const Node& a, const AssertContext& ctx,
                                   Findings& findings, const std::string& what, bool negated,
                                   std::string& why) {
  const Node* value = a.get("value");
  if (value != nullptr && value->is_scalar() && value->text.starts_with("file://")) {
    why = "a grader file, which promptfoo calls with its context (vars, prompt, test); gate import maps "
          "inline code that reads only output";
    return std::nullopt;
  }
  if (value == nullptr || !value->is_scalar()) {
    why = "expected a text value, got " + (value == nullptr ? std::string("none") : describe(*value));
    return std::nullopt;
  }
  auto code = render_value(value->text, *ctx.vars, why);
  if (!code) return std::nullopt;
  if (code->find("context") != std::string::npos) {
    why = "the code reads context, which a gate script check cannot give as promptfoo does; gate import maps "
          "inline code that reads only output";
    return std::nullopt;
  }
  bj::array argv{"python3", k_python_runner_name};
  if (negated) argv.push_back("--inverse");
  if (const Node* t = a.get("threshold")) {
    const bj::value v = to_json(*t);
    if (!v.is_number()) {
      why = "threshold " + describe(*t) + " is not a number";
      return std::nullopt;
    }
    argv.push_back("--threshold");
    argv.push_back(bj::string(json::canonical(v)));
  }
  argv.push_back("--");
  argv.push_back(bj::string(*code));
  if (ctx.runners != nullptr) ctx.runners->insert(static_cast<int>(language));
  findings.note_at(
      a, what,
      std::string("a script check runs it with python3 from PATH through ") + k_python_runner_name +
          " (written to the suite), as promptfoo runs inline python; within gate's 10 s timeout");
  return bj::object{{"type", "script"}, {"argv", std::move(argv)}};
}

} // namespace gate::importer::detail
