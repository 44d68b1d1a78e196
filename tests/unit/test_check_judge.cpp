#include <doctest.h>

#include <boost/json.hpp>

#include <gate/check/check.hpp>
#include <gate/check/judge.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

using gate::check::judge_prompt;
using gate::check::parse_verdict;

TEST_CASE("llm_judge parses with a rubric and nothing else") {
  auto c = gate::check::parse(boost::json::parse(R"({"type":"llm_judge","rubric":"polite and correct"})"),
                              std::nullopt, "cases.jsonl:3");
  CHECK(c.type == gate::check::Type::llm_judge);
  CHECK(c.label == "llm_judge");
  REQUIRE(c.values.size() == 1);
  CHECK(c.values[0] == "polite and correct");
  auto named = gate::check::parse(boost::json::parse(R"({"type":"llm_judge","name":"tone","rubric":"calm"})"),
                                  std::nullopt, "cases.jsonl:4");
  CHECK(named.label == "llm_judge:tone");
  for (const char* bad :
       {R"({"type":"llm_judge"})", R"({"type":"llm_judge","rubric":""})",
        R"({"type":"llm_judge","rubric":"x","model":"y"})", R"({"type":"llm_judge","rubric":3})"}) {
    CAPTURE(bad);
    try {
      gate::check::parse(boost::json::parse(bad), std::nullopt, "cases.jsonl:9");
      FAIL("accepted");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::bad_input);
      CHECK(std::string(e.what()).rfind("cases.jsonl:9: ", 0) == 0);
    }
  }
  // Evaluated alone (without the runner's judge call) it is errored, never a pass.
  auto r = gate::check::evaluate(c, "anything");
  CHECK(r.errored);
  CHECK_FALSE(r.passed);
}

TEST_CASE("the judge prompt holds the rubric, the conversation and the answer, and asks for the JSON shape") {
  auto p = judge_prompt("Mentions the 30-day window.",
                        {{"system", "Be brief."}, {"user", "How long to return?"}}, "You have 30 days.");
  CHECK(p.system.find(R"({"verdict": "pass" or "fail", "reason": "one short sentence"})") !=
        std::string::npos);
  CHECK(p.user.find("Rubric:\nMentions the 30-day window.") == 0);
  CHECK(p.user.find("[system]\nBe brief.\n[user]\nHow long to return?\n") != std::string::npos);
  CHECK(p.user.find("The assistant's answer:\nYou have 30 days.\n") != std::string::npos);
}

TEST_CASE("verdicts: plain, fenced, any case; everything else says why") {
  std::string why;
  auto v = parse_verdict(R"({"verdict":"pass","reason":"mentions 30 days"})", why);
  REQUIRE(v.has_value());
  CHECK(v->pass);
  CHECK(v->reason == "mentions 30 days");
  v = parse_verdict("Here you go:\n```json\n{\"verdict\": \"FAIL\", \"reason\": \"says 60 days\"}\n```", why);
  REQUIRE(v.has_value());
  CHECK_FALSE(v->pass);
  CHECK(v->reason == "says 60 days");
  struct Bad {
    const char* reply;
    const char* why;
  };
  for (const Bad& b :
       {Bad{"pass", "the judge's reply holds no JSON object"},
        Bad{"{verdict: pass}", "the judge's reply is not valid JSON"},
        Bad{R"({"reason":"x"})", "the judge's JSON has no \"verdict\" string"},
        Bad{R"({"verdict":"maybe","reason":"x"})", "the judge's verdict is neither \"pass\" nor \"fail\""},
        Bad{R"({"verdict":"pass"})", "the judge's JSON has no \"reason\" string"},
        Bad{R"(} {"verdict":"pass","reason":"x")", "the judge's reply holds no JSON object"}}) {
    CAPTURE(b.reply);
    why.clear();
    CHECK_FALSE(parse_verdict(b.reply, why).has_value());
    CHECK(why == b.why);
  }
}

TEST_CASE("a long reason is cut at 500 bytes on a character boundary, and redacted") {
  // Registered for the rest of the process, and its last 8 characters are
  // redacted too: a tail that no other test's text contains.
  const std::string secret = "sk-judge-canary-zqxjvkwp";
  gate::register_secret(secret);
  // 499 ASCII bytes, then a 2-byte "é": the cut falls inside it, so 499 remain.
  std::string reason = std::string(499, 'a') + "\xc3\xa9" + "tail";
  std::string why;
  auto v = parse_verdict(R"({"verdict":"fail","reason":")" + reason + R"("})", why);
  REQUIRE(v.has_value());
  CHECK(v->reason.size() == 499);
  v = parse_verdict(R"({"verdict":"fail","reason":"the key is )" + secret + R"("})", why);
  REQUIRE(v.has_value());
  CHECK(v->reason.find(secret) == std::string::npos);
}
