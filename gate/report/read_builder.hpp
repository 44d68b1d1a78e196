#pragma once

// Private to report_read.cpp: the SAX handler that builds a Report field by
// field as Boost.JSON's parser reports events. report_read.cpp feeds it the
// bytes and turns its failures into errors.

#include <algorithm>
#include <boost/json/basic_parser.hpp>
#include <boost/json/value_stack.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>

#include <gate/report/read_fields.hpp>
#include <gate/report/report.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

// It is as strict as parsing into a DOM and validating would be: unknown
// and duplicate fields, missing fields, wrong types, non-finite numbers,
// invalid UTF-8 and nesting deeper than 64 are errors; numbers are
// converted exactly (Boost.JSON 1.81's own conversion is off by an ulp for
// about one value in five, which would break byte-identical rewrites).
namespace gate::report::detail {

namespace bj = boost::json;
using ec_t = boost::system::error_code;

// Untrusted text inside an error message: quoted (no control characters
// reach the terminal), redacted and short.
inline std::string shown(std::string_view s) {
  std::string out;
  json::append_quoted(to_valid_utf8(utf8_prefix(s, 80)), out);
  if (s.size() > 80) out.insert(out.size() - 1, "...");
  return redact(out);
}

class Builder {
public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  Builder(std::string where, const ReadOptions& o) : where_(std::move(where)), details_(o.details) {}

  Report report;
  std::string problem;  // a syntax-level fault, reported with its position
  std::string semantic; // a whole message, without position
  bool saw_schema = false;

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_object_begin(ec_t& ec) { return open(true, ec); }
  bool on_array_begin(ec_t& ec) { return open(false, ec); }
  bool on_object_end(std::size_t n, ec_t& ec) { return close(true, n, ec); }
  bool on_array_end(std::size_t n, ec_t& ec) { return close(false, n, ec); }
  bool on_key_part(bj::string_view s, std::size_t, ec_t&) {
    buf_.append(s.data(), s.size());
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, ec_t& ec) { return key(joined(s), ec); }
  bool on_string_part(bj::string_view s, std::size_t, ec_t&) {
    buf_.append(s.data(), s.size());
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, ec_t& ec) {
    Scalar v{Scalar::string};
    v.text = joined(s);
    return scalar(v, ec);
  }
  bool on_number_part(bj::string_view s, ec_t&) {
    num_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, ec_t& ec) {
    num_.clear();
    Scalar v{Scalar::int64};
    v.i = i;
    return scalar(v, ec);
  }
  bool on_uint64(std::uint64_t u, bj::string_view, ec_t& ec) {
    num_.clear();
    Scalar v{Scalar::uint64};
    v.d = static_cast<double>(u);
    v.u = u;
    return scalar(v, ec);
  }
  bool on_double(double d, bj::string_view s, ec_t& ec) {
    num_.append(s.data(), s.size());
    double exact = d;
    auto res = std::from_chars(num_.data(), num_.data() + num_.size(), exact);
    num_.clear();
    if (res.ec == std::errc::result_out_of_range || !std::isfinite(exact))
      return fault("number out of range", ec);
    Scalar v{Scalar::number};
    v.d = res.ec == std::errc() ? exact : d;
    return scalar(v, ec);
  }
  bool on_bool(bool b, ec_t& ec) {
    Scalar v{Scalar::boolean};
    v.b = b;
    return scalar(v, ec);
  }
  bool on_null(ec_t& ec) { return scalar(Scalar{Scalar::null}, ec); }
  bool on_comment_part(bj::string_view, ec_t&) { return true; }
  bool on_comment(bj::string_view, ec_t&) { return true; }

private:
  std::string where_;
  bool details_ = true;
  // A run's check results are read here and moved into the run at its end
  // only when they are kept (details_, or the run failed): no allocation
  // for the checks of the passed runs a summary read drops.
  std::vector<results::CheckResult> checks_;
  std::vector<Frame> stack_;
  std::string buf_, num_;
  std::vector<std::uint64_t> hashes_; // key hashes of the open skip/config objects
  bj::value_stack config_;
  std::string route_key_;
  std::size_t last_runs_ = 0; // the number of the previous task's runs
  results::Route* route_ = nullptr;

