// Groups, negation, similar and refusal on hand-made answers.
#include <doctest.h>

#include <boost/json/parse.hpp>
#include <string>

#include <gate/check/check.hpp>
#include <gate/util/error.hpp>

using gate::check::Check;
using gate::check::evaluate;
using gate::check::Result;
using gate::check::similarity;
using gate::check::Similarity;

namespace {

Check mk(std::string_view spec, std::optional<std::string> expected = std::nullopt) {
  return gate::check::parse(boost::json::parse(spec), expected, "cases.jsonl:4");
}

Result on(std::string_view spec, std::string_view answer) {
  gate::check::Reply r;
  r.text = answer;
  return evaluate(mk(spec), r);
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("not inverts a text check and names it") {
  const char* spec = R"({"not": {"type": "contains", "value": "as an AI"}})";
  CHECK(mk(spec).label == "not(contains)");
  CHECK(on(spec, "Sure, here it is.").passed);
  const Result r = on(spec, "as an AI, I think");
  CHECK_FALSE(r.passed);
  CHECK_FALSE(r.errored);
  CHECK(r.detail == "expected contains to fail; it passed");
  CHECK(mk(R"({"not": {"type": "refusal"}, "name": "must refuse"})").label == "not:must refuse");
}

TEST_CASE("any_of and all_of: labels and details name the inner checks") {
  const char* any = R"({"type": "any_of", "checks": [{"type": "contains", "value": "refund"},
                        {"type": "contains", "value": "money back", "name": "mb"}]})";
  CHECK(mk(any).label == "any_of(contains, contains:mb)");
  CHECK(on(any, "you get your money back").passed);
  Result r = on(any, "no");
  CHECK_FALSE(r.passed);
  CHECK(r.detail ==
        "expected one of the checks to pass; contains: expected to contain \"refund\"; the answer "
        "is \"no\"; contains:mb: expected to contain \"money back\"; the answer is \"no\"");

  const char* all =
      R"({"type": "all_of", "name": "polite", "checks": [{"type": "starts_with", "value": "Yes"},
                        {"type": "length", "max": 5}]})";
  CHECK(mk(all).label == "all_of:polite");
  CHECK(on(all, "Yes.").passed);
  r = on(all, "Yes, certainly");
  CHECK_FALSE(r.passed);
  CHECK(r.detail == "1 of 2 checks failed: length: expected at most 5 chars; the answer has 14");
}

TEST_CASE("an errored inner check makes the group and the negation errored, not failed") {
  // finish_reason on a reply that has none is errored; any_of does not let
  // the passing sibling hide it.
  const char* any = R"({"type": "any_of", "checks": [{"type": "contains", "value": "a"},
                        {"type": "finish_reason", "equals": "stop"}]})";
  Result r = on(any, "a");
  CHECK(r.errored);
  CHECK_FALSE(r.passed);
  CHECK(r.detail == "finish_reason: the reply has no finish reason");
  r = on(R"({"not": {"type": "finish_reason", "equals": "stop"}})", "a");
  CHECK(r.errored);
  CHECK_FALSE(r.passed);
  // On text alone (an agent's stdout) a reply check inside is errored too.
  r = evaluate(mk(R"({"type": "all_of", "checks": [{"type": "no_tool_call"}]})"), "out", "stdout");
  CHECK(r.errored);
}

TEST_CASE("groups refuse agent checks, the judge and malformed members") {
  CHECK_THROWS_WITH_AS(mk(R"({"type": "any_of", "checks": [{"type": "exit_code"}]})"),
                       doctest::Contains("inner checks must be text or reply checks, got \"exit_code\""),
                       gate::Error);
  CHECK_THROWS_AS(mk(R"({"not": {"type": "llm_judge", "rubric": "x"}})"), gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "all_of", "checks": []})"), doctest::Contains("non-empty array"),
                       gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "not", "not": {"type": "refusal"}})"),
                       doctest::Contains("is written {\"not\": {<check>}}"), gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"not": {"type": "refusal"}, "value": 1})"), doctest::Contains("unknown field"),
                       gate::Error);
  // Nested groups take the case's expected answer down to their members.
  CHECK(mk(R"({"type": "any_of", "checks": [{"not": {"type": "equals"}}]})", "Paris")
            .children[0]
            .children[0]
            .values[0] == "Paris");
}

