#include <gate/render/annotations.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

#include <gate/render/escape.hpp>
#include <gate/render/shared.hpp>
#include <gate/report/report.hpp>
#include <gate/util/format.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::render {

namespace {

using compare::TaskDiff;
using compare::Verdict;

constexpr std::size_t k_free_text_bytes = 500;

// "p=0.012", "q<0.001".
std::string p_label(double p, const char* name = "p") {
  if (p < 0.001) return std::string(name) + "<0.001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s=%.3f", name, p);
  return buf;
}

std::string escape(std::string_view s, bool property) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '%': out += "%25"; break;
    case '\r': out += "%0D"; break;
    case '\n': out += "%0A"; break;
    case ':': property ? out += "%3A" : out += c; break;
    case ',': property ? out += "%2C" : out += c; break;
    default: out += c;
    }
  }
  return out;
}

// Untrusted text for a line inside the stop-commands block: one line, no
// control characters, no copy of the token, at most k_free_text_bytes.
std::string free_text(std::string_view text, const std::string& token) {
  std::string s = safe_text(text);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (c == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xa8 ||
                static_cast<unsigned char>(s[i + 2]) == 0xa9)) {
      out += ' '; // U+2028, U+2029: line breaks to some readers
      i += 2;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) {
      out += ' '; // U+0085 NEXT LINE
      i += 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  for (std::size_t at = out.find(token); at != std::string::npos; at = out.find(token, at))
    out.replace(at, token.size(), "[stop token]");
  if (out.size() > k_free_text_bytes) {
    std::size_t cut = k_free_text_bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80)
      --cut;
    out.resize(cut);
    out += "…";
  }
  return out;
}

std::string passed_text(const TaskDiff& t) {
  return std::to_string(t.c_b) + "/" + std::to_string(t.n_b) + " → " + std::to_string(t.c_a) + "/" +
         std::to_string(t.n_a) + " runs passed";
}

void check_token(const std::string& token) {
  bool ok = token.size() >= 16;
  for (char c : token)
    ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
  if (!ok)
    throw std::invalid_argument("github_annotations: the stop token must be 16+ characters of [A-Za-z0-9]");
}

} // namespace

std::string escape_command_data(std::string_view s) { return escape(s, false); }

std::string escape_command_property(std::string_view s) { return escape(s, true); }

std::string github_annotations(const Verdict& v, const std::string& stop_token) {
  check_token(stop_token);
  const std::string error = "::error title=" + escape_command_property("gate") + "::";
  std::string out;
  // One error per rule that failed the gate, whatever the rule: compare
  // names each in v.reasons (a metric, regressed tasks, max_new_failures,
  // a confirmation), so a new rule needs nothing here.
  if (v.status == compare::Status::failed)
    for (const auto& r : v.reasons)
      out += error + escape_command_data(safe_text("gate failed: " + r)) + "\n";
  if (v.status == compare::Status::unmeasured)
    for (const auto& r : v.reasons)
      out += error + escape_command_data(safe_text("could not measure: " + r)) + "\n";
  if (v.status == compare::Status::inconclusive && v.on_inconclusive != "pass") {
    const std::string level =
        v.on_inconclusive == "fail" ? error : "::warning title=" + escape_command_property("gate") + "::";
    for (const auto& r : v.inconclusive)
      out += level + escape_command_data(safe_text("inconclusive: " + r)) + "\n";
    // What would decide it, where this run could not: the fresh runs, with the key.
    if (v.confirmation && v.confirmation->state == compare::Confirmation::State::needs_calls)
      out += level +
             escape_command_data(safe_text("inconclusive: decide it with fresh runs (the key exported): " +
                                           v.confirmation->command)) +
             "\n";
  }
  std::size_t annotated = 0, regressed = 0;
  for (const TaskDiff& t : v.tasks) {
    if (!t.regressed) continue;
    ++regressed;
    if (annotated == k_max_task_annotations) continue;
    ++annotated;
    std::string m = "task " + safe_text(t.id) + " regressed: " + passed_text(t);
    m += t.grader_change ? " (check or grader change: the inputs were unchanged)"
                         : " (" + p_label(t.q_value, "q") + ")";
    out += error + escape_command_data(m) + "\n";
  }
  if (regressed > annotated)
    out += error + "… and " + std::to_string(regressed - annotated) +
           " more regressed tasks: see the verdict (Markdown, JSON or JUnit)\n";

  out += "::stop-commands::" + stop_token + "\n";
  out += "gate: " + free_text(v.headline, stop_token) + "\n";
  for (const auto& w : v.warnings)
    out += "gate: warning: " + free_text(w, stop_token) + "\n";
  std::size_t detailed = 0;
  for (const TaskDiff& t : v.tasks) {
    if (!t.regressed || detailed == k_max_task_annotations) continue;
    ++detailed;
    std::string id = free_text(t.id, stop_token);
    for (const auto& c : t.failing_checks)
      out += "gate: task " + id + ": failing check: " + free_text(c, stop_token) + "\n";
    if (!t.answer_excerpt.empty())
      out += "gate: task " + id + ": answer: " + free_text(t.answer_excerpt, stop_token) + "\n";
  }
  out += "::" + stop_token + "::\n";
  return out;
}

std::string random_stop_token() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    out += buf;
  }
  return out;
}

} // namespace gate::render