  // A string or key whole: the parts gathered so far plus the last one.
  std::string_view joined(bj::string_view s) {
    if (buf_.empty()) return {s.data(), s.size()};
    buf_.append(s.data(), s.size());
    last_ = std::move(buf_);
    buf_.clear();
    return last_;
  }
  std::string last_;

  bool fault(std::string what, ec_t& ec) {
    problem = std::move(what);
    ec = bj::error::syntax;
    return false;
  }
  bool fail(std::string message, ec_t& ec) {
    semantic = std::move(message);
    ec = bj::error::syntax;
    return false;
  }

  results::Task& task() { return report.tasks.back(); }
  results::Run& run() { return task().runs.back(); }

  // "where: task "a" run 1: check 0" — the object the current frame is in.
  std::string place() const {
    std::string out = where_;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      switch (f.ctx) {
      case Ctx::suite: out += ": suite"; break;
      case Ctx::resumed: out += ": resumed"; break;
      // Messages name a task by its id, which is what a reader can search
      // for, once it is known.
      case Ctx::task:
        out = where_ + ": task " +
              (report.tasks.back().id.empty() ? std::to_string(stack_[i - 1].count - 1)
                                              : shown(report.tasks.back().id));
        break;
      case Ctx::run: out += " run " + std::to_string(stack_[i - 1].count - 1); break;
      case Ctx::check: out += ": check " + std::to_string(stack_[i - 1].count - 1); break;
      case Ctx::call: out += ": tool call " + std::to_string(stack_[i - 1].count - 1); break;
      case Ctx::attempt: out += ": attempt " + std::to_string(stack_[i - 1].count - 1); break;
      case Ctx::prompt: out += ": prompt " + std::to_string(stack_[i - 1].count - 1); break;
      default: break;
      }
    }
    return out;
  }

  // A key of a free-form object: 64-bit hashes tell duplicates apart (two
  // different keys of one object colliding is a 1-in-2^64 event).
  bool fresh_key(std::string_view k, ec_t& ec) {
    const std::uint64_t h = key_hash(k);
    Frame& f = stack_.back();
    const std::uint64_t bit = std::uint64_t{1} << (h & 63);
    if (f.hash_bits & bit) {
      const auto begin = hashes_.begin() + static_cast<std::ptrdiff_t>(f.hashes);
      if (std::find(begin, hashes_.end(), h) != hashes_.end())
        return fault("duplicate key \"" + std::string(k) + "\"", ec);
    }
    f.hash_bits |= bit;
    hashes_.push_back(h);
    return true;
  }

  bool key(std::string_view k, ec_t& ec) {
    Frame& f = stack_.back();
    switch (f.ctx) {
    case Ctx::skip: return fresh_key(k, ec);
    case Ctx::config:
      if (!fresh_key(k, ec)) return false;
      config_.push_key(bj::string_view(k.data(), k.size()));
      return true;
    case Ctx::route: route_key_.assign(k); return true;
    default: break;
    }
    const auto& names = f.fields->names;
    const std::size_t i = find_field(names, k, static_cast<std::size_t>(f.field + 1));
    if (i == names.size()) {
      if (f.ctx == Ctx::top && !saw_schema)
        return fail(where_ + ": missing field \"schema\"; this gate reads " + k_schema, ec);
      return fail(place() + ": unknown field " + shown(k), ec);
    }
    f.field = static_cast<int>(i);
    const std::uint32_t bit = 1u << f.field;
    if (f.seen & bit) return fault("duplicate key \"" + std::string(k) + "\"", ec);
    f.seen |= bit;
    return true;
  }

  bool wrong(const char* expected, ec_t& ec) {
    const Frame& f = stack_.back();
    return fail(place() + ": field \"" + std::string(f.fields->names[f.field]) + "\" must be " + expected,
                ec);
  }