TEST_CASE("weighted: the share of passing weight against a threshold, as promptfoo scores a test") {
  // contains a (passes, weight 2) and contains z (fails, weight 1): 2 / 3.
  const std::string pair =
      R"("checks": [{"type": "contains", "value": "a"}, {"type": "contains", "value": "z"}],
                               "weights": [2, 1])";
  CHECK(mk(R"({"type": "weighted", )" + pair + "}").label == "weighted(contains, contains)");
  CHECK(on(R"({"type": "weighted", "threshold": 0.6, )" + pair + "}", "abc").passed);
  CHECK(on(R"({"type": "weighted", "threshold": 0.6666666666666666, )" + pair + "}", "abc").passed);
  Result r = on(R"({"type": "weighted", "threshold": 0.7, )" + pair + "}", "abc");
  CHECK_FALSE(r.passed);
  CHECK_FALSE(r.errored);
  CHECK(r.detail == "expected a weighted share of at least 0.7; it is 0.667 (failed: contains: expected to "
                    "contain \"z\"; the answer is \"abc\")");
  // Without a threshold every check of a weight above 0 passes: a weight-0
  // failure does not count, as promptfoo passes a weight-0 assertion.
  r = on(R"({"type": "weighted", )" + pair + "}", "abc");
  CHECK_FALSE(r.passed);
  CHECK(has(r.detail, "expected every check of a weight above 0 to pass; contains: expected to contain"));
  CHECK(on(R"({"type": "weighted", "checks": [{"type": "contains", "value": "a"},
                {"type": "contains", "value": "z"}], "weights": [1, 0]})",
           "abc")
            .passed);
  // A weighted check inside adds its share: inner (1 + 0) / 2 = 0.5 (and
  // fails: no threshold); outer (0.5 + 1) / 2 = 0.75.
  const std::string nested = R"({"type": "weighted", "threshold": 0.75, "checks": [
      {"type": "weighted", "checks": [{"type": "contains", "value": "a"}, {"type": "contains", "value": "z"}]},
      {"type": "contains", "value": "b"}]})";
  CHECK(on(nested, "ab").passed);
  r = on(nested, "a");
  CHECK_FALSE(r.passed);
  CHECK(has(r.detail, "expected a weighted share of at least 0.75; it is 0.25"));
  // No weight at all is a share of 0.
  const std::string zero = R"("checks": [{"type": "contains", "value": "a"}], "weights": [0])";
  CHECK(on(R"({"type": "weighted", "threshold": 0, )" + zero + "}", "x").passed);
  CHECK_FALSE(on(R"({"type": "weighted", "threshold": 0.1, )" + zero + "}", "a").passed);
  // An errored member makes the group errored, whatever the share.
  r = on(R"({"type": "weighted", "threshold": 0.1, "checks": [{"type": "contains", "value": "a"},
            {"type": "finish_reason", "equals": "stop"}]})",
         "a");
  CHECK(r.errored);
  CHECK(r.detail == "finish_reason: the reply has no finish reason");
  // Bad weights and thresholds are suite errors.
  CHECK_THROWS_WITH_AS(mk(R"({"type": "weighted", "checks": [{"type": "refusal"}], "weights": [1, 2]})"),
                       doctest::Contains("\"weights\" must be an array of 1 numbers, one per check"),
                       gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "weighted", "checks": [{"type": "refusal"}], "weights": [-1]})"),
                       doctest::Contains("\"weights[0]\" must be a number >= 0"), gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "weighted", "checks": [{"type": "refusal"}], "threshold": 1.5})"),
                       doctest::Contains("\"threshold\" must be from 0 to 1"), gate::Error);
}

TEST_CASE("levenshtein similarity: 1 - distance / longer length, in code points") {
  // kitten -> sitting: 3 edits (k->s, e->i, +g), longer 7: 1 - 3/7 = 4/7.
  CHECK(similarity(Similarity::levenshtein, "kitten", "sitting") == doctest::Approx(4.0 / 7));
  CHECK(similarity(Similarity::levenshtein, "  abc ", "abc") == 1); // trimmed
  CHECK(similarity(Similarity::levenshtein, "", "") == 1);
  CHECK(similarity(Similarity::levenshtein, "", "ab") == 0);
  // "café" vs "cafe": one substitution of 4 code points (é is 2 bytes): 0.75.
  CHECK(similarity(Similarity::levenshtein, "caf\xC3\xA9", "cafe") == doctest::Approx(0.75));
  CHECK(similarity(Similarity::levenshtein, "Abc", "abc") == doctest::Approx(2.0 / 3)); // case kept
}

