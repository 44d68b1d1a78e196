#include <gate/check/judge.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cctype>

#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::check {

JudgePrompt judge_prompt(std::string_view rubric,
                         const std::vector<std::pair<std::string, std::string>>& conversation,
                         std::string_view answer) {
  JudgePrompt p;
  p.system =
      "You grade an AI assistant's answer against a rubric. Judge only what the rubric asks. Reply with "
      "nothing but one JSON object of this exact shape: {\"verdict\": \"pass\" or \"fail\", \"reason\": "
      "\"one short sentence\"}.";
  p.user = "Rubric:\n";
  p.user += rubric;
  p.user += "\n\nConversation the assistant was given:\n";
  for (const auto& [role, content] : conversation) {
    p.user += "[" + role + "]\n";
    p.user += content;
    p.user += "\n";
  }
  p.user += "\nThe assistant's answer:\n";
  p.user += answer;
  p.user += "\n\nDoes the answer pass the rubric? Reply with the JSON object only.";
  return p;
}

std::optional<Verdict> parse_verdict(std::string_view reply, std::string& why) {
  // The outermost braces: a judge that adds prose or a code fence around
  // the object still gave the verdict.
  auto open = reply.find('{');
  auto close = reply.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    why = "the judge's reply holds no JSON object";
    return std::nullopt;
  }
  boost::system::error_code ec;
  auto v = boost::json::parse(reply.substr(open, close - open + 1), ec);
  if (ec || !v.is_object()) {
    why = "the judge's reply is not valid JSON";
    return std::nullopt;
  }
  const auto& o = v.get_object();
  const auto* verdict = o.if_contains("verdict");
  const auto* reason = o.if_contains("reason");
  if (verdict == nullptr || !verdict->is_string()) {
    why = "the judge's JSON has no \"verdict\" string";
    return std::nullopt;
  }
  std::string word(verdict->get_string());
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (word != "pass" && word != "fail") {
    why = "the judge's verdict is neither \"pass\" nor \"fail\"";
    return std::nullopt;
  }
  if (reason == nullptr || !reason->is_string()) {
    why = "the judge's JSON has no \"reason\" string";
    return std::nullopt;
  }
  Verdict out;
  out.pass = word == "pass";
  std::string r = redact(std::string(reason->get_string()));
  out.reason = std::string(utf8_prefix(r, k_reason_limit));
  return out;
}

} // namespace gate::check