  // Value events that are not containers.
  bool scalar(const Scalar& v, ec_t& ec) {
    if (stack_.empty()) return fail(where_ + ": expected a JSON object", ec);
    Frame& f = stack_.back();
    switch (f.ctx) {
    case Ctx::skip: return true;
    case Ctx::config: config_value(v); return true;
    case Ctx::route:
      if (v.kind != Scalar::string)
        return fail(place() + ": route field " + shown(route_key_) + " must be a string", ec);
      if (!route_->emplace(route_key_, std::string(v.text)).second)
        return fault("duplicate key \"" + route_key_ + "\"", ec);
      return true;
    case Ctx::tasks:
      return fail(where_ + ": task " + std::to_string(f.count) + ": expected a JSON object", ec);
    case Ctx::runs:
    case Ctx::checks:
    case Ctx::calls:
    case Ctx::attempts:
    case Ctx::prompts: return fail(place() + ": expected a JSON object in \"" + array_name(f.ctx) + "\"", ec);
    default: return field_value(f, v, ec);
    }
  }

  static const char* array_name(Ctx c) {
    switch (c) {
    case Ctx::runs: return "runs";
    case Ctx::checks: return "checks";
    case Ctx::calls: return "tool_calls";
    case Ctx::attempts: return "attempt_log";
    case Ctx::prompts: return "prompts";
    default: return "tasks";
    }
  }

  void config_value(const Scalar& v) {
    switch (v.kind) {
    case Scalar::string: config_.push_string(bj::string_view(v.text.data(), v.text.size())); break;
    case Scalar::int64: config_.push_int64(v.i); break;
    case Scalar::uint64: config_.push_uint64(v.u); break;
    case Scalar::number: config_.push_double(v.d); break;
    case Scalar::boolean: config_.push_bool(v.b); break;
    case Scalar::null: config_.push_null(); break;
    }
  }

  // Typed getters for a field's value; false (with the message set) on a
  // wrong type.
  bool text(const Scalar& v, std::string& out, ec_t& ec) {
    if (v.kind != Scalar::string) return wrong("a string", ec);
    out.assign(v.text);
    return true;
  }
  bool flag(const Scalar& v, bool& out, ec_t& ec) {
    if (v.kind != Scalar::boolean) return wrong("true or false", ec);
    out = v.b;
    return true;
  }
  bool count(const Scalar& v, std::int64_t& out, ec_t& ec) {
    if (v.kind != Scalar::int64)
      return v.kind == Scalar::uint64 ? wrong("<= 2^63 - 1", ec) : wrong("an integer", ec);
    if (v.i < 0) return wrong(">= 0", ec);
    out = v.i;
    return true;
  }
  // Agent fields are optional as a group: the first one read creates it.
  static results::AgentRun& agent_of(results::Run& r) { return r.agent ? *r.agent : r.agent.emplace(); }
  bool small(const Scalar& v, int& out, ec_t& ec) {
    std::int64_t i = 0;
    if (!count(v, i, ec)) return false;
    if (i > INT_MAX)
      return fail(place() + ": field \"" + std::string(stack_.back().fields->names[stack_.back().field]) +
                      "\" is too large",
                  ec);
    out = static_cast<int>(i);
    return true;
  }
  bool number(const Scalar& v, double& out, ec_t& ec) {
    if (v.kind == Scalar::number || v.kind == Scalar::uint64)
      out = v.d;
    else if (v.kind == Scalar::int64)
      out = static_cast<double>(v.i);
    else
      return wrong("a number", ec);
    return true;
  }

