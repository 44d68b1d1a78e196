#include <gate/render/html_detail.hpp>

#include <algorithm>

#include <unordered_map>

#include <gate/render/escape.hpp>
#include <gate/report/report.hpp>
#include <gate/util/format.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::render::html_detail {

namespace {

// Caps on text that the report does not already bound (answers are
// bounded by results::k_answer_limit).
constexpr std::size_t k_html_label_bytes = 300;
constexpr std::size_t k_detail_bytes = 1000;
constexpr std::size_t k_message_bytes = 500;

class Writer {
public:
  explicit Writer(const HtmlOptions& o) : o_(o) {}

  void key(std::string_view k) {
    comma();
    json::append_quoted(k, out_);
    out_ += ':';
    first_ = true; // the value follows without a comma
  }
  void str(std::string_view s, std::size_t max_bytes = 0) {
    comma();
    std::string c = clean(s);
    json::append_quoted(max_bytes ? truncate_utf8(c, max_bytes) : c, out_);
  }
  void num(double d) {
    comma();
    json::append_number(d, out_);
  }
  void boolean(bool b) {
    comma();
    out_ += b ? "true" : "false";
  }
  void null() {
    comma();
    out_ += "null";
  }
  void raw_open(char c) {
    comma();
    out_ += c;
    first_ = true;
  }
  void close(char c) {
    out_ += c;
    first_ = false;
  }

  // The index of `answer` in the answers table, shortened once the budget
  // of distinct answer bytes is spent.
  std::size_t answer(std::string_view answer, bool& shortened) {
    std::string a = clean(answer);
    shortened = false;
    if (auto it = index_.find(a); it != index_.end()) return it->second;
    if (spent_ + a.size() > o_.answer_budget_bytes && a.size() > o_.short_answer_bytes) {
      a = truncate_utf8(a, o_.short_answer_bytes);
      shortened = true;
      ++shortened_count_;
      if (auto it = index_.find(a); it != index_.end()) return it->second;
    }
    spent_ += a.size();
    index_.emplace(a, answers_.size());
    answers_.push_back(std::move(a));
    return answers_.size() - 1;
  }

  std::string& out() { return out_; }
  const std::vector<std::string>& answers() const { return answers_; }
  std::size_t shortened() const { return shortened_count_; }

private:
  void comma() {
    if (!first_) out_ += ',';
    first_ = false;
  }

  const HtmlOptions& o_;
  std::string out_;
  bool first_ = true;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::string> answers_;
  std::size_t spent_ = 0;
  std::size_t shortened_count_ = 0;
};

// Fields at their usual value are left out (the script supplies the
// default): a suite of thousands of tasks has tens of thousands of runs.
void run(Writer& w, const results::Run& r) {
  w.raw_open('{');
  w.key("index");
  w.num(r.index);
  w.key("passed");
  w.boolean(r.passed);
  if (!r.error.empty()) {
    w.key("error");
    w.str(r.error, k_html_label_bytes);
  }
  if (!r.error_message.empty()) {
    w.key("error_message");
    w.str(r.error_message, k_message_bytes);
  }
  w.key("checks");
  w.raw_open('[');
  for (const results::CheckResult& c : r.checks) {
    w.raw_open('{');
    w.key("label");
    w.str(c.label, k_html_label_bytes);
    w.key("passed");
    w.boolean(c.passed);
    if (!c.detail.empty()) {
      w.key("detail");
      w.str(c.detail, k_detail_bytes);
    }
    w.close('}');
  }
  w.close(']');
  bool shortened = false;
  std::size_t answer = w.answer(results::shown_answer(r), shortened);
  w.key("answer");
  w.num(static_cast<double>(answer));
  if (r.answer_truncated) {
    w.key("answer_truncated");
    w.boolean(true);
  }
  if (shortened) {
    w.key("answer_shortened");
    w.boolean(true);
  }
  w.key("prompt_tokens");
  w.num(static_cast<double>(r.prompt_tokens));
  w.key("completion_tokens");
  w.num(static_cast<double>(r.completion_tokens));
  if (!r.usage_known) {
    w.key("usage_known");
    w.boolean(false);
  }
  w.key("latency_ms");
  w.num(r.latency_ms);
  w.key("latency"); // for people: "85 µs", "1.24 s"
  w.str(human_ms(r.latency_ms));
  if (r.cache_hit) {
    w.key("cache_hit");
    w.boolean(true);
  }
  if (r.attempts != 1) {
    w.key("attempts");
    w.num(r.attempts);
  }
  if (!r.tool_calls.empty()) {
    w.key("tools");
    w.raw_open('[');
    for (const results::ToolCall& t : r.tool_calls)
      w.str(t.name, k_html_label_bytes);
    w.close(']');
  }
  w.close('}');
}

void side(Writer& w, const Side& s) {
  if (!s.task) {
    w.null();
    return;
  }
  w.raw_open('{');
  auto count = [&](const char* name, std::int64_t metrics::TaskStats::*field) {
    w.key(name);
    if (s.stats)
      w.num(static_cast<double>(s.stats->*field));
    else
      w.null();
  };
  count("c", &metrics::TaskStats::c);
  count("n", &metrics::TaskStats::n);
  count("errored", &metrics::TaskStats::errored);
  w.key("runs");
  w.raw_open('[');
  for (const results::Run& r : s.task->runs)
    run(w, r);
  w.close(']');
  w.close('}');
}

// The task whose input the page shows for `t` (the current side's, else
// the baseline's), or null.
const results::Task* shows_input(const TaskEntry& t) {
  static const std::vector<std::string> k_shown = {"regressed", "flipped", "failed", "flaky"};
  bool shown = false;
  for (const std::string& s : t.status)
    shown = shown || std::find(k_shown.begin(), k_shown.end(), s) != k_shown.end();
  if (t.diff) shown = shown || t.diff->regressed || t.diff->flipped;
  if (!shown) return nullptr;
  const results::Task* task = t.cur.task ? t.cur.task : t.base.task;
  return task && !task->input_sha256.empty() ? task : nullptr;
}

void diff(Writer& w, const compare::TaskDiff* d) {
  if (!d) {
    w.null();
    return;
  }
  w.raw_open('{');
  w.key("p");
  w.num(d->p_value);
  w.key("q");
  w.num(d->q_value);
  w.key("inputs_unchanged");
  w.boolean(d->inputs_unchanged);
  w.key("grader_change");
  w.boolean(d->grader_change);
  w.key("first_divergence");
  if (d->first_divergence)
    w.num(*d->first_divergence);
  else
    w.null();
  w.close('}');
}

} // namespace

