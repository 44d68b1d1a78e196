// A prompt edit is an ordinary, change-scoped comparison (issue 15 item 1):
// the verdict names the prompt and the tasks it reached, and the regressed
// and flipped tasks carry the question beside the answer (item 2).
#include <doctest.h>

#include <string>
#include <vector>

#include <gate/compare/compare.hpp>
#include <gate/render/html.hpp>
#include <gate/render/verdict_markdown.hpp>

#include "test_compare_support.hpp"

using namespace gate::compare;
using namespace gate::compare::test;
using gate::report::Report;
using gate::results::Task;

namespace {

// Ten replayed tasks, each with its rendered input; `edited` of them sent
// another system prompt (new fingerprint and input hash), and t00 of those
// now fails every run.
Report side(const std::string& prompt_sha, int edited) {
  std::vector<Task> tasks;
  for (int i = 0; i < 10; ++i) {
    Task t = replayed(id(i), 3, 3);
    t.input = "system: Be kind.\n\nuser: question " + std::to_string(i) + "?";
    t.input_sha256 = "in-" + id(i);
    if (i < edited) {
      if (i == 0) t = replayed(id(i), 0, 3);
      t.input = "system: Be curt.\n\nuser: question " + std::to_string(i) + "?";
      t.input_sha256 = "in2-" + id(i);
      for (auto& r : t.runs) {
        r.fingerprint = "fp2-" + id(i);
        r.answer_sha256 += "/2";
      }
    }
    tasks.push_back(std::move(t));
  }
  Report r = report(std::move(tasks));
  r.prompts = {{"system", "prompts/support.md", prompt_sha}};
  return r;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l == text) return true;
  MESSAGE("no line \"" << text << "\" among " << lines.size());
  for (const auto& l : lines)
    MESSAGE("  " << l);
  return false;
}

} // namespace

TEST_CASE("an edited prompt is named with the number of tasks whose input it changed; no suite change") {
  const Report base = side("aaaa", 0);
  const Report cur = side("bbbb", 3);
  Verdict v = compare(base, cur, {});
  CHECK(has_line(v.warnings,
                 "prompt changed: prompts/support.md (system); 3 of 10 paired tasks sent another input"));
  CHECK(v.affected == 3);
  CHECK(v.unchanged_inputs == 7);

  // The same prompt on both sides: no prompt line at all.
  for (const auto& w : compare(base, side("aaaa", 0), {}).warnings)
    CHECK(w.find("prompt") == std::string::npos);

  // Added, removed, renamed.
  Report none = side("aaaa", 0);
  none.prompts.clear();
  CHECK(has_line(compare(none, base, {}).warnings,
                 "prompt added: prompts/support.md (system); 0 of 10 paired tasks "
                 "sent another input"));
  CHECK(has_line(compare(base, none, {}).warnings,
                 "prompt removed: prompts/support.md (system); 0 of 10 paired "
                 "tasks sent another input"));
  // The same text under another name (a gate.yaml in another directory)
  // is the same prompt; another text under another name is named both ways.
  Report moved = side("aaaa", 0);
  moved.prompts[0].name = "../demo/prompts/support.md";
  for (const auto& w : compare(base, moved, {}).warnings)
    CHECK(w.find("prompt") == std::string::npos);
  Report renamed = side("cccc", 0);
  renamed.prompts[0].name = "prompts/v2.md";
  CHECK(has_line(
      compare(base, renamed, {}).warnings,
      "prompt changed: prompts/support.md (system) → prompts/v2.md (system); 0 of 10 paired tasks sent "
      "another input"));

  // Reports without input hashes (written before gate kept them) fall back
  // to the affected count.
  Report old_base = base;
  for (auto& t : old_base.tasks)
    t.input_sha256.clear();
  CHECK(has_line(compare(old_base, cur, {}).warnings,
                 "prompt changed: prompts/support.md (system); 3 affected tasks"));
}

TEST_CASE("a regressed task carries its input, shown beside the answer in the Markdown and the HTML") {
  Report base = side("aaaa", 0);
  Report cur = side("bbbb", 3);
  // A hostile question: it must stay inert in both forms.
  cur.tasks[0].input = "system: Be curt.\n\nuser: <script>alert(1)</script> | `x`?";
  Verdict v = compare(base, cur, {});
  REQUIRE_FALSE(v.tasks.empty());
  const TaskDiff& d = v.tasks.front();
  CHECK(d.id == "t00");
  CHECK(d.flipped);
  CHECK(d.input == cur.tasks[0].input);

  const std::string md = gate::render::verdict_markdown(v);
  CHECK(md.find("| Input (excerpt) | Answer (excerpt) |") != std::string::npos);
  // The excerpt starts at the question (the last user turn), not at the
  // system prompt every task shares; the pipe cannot end the cell.
  CHECK(md.find("user: <script>alert(1)</script> \\| ") != std::string::npos);
  CHECK(md.find("system: Be curt.") == std::string::npos);

  gate::render::HtmlOptions o;
  const std::string html = gate::render::verdict_html(v, base, cur, o);
  CHECK(html.find("<script>alert(1)") == std::string::npos);
  CHECK(html.find(
            "\"input\":\"system: Be curt.\\n\\nuser: \\u003cscript\\u003ealert(1)\\u003c/script\\u003e") !=
        std::string::npos);
  CHECK(html.find("\"baseline_input\":\"system: Be kind.") != std::string::npos);
  // An unchanged, passing task's input stays out of the page.
  CHECK(html.find("question 9?") == std::string::npos);
}