  bool field_value(Frame& f, const Scalar& v, ec_t& ec) {
    switch (f.ctx) {
    case Ctx::top:
      switch (f.field) {
      case t_schema:
        if (v.kind != Scalar::string) return wrong("a string", ec);
        if (v.text != k_schema)
          return fail(where_ + ": unknown schema " + shown(v.text) + "; this gate reads " + k_schema, ec);
        saw_schema = true;
        return true;
      case t_gate_version: return text(v, report.gate_version, ec);
      case t_config:
        if (v.kind != Scalar::null) return wrong("an object or null", ec);
        report.config = nullptr;
        return true;
      case t_started: return text(v, report.started_at, ec);
      case t_finished: return text(v, report.finished_at, ec);
      case t_complete: return flag(v, report.complete, ec);
      case t_reason: return text(v, report.incomplete_reason, ec);
      case t_suite:
      case t_route:
      case t_resumed:
      case t_runs_route:
      case t_stats: return wrong("an object", ec);
      default: return wrong("an array", ec);
      }
    case Ctx::suite: {
      std::string* target[] = {&report.suite.name, &report.suite.version, &report.suite.sha256};
      return text(v, *target[f.field], ec);
    }
    case Ctx::resumed:
      return f.field == 0 ? text(v, report.resumed->from_started_at, ec) : count(v, report.resumed->runs, ec);
    case Ctx::task:
      switch (f.field) {
      case k_id:
        if (!text(v, task().id, ec)) return false;
        if (task().id.empty()) return fail(place() + ": field \"id\" must not be empty", ec);
        return true;
      case k_scenario: return text(v, task().scenario, ec);
      case k_difficulty: return text(v, task().difficulty, ec);
      case k_group: return text(v, task().group, ec);
      case k_input: return text(v, task().input, ec);
      case k_input_truncated: return flag(v, task().input_truncated, ec);
      case k_input_sha: return text(v, task().input_sha256, ec);
      case k_stats: return wrong("an object", ec);
      default: return wrong("an array", ec);
      }
    case Ctx::run: {
      results::Run& r = run();
      switch (f.field) {
      case r_index: return small(v, r.index, ec);
      case r_passed: return flag(v, r.passed, ec);
      case r_error: return text(v, r.error, ec);
      case r_error_message: return text(v, r.error_message, ec);
      case r_answer:
        // A passed run's answer is dropped at its end without details
        // (keep_details): "passed" comes first in files gate wrote, so the
        // text need not be copied at all.
        if (!details_ && r.passed) return v.kind == Scalar::string ? true : wrong("a string", ec);
        return text(v, r.answer, ec);
      case r_truncated: return flag(v, r.answer_truncated, ec);
      case r_answer_sha: return text(v, r.answer_sha256, ec);
      case r_prompt: return count(v, r.prompt_tokens, ec);
      case r_completion: return count(v, r.completion_tokens, ec);
      case r_usage_known: return flag(v, r.usage_known, ec);
      case r_latency:
        if (!number(v, r.latency_ms, ec)) return false;
        return r.latency_ms < 0 ? wrong(">= 0", ec) : true;
      case r_cache_hit: return flag(v, r.cache_hit, ec);
      case r_attempts: return small(v, r.attempts, ec);
      case r_fingerprint: return text(v, r.fingerprint, ec);
      case r_ttft:
        if (!number(v, r.ttft_ms, ec)) return false;
        return r.ttft_ms < 0 ? wrong(">= 0", ec) : true;
      case r_judge_calls: return small(v, r.judge_calls, ec);
      case r_judge_hits: return small(v, r.judge_cache_hits, ec);
      case r_judge_prompt: return count(v, r.judge_prompt_tokens, ec);
      case r_judge_completion: return count(v, r.judge_completion_tokens, ec);
      case r_agent_exit: {
        if (v.kind != Scalar::int64 || v.i < -1 || v.i > 255) return wrong("an integer from -1 to 255", ec);
        agent_of(r).exit_code = static_cast<int>(v.i);
        return true;
      }
      case r_agent_timed_out: return flag(v, agent_of(r).timed_out, ec);
      case r_agent_stdout: return text(v, agent_of(r).stdout_excerpt, ec);
      case r_agent_stderr: return text(v, agent_of(r).stderr_excerpt, ec);
      case r_final_state: return text(v, agent_of(r).final_state_hash, ec);
      case r_route: return wrong("an object", ec);
      default: return wrong("an array", ec);
      }
    }
    case Ctx::check: {
      results::CheckResult& c = checks_.back();
      if (f.field == 1) return flag(v, c.passed, ec);
      std::string* target[] = {&c.label, nullptr, &c.detail, &c.reason};
      return text(v, *target[f.field], ec);
    }
    case Ctx::attempt: {
      results::Attempt& a = run().attempt_log.back();
      switch (f.field) {
      case a_status: return small(v, a.status, ec);
      case a_bucket: return text(v, a.bucket, ec);
      case a_wait:
        if (!number(v, a.wait_ms, ec)) return false;
        return a.wait_ms < 0 ? wrong(">= 0", ec) : true;
      case a_latency:
        if (!number(v, a.latency_ms, ec)) return false;
        return a.latency_ms < 0 ? wrong(">= 0", ec) : true;
      case a_prompt: return count(v, a.prompt_tokens, ec);
      case a_completion: return count(v, a.completion_tokens, ec);
      default: return flag(v, a.usage_known, ec);
      }
    }
    case Ctx::call: {
      results::ToolCall& c = run().tool_calls.back();
      return text(v, f.field == 0 ? c.name : c.arguments_sha256, ec);
    }
    case Ctx::prompt: {
      results::Prompt& p = report.prompts.back();
      std::string* target[] = {&p.role, &p.name, &p.sha256};
      return text(v, *target[f.field], ec);
    }
    default: return true;
    }
  }

