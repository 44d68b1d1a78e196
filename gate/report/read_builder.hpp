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

#include <gate/report/layout.hpp>
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

  Builder(std::string where, const ReadOptions& o)
      : where_(std::move(where)), details_(o.details), header_only_(o.header_only) {}
  // Reads one described struct (`table`, at `root`) instead of a report.
  Builder(std::string where, const Table& table, void* root)
      : where_(std::move(where)), root_table_(&table), root_(root) {}

  Report report;
  std::string problem;  // a syntax-level fault, reported with its position
  std::string semantic; // a whole message, without position
  bool saw_schema = false;
  bool stopped = false; // header_only: the header was read whole, the rest not

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
  bool header_only_ = false;
  const Table* root_table_ = nullptr;
  void* root_ = nullptr;
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
      // Messages name a task by its id, which is what a reader can search
      // for, once it is known.
      case Ctx::task:
        out = where_ + ": task " +
              (report.tasks.back().id.empty() ? std::to_string(stack_[i - 1].count - 1)
                                              : shown(report.tasks.back().id));
        break;
      case Ctx::run: out += " run " + std::to_string(stack_[i - 1].count - 1); break;
      case Ctx::object:
        out += f.table->place;
        if (f.table->indexed && i > 0) out += std::to_string(stack_[i - 1].count - 1);
        break;
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
    const auto& names = f.table->names;
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
    if (header_only_ && f.ctx == Ctx::top && f.field == t_tasks) {
      // The header ends here; what it should have held before, it must have.
      if (!all_required(bit - 1, ec)) return false;
      stopped = true;
      ec = bj::error::syntax;
      return false;
    }
    return true;
  }

  bool wrong(const char* expected, ec_t& ec) {
    const Frame& f = stack_.back();
    return fail(place() + ": field \"" + std::string(f.table->names[f.field]) + "\" must be " + expected, ec);
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
    case Ctx::runs: return fail(place() + ": expected a JSON object in \"runs\"", ec);
    case Ctx::list:
      return fail(place() + ": expected a JSON object in \"" + std::string(f.via->name) + "\"", ec);
    default: return field_value(f, v, ec);
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

  // A described field's scalar, read by its codec.
  bool described(Frame& f, const Scalar& v, ec_t& ec) {
    const FieldReader& r = f.table->fields[static_cast<std::size_t>(f.field)];
    if (r.scalar == nullptr) return wrong(r.expected, ec);
    const char* problem = r.scalar(f.obj, v);
    if (problem == nullptr) return true;
    if (problem == k_too_large)
      return fail(place() + ": field \"" + std::string(r.name) + "\" is too large", ec);
    return wrong(problem, ec);
  }

  static constexpr int t_schema = index_of<Report>("schema");
  static constexpr int t_config = index_of<Report>("config");
  static constexpr int t_route = index_of<Report>("route");
  static constexpr int t_runs_route = index_of<Report>("runs_route");
  static constexpr int t_stats = index_of<Report>("stats");
  static constexpr int t_tasks = index_of<Report>("tasks");
  static constexpr int k_id = index_of<results::Task>("id");
  static constexpr int k_input = index_of<results::Task>("input");
  static constexpr int k_stats = index_of<results::Task>("stats");
  static constexpr int k_runs = index_of<results::Task>("runs");
  static constexpr int r_checks = index_of<results::Run>("checks");
  static constexpr int r_answer = index_of<results::Run>("answer");
  static constexpr int r_route = index_of<results::Run>("route");

  bool field_value(Frame& f, const Scalar& v, ec_t& ec) {
    switch (f.ctx) {
    case Ctx::top:
      if (f.field == t_schema) {
        if (v.kind != Scalar::string) return wrong("a string", ec);
        if (v.text != k_schema)
          return fail(where_ + ": unknown schema " + shown(v.text) + "; this gate reads " + k_schema, ec);
        saw_schema = true;
        return true;
      }
      if (f.field == t_config) {
        if (v.kind != Scalar::null) return wrong("an object or null", ec);
        report.config = nullptr;
        return true;
      }
      return described(f, v, ec);
    case Ctx::task:
      if (!described(f, v, ec)) return false;
      if (f.field == k_id && task().id.empty()) return fail(place() + ": field \"id\" must not be empty", ec);
      return true;
    case Ctx::run:
      // A passed run's answer is dropped at its end without details
      // (keep_details): "passed" comes first in files gate wrote, so the
      // text need not be copied at all.
      if (f.field == r_answer && !details_ && run().passed)
        return v.kind == Scalar::string ? true : wrong("a string", ec);
      return described(f, v, ec);
    case Ctx::object: return described(f, v, ec);
    default: return true;
    }
  }

  void push(Ctx c, const Table* t = nullptr, void* obj = nullptr, const FieldReader* via = nullptr) {
    stack_.push_back({c, t, -1, 0, 0, hashes_.size(), 0, obj, via});
  }

  // An object or array begins: decide what it is from where it stands.
  bool open(bool object, ec_t& ec) {
    if (stack_.empty()) {
      if (!object) return fail(where_ + ": expected a JSON object", ec);
      if (root_table_ != nullptr)
        push(Ctx::object, root_table_, root_);
      else
        push(Ctx::top, &table_of<Report>(), &report);
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
      push(Ctx::task, &table_of<results::Task>(), &task());
      return true;
    case Ctx::runs:
      if (!object) return fail(place() + ": expected a JSON object in \"runs\"", ec);
      ++f.count;
      task().runs.emplace_back();
      checks_.clear();
      push(Ctx::run, &table_of<results::Run>(), &run());
      return true;
    case Ctx::list:
      if (!object)
        return fail(place() + ": expected a JSON object in \"" + std::string(f.via->name) + "\"", ec);
      ++f.count;
      push(Ctx::object, f.table, f.via->append(f.obj));
      return true;
    default: break;
    }
    // A field's value: which fields are containers, and of which kind.
    auto expect = [&](bool want_object, Ctx next, const char* what) {
      if (object != want_object) return wrong(what, ec);
      push(next);
      return true;
    };
    const FieldReader& r = f.table->fields[static_cast<std::size_t>(f.field)];
    switch (f.ctx) {
    case Ctx::top:
      if (f.field == t_route) {
        route_ = &report.route;
        return expect(true, Ctx::route, "an object");
      }
      if (f.field == t_runs_route) {
        route_ = &report.runs_route;
        return expect(true, Ctx::route, "an object");
      }
      if (f.field == t_stats) return expect(true, Ctx::skip, "an object");
      if (f.field == t_tasks) return expect(false, Ctx::tasks, "an array");
      if (f.field == t_config) {
        if (!object) return wrong("an object or null", ec);
        config_.reset();
        push(Ctx::config);
        return true;
      }
      break;
    case Ctx::task:
      if (f.field == k_stats) return expect(true, Ctx::skip, "an object");
      if (f.field == k_runs) return expect(false, Ctx::runs, "an array");
      break;
    case Ctx::run:
      if (f.field == r_route) {
        route_ = &run().route;
        return expect(true, Ctx::route, "an object");
      }
      // Read aside and moved into the run at its end only when kept.
      if (f.field == r_checks) {
        if (object) return wrong(r.expected, ec);
        push(Ctx::list, r.element, &checks_, &r);
        return true;
      }
      break;
    default: break;
    }
    return described_container(f, r, object, ec);
  }

  // A described field whose value is an array or object: a list of
  // described structs, or one.
  bool described_container(Frame& f, const FieldReader& r, bool object, ec_t& ec) {
    if (r.open == nullptr || object == r.list) return wrong(r.expected, ec);
    if (r.list)
      push(Ctx::list, r.element, r.open(f.obj), &r);
    else
      push(Ctx::object, r.element, r.open(f.obj));
    return true;
  }

  // Fails on the first required field among `among` (bits in description
  // order) that the object on top of the stack did not have.
  bool all_required(std::uint32_t among, ec_t& ec) {
    const Frame& f = stack_.back();
    const Table& fields = *f.table;
    const std::uint32_t all = fields.names.size() == 32 ? ~0u : (1u << fields.names.size()) - 1;
    const std::uint32_t missing = all & among & ~fields.optional & ~f.seen;
    if (missing == 0) return true;
    const std::size_t i = static_cast<std::size_t>(__builtin_ctz(missing));
    if (f.ctx == Ctx::top && i == t_schema)
      return fail(where_ + ": missing field \"schema\"; this gate reads " + k_schema, ec);
    return fail(place() + ": missing field \"" + std::string(fields.names[i]) + "\"", ec);
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
    if (f.table != nullptr && f.ctx != Ctx::list) {
      stack_.push_back(f); // so that place() names the object
      const bool ok = all_required(~0u, ec);
      stack_.pop_back();
      if (!ok) return false;
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