TEST_CASE("ROUGE-L F1 on whitespace words, ASCII case ignored") {
  // candidate "the cat sat on the mat" (6), reference "the cat is on the mat"
  // (6): LCS "the cat on the mat" = 5; P = R = 5/6, F1 = 5/6.
  CHECK(similarity(Similarity::rouge_l, "the cat sat on the mat", "The cat is on the mat") ==
        doctest::Approx(5.0 / 6));
  // candidate "a b" (2), reference "a x b y" (4): LCS 2; P = 1, R = 1/2;
  // F1 = 2 * 1 * 0.5 / 1.5 = 2/3.
  CHECK(similarity(Similarity::rouge_l, "a b", "a x b y") == doctest::Approx(2.0 / 3));
  CHECK(similarity(Similarity::rouge_l, "x", "y") == 0);
  CHECK(similarity(Similarity::rouge_l, " ", "") == 1);
  CHECK(similarity(Similarity::rouge_l, "a", "") == 0);
}

TEST_CASE("similar against value or expected, with a threshold") {
  CHECK(on(R"({"type": "similar", "value": "sitting", "threshold": 0.57})", "kitten").passed);
  Result r = on(R"({"type": "similar", "value": "sitting", "threshold": 0.6})", "kitten");
  CHECK_FALSE(r.passed);
  CHECK(r.detail ==
        "expected similarity to \"sitting\" of at least 0.6; it is 0.571 (the answer is \"kitten\")");
  const Check e = mk(R"({"type": "similar", "method": "rouge_l"})", "the cat is on the mat");
  gate::check::Reply reply;
  reply.text = "the cat sat on the mat";
  CHECK(evaluate(e, reply).passed); // 5/6 >= 0.8
  CHECK_THROWS_WITH_AS(mk(R"({"type": "similar"})"), doctest::Contains("no \"value\""), gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "similar", "value": "a", "threshold": 1.5})"),
                       doctest::Contains("from 0 to 1"), gate::Error);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "similar", "value": "a", "method": "cosine"})"),
                       doctest::Contains("\"levenshtein\" or \"rouge_l\""), gate::Error);
  // Too long to compare in bounded time: errored, not a stall or a verdict.
  const std::string big(6000, 'a');
  const std::string spec = R"({"type": "similar", "value": ")" + big + R"("})";
  r = on(spec, big);
  CHECK(r.errored);
  CHECK(has(r.detail, "too long to compare"));
}

TEST_CASE("refusal passes unless a listed phrase is there") {
  CHECK(on(R"({"type": "refusal"})", "Paris is the capital.").passed);
  CHECK(on(R"({"type": "refusal"})", "I can't be sure, but it is about 40.").passed);
  Result r = on(R"({"type": "refusal"})", "I\xE2\x80\x99m sorry, but I CAN'T do that.");
  CHECK_FALSE(r.passed);
  CHECK(r.detail == "expected not a refusal; the answer says \"i'm sorry, but i can't\"");
  CHECK(on(R"({"not": {"type": "refusal"}})", "I must decline.").passed);
}

TEST_CASE("refusal fails on a refusal the provider reported, whatever its words") {
  gate::check::Reply r;
  r.text = "Sorry, that is not something I will do.";
  r.refused = true;
  Result res = evaluate(mk(R"({"type": "refusal"})"), r);
  CHECK_FALSE(res.passed);
  CHECK_FALSE(res.errored);
  CHECK(res.detail == "expected not a refusal; the model refused (the answer is \"Sorry, that is not "
                      "something I will do.\")");
  CHECK(evaluate(mk(R"({"not": {"type": "refusal"}})"), r).passed); // it counts as refusing
  r.text = "";
  CHECK(evaluate(mk(R"({"type": "refusal"})"), r).detail ==
        "expected not a refusal; the model refused (the answer is empty)");
  r.refused = false;
  CHECK(evaluate(mk(R"({"type": "refusal"})"), r).passed);
}