  void push(Ctx c) { stack_.push_back({c, &fields_of(c), -1, 0, 0, hashes_.size()}); }

  // An object or array begins: decide what it is from where it stands.
  bool open(bool object, ec_t& ec) {
    if (stack_.empty()) {
      if (!object) return fail(where_ + ": expected a JSON object", ec);
      push(Ctx::top);
      return true;
    }
    Frame& f = stack_.back();
    switch (f.ctx) {
    case Ctx::skip: push(Ctx::skip); return true;
    case Ctx::config: push(Ctx::config); return true;
    case Ctx::route: return fail(place() + ": route field " + shown(route_key_) + " must be a string", ec);
    case Ctx::tasks:
      if (!object) return fail(where_ + ": task " + std::to_string(f.count) + ": expected a JSON object", ec);
      ++f.count;
      report.tasks.emplace_back();
      // Tasks of a report mostly have the same k: sizing the runs like the
      // last task's avoids regrowing (and the slack it leaves, a third of the
      // runs' memory at k = 3).
      task().runs.reserve(last_runs_);
      push(Ctx::task);
      return true;
    case Ctx::runs:
    case Ctx::checks:
    case Ctx::calls:
    case Ctx::attempts: {
      if (!object) return fail(place() + ": expected a JSON object in \"" + array_name(f.ctx) + "\"", ec);
      ++f.count;
      const Ctx parent = f.ctx;
      if (parent == Ctx::runs) {
        task().runs.emplace_back();
        checks_.clear();
        push(Ctx::run);
      } else if (parent == Ctx::checks) {
        checks_.emplace_back();
        push(Ctx::check);
      } else if (parent == Ctx::attempts) {
        run().attempt_log.emplace_back();
        push(Ctx::attempt);
      } else {
        run().tool_calls.emplace_back();
        push(Ctx::call);
      }
      return true;
    }
    case Ctx::prompts:
      if (!object) return fail(place() + ": expected a JSON object in \"prompts\"", ec);
      ++f.count;
      report.prompts.emplace_back();
      push(Ctx::prompt);
      return true;
    default: break;
    }
    // A field's value: which fields are containers, and of which kind.
    auto expect = [&](bool want_object, Ctx next, const char* what) {
      if (object != want_object) return wrong(what, ec);
      push(next);
      return true;
    };
    switch (f.ctx) {
    case Ctx::top:
      switch (f.field) {
      case t_suite: return expect(true, Ctx::suite, "an object");
      case t_resumed: report.resumed.emplace(); return expect(true, Ctx::resumed, "an object");
      case t_route: route_ = &report.route; return expect(true, Ctx::route, "an object");
      case t_runs_route: route_ = &report.runs_route; return expect(true, Ctx::route, "an object");
      case t_stats: return expect(true, Ctx::skip, "an object");
      case t_tasks: return expect(false, Ctx::tasks, "an array");
      case t_prompts: return expect(false, Ctx::prompts, "an array");
      case t_config:
        if (!object) return wrong("an object or null", ec);
        config_.reset();
        push(Ctx::config);
        return true;
      default: return wrong(f.field == t_complete ? "true or false" : "a string", ec);
      }
    case Ctx::task:
      switch (f.field) {
      case k_stats: return expect(true, Ctx::skip, "an object");
      case k_runs: return expect(false, Ctx::runs, "an array");
      case k_input_truncated: return wrong("true or false", ec);
      default: return wrong("a string", ec);
      }
    case Ctx::run:
      switch (f.field) {
      case r_checks: return expect(false, Ctx::checks, "an array");
      case r_calls: return expect(false, Ctx::calls, "an array");
      case r_attempt_log: return expect(false, Ctx::attempts, "an array");
      case r_route: route_ = &run().route; return expect(true, Ctx::route, "an object");
      case r_passed:
      case r_truncated:
      case r_usage_known:
      case r_agent_timed_out:
      case r_cache_hit: return wrong("true or false", ec);
      case r_agent_exit: return wrong("an integer from -1 to 255", ec);
      case r_index:
      case r_prompt:
      case r_completion:
      case r_attempts:
      case r_judge_calls:
      case r_judge_hits:
      case r_judge_prompt:
      case r_judge_completion: return wrong("an integer", ec);
      case r_latency:
      case r_ttft: return wrong("a number", ec);
      default: return wrong("a string", ec);
      }
    case Ctx::resumed: return wrong(f.field == 1 ? "an integer" : "a string", ec);
    default: return wrong(f.ctx == Ctx::check && f.field == 1 ? "true or false" : "a string", ec);
    }
  }