std::string clean(std::string_view s) {
  std::string v = to_valid_utf8(redact(s));
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto b = [&](std::size_t j) { return static_cast<unsigned char>(v[j]); };
    // In valid UTF-8 these three-byte forms are exactly U+200E/F, U+202A–E,
    // U+2066–9 and the two-byte form U+061C.
    bool bidi = false;
    if (b(i) == 0xe2 && i + 2 < v.size()) {
      unsigned c1 = b(i + 1), c2 = b(i + 2);
      bidi = (c1 == 0x80 && (c2 == 0x8e || c2 == 0x8f || (c2 >= 0xaa && c2 <= 0xae))) ||
             (c1 == 0x81 && c2 >= 0xa6 && c2 <= 0xa9);
      if (bidi) {
        out += "\xEF\xBF\xBD";
        i += 2;
        continue;
      }
    }
    if (b(i) == 0xd8 && i + 1 < v.size() && b(i + 1) == 0x9c) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out += v[i];
  }
  return out;
}

std::string text(std::string_view s) { return html_escape(clean(s)); }

std::string script_safe(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (std::size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string data_json(const std::vector<TaskEntry>& tasks, const HtmlOptions& o, std::size_t& shortened) {
  Writer w(o);
  w.raw_open('[');
  for (const TaskEntry& t : tasks) {
    w.raw_open('{');
    w.key("id");
    w.str(t.id);
    w.key("scenario");
    w.str(t.scenario);
    w.key("status");
    w.raw_open('[');
    for (const std::string& s : t.status)
      w.str(s);
    w.close(']');
    // The question beside the answers (docs/report-schema.md "Task"), for
    // the tasks a reviewer opens first: regressed and flipped in a verdict,
    // failed and flaky in a report. Other tasks leave it out of the page.
    if (const results::Task* in = shows_input(t)) {
      w.key("input");
      w.str(in->input, results::k_input_limit);
      if (in->input_truncated) {
        w.key("input_truncated");
        w.boolean(true);
      }
      if (t.base.task && t.cur.task && !t.base.task->input_sha256.empty() &&
          t.base.task->input_sha256 != t.cur.task->input_sha256) {
        w.key("baseline_input");
        w.str(t.base.task->input, results::k_input_limit);
      }
    }
    w.key("diff");
    diff(w, t.diff);
    w.key("b");
    side(w, t.base);
    w.key("a");
    side(w, t.cur);
    w.close('}');
  }
  w.close(']');
  shortened = w.shortened();

  // The answers table is complete only now; it goes first for readability
  // of the blob, so the document is assembled around the task array.
  std::string out = "{\"short_answer_bytes\":" + std::to_string(o.short_answer_bytes);
  out += ",\"answers_shortened\":" + std::to_string(shortened);
  out += ",\"answers\":[";
  for (std::size_t i = 0; i < w.answers().size(); ++i) {
    if (i > 0) out += ',';
    json::append_quoted(w.answers()[i], out);
  }
  out += "],\"tasks\":";
  out += w.out();
  out += '}';
  return out;
}

} // namespace gate::render::html_detail
