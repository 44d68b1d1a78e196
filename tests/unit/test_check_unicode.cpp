// The text checks' Unicode rules (gate/check/unicode.hpp): full case
// folding for every check that ignores case, JavaScript's \s for words. The
// strings are issue 29's, each of which failed under the ASCII rules.
#include <doctest.h>

#include <boost/json/parse.hpp>
#include <string>

#include <gate/check/check.hpp>
#include <gate/check/unicode.hpp>

using gate::check::detail::count_words;
using gate::check::detail::fold_case;

namespace {

bool passes(std::string_view spec, std::string_view answer) {
  return gate::check::evaluate(gate::check::parse(boost::json::parse(spec), std::nullopt, "cases.jsonl:1"),
                               answer)
      .passed;
}

} // namespace

TEST_CASE("fold_case: Unicode full folding, not lowercasing ASCII only") {
  CHECK(fold_case("\xC2\xBF"
                  "D\xC3\x93NDE EST\xC3\x81") == "\xC2\xBF"
                                                 "d\xC3\xB3nde est\xC3\xA1"); // ¿DÓNDE ESTÁ
  CHECK(fold_case("\xE1\xBA\x9E") == "ss");                                   // ẞ
  CHECK(fold_case("\xC3\x9F") == "ss");                                       // ß
  CHECK(fold_case("\xCE\xA3\xCF\x82\xCF\x83") == "\xCF\x83\xCF\x83\xCF\x83"); // Σ ς σ → σσσ
  CHECK(fold_case("\xEF\xAC\x81") == "fi");                                   // ﬁ
  CHECK(fold_case("I\xC4\xB0") == "i"
                                  "i\xCC\x87");               // I İ: not Turkish (no dotless ı)
  CHECK(fold_case("\xF0\x90\x90\x80") == "\xF0\x90\x90\xA8"); // 𐐀 → 𐐨 (outside the BMP)
  // An invalid byte stays itself, never joining a neighbour; NUL is a character.
  CHECK(fold_case(std::string("A\xC3"
                              "B\0\xFF",
                              5)) == std::string("a\xC3"
                                                 "b\0\xFF",
                                                 5));
}

TEST_CASE("icontains, icontains groups and equals ignore_case fold Unicode case") {
  CHECK(passes(R"({"type":"icontains","value":"Dónde está la biblioteca"})", "¿DÓNDE ESTÁ LA BIBLIOTECA?"));
  CHECK(passes(
      R"({"type":"all_of","checks":[{"type":"icontains","value":"école"},{"type":"icontains","value":"café"}]})",
      "L'ÉCOLE et le CAFÉ"));
  CHECK(passes(R"({"type":"any_of","checks":[{"type":"icontains","value":"ΣΟΦΊΑ"}]})", "η σοφία"));
  CHECK(passes(R"({"type":"icontains","value":"ΟΔΟΣ"})", "στην οδος")); // final ς against Σ
  CHECK(passes(R"({"type":"icontains","value":"STRASSE"})", "Straße")); // ß folds to ss
  CHECK(passes(R"({"type":"icontains","value":"GROẞ"})", "groß"));
  CHECK_FALSE(passes(R"({"type":"icontains","value":"école"})", "ecole")); // accents are not case
  CHECK(passes(R"({"type":"equals","value":"ÉCOLE","ignore_case":true})", "école"));
  CHECK_FALSE(passes(R"({"type":"equals","value":"ÉCOLE"})", "école"));
  CHECK(passes(R"({"type":"equals","value":"Σοφία ΚΑΙ","ignore_case":true,"collapse_whitespace":true})",
               "  σοφία   και "));
}

TEST_CASE("regex ignore_case folds Unicode case one character at a time") {
  CHECK(passes(R"({"type":"regex","pattern":"dónde está","ignore_case":true})", "¿DÓNDE ESTÁ?"));
  CHECK(passes(R"({"type":"regex","pattern":"(?i)l'école et le café"})", "L'ÉCOLE ET LE CAFÉ"));
  CHECK(passes(R"({"type":"regex","pattern":"^σοφια[σς]$","ignore_case":true})", "ΣΟΦΙΑΣ"));
  CHECK(passes(R"({"type":"regex","pattern":"οδος","ignore_case":true})", "ΟΔΟΣ"));  // ς, σ and Σ are one
  CHECK(passes(R"({"type":"regex","pattern":"ẞ","ignore_case":true})", "ß"));        // a simple fold pair
  CHECK_FALSE(passes(R"({"type":"regex","pattern":"ss","ignore_case":true})", "ß")); // ß → ss is not simple
  CHECK_FALSE(passes(R"({"type":"regex","pattern":"dónde"})", "DÓNDE"));
}

TEST_CASE("length in words splits on JavaScript's \\s, as promptfoo's word-count") {
  CHECK(count_words("one\xC2\xA0two") == 2);                      // NO-BREAK SPACE
  CHECK(count_words("one\xE2\x80\x89two\xE3\x80\x80three") == 3); // THIN SPACE, IDEOGRAPHIC SPACE
  CHECK(count_words("a\xE2\x80\xA8"
                    "b\xEF\xBB\xBF"
                    "c") == 3); // LINE SEPARATOR, U+FEFF
  CHECK(count_words("a\xE2\x80\x8B"
                    "b") == 1); // ZERO WIDTH SPACE is no \s (Cf)
  CHECK(count_words("  \t\n ") == 0);
  CHECK(count_words(std::string("x\xFF y\0z", 7)) == 2); // an invalid byte and NUL are in words
  CHECK(passes(R"({"type":"length","unit":"words","min":3,"max":3})", "Hola\xC2\xA0mundo\xC2\xA0hoy"));
}

TEST_CASE("similar rouge_l and refusal fold Unicode case too") {
  CHECK(gate::check::similarity(gate::check::Similarity::rouge_l, "ÉCOLE CAFÉ", "école café") == 1.0);
  CHECK(gate::check::similarity(gate::check::Similarity::rouge_l,
                                "a\xC2\xA0"
                                "b",
                                "a b") == 1.0);
  CHECK(gate::check::refusal_phrase("I\xE2\x80\x99M SORRY, BUT I CAN\xE2\x80\x99T") ==
        std::optional<std::string>("i'm sorry, but i can't"));
}