  bool close(bool object, std::size_t n, ec_t& ec) {
    Frame f = stack_.back();
    stack_.pop_back();
    hashes_.resize(f.hashes);
    if (f.ctx == Ctx::runs) last_runs_ = f.count;
    if (f.ctx == Ctx::config) {
      if (object)
        config_.push_object(n);
      else
        config_.push_array(n);
      if (stack_.back().ctx != Ctx::config) report.config = config_.release();
      return true;
    }
    const Fields& fields = *f.fields;
    if (!fields.names.empty()) {
      const std::uint32_t all = (1u << fields.names.size()) - 1;
      const std::uint32_t missing = all & ~fields.optional & ~f.seen;
      if (missing != 0) {
        const std::size_t i = static_cast<std::size_t>(__builtin_ctz(missing));
        if (f.ctx == Ctx::top && i == t_schema)
          return fail(where_ + ": missing field \"schema\"; this gate reads " + k_schema, ec);
        stack_.push_back(f); // so that place() names the object
        std::string at = place();
        stack_.pop_back();
        return fail(at + ": missing field \"" + std::string(fields.names[i]) + "\"", ec);
      }
    }
    // The input fields come together: a file with one of them was edited.
    constexpr std::uint32_t k_input_bits = 0x7u << k_input;
    if (f.ctx == Ctx::task && (f.seen & k_input_bits) != 0 && (f.seen & k_input_bits) != k_input_bits) {
      stack_.push_back(f);
      std::string at = place();
      stack_.pop_back();
      return fail(at + ": \"input\", \"input_truncated\" and \"input_sha256\" go together", ec);
    }
    if (f.ctx == Ctx::run) {
      stack_.push_back(f); // so that place() names the run
      const bool ok = possible(run(), ec);
      stack_.pop_back();
      if (!ok) return false;
      keep_details(run());
    }
    return true;
  }

  void keep_details(results::Run& r) {
    if (details_ || !r.passed) {
      r.checks.assign(std::make_move_iterator(checks_.begin()), std::make_move_iterator(checks_.end()));
      return;
    }
    std::string().swap(r.answer);
  }

  // METRICS.md: a run passes when every check holds, and an errored run
  // never passes. A file that says otherwise was edited or is corrupt.
  bool possible(const results::Run& r, ec_t& ec) {
    if (r.passed && r.errored())
      return fail(place() + ": \"passed\" is true but the run errored (" + shown(r.error) + ")", ec);
    if (r.passed)
      for (const auto& c : checks_)
        if (!c.passed)
          return fail(place() + ": \"passed\" is true but check " + shown(c.label) + " failed", ec);
    return true;
  }
};

} // namespace gate::report::detail
