#include <gate/agent/checks.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <map>

#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::agent {

namespace {

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    std::size_t nl = s.find('\n');
    out.push_back(s.substr(0, nl));
    s.remove_prefix(nl == std::string_view::npos ? s.size() : nl + 1);
  }
  return out;
}

// A path or value from the run, quoted and short for a detail line.
std::string shown(std::string_view s) { return quote_excerpt(redact(s), 120); }

std::string names(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + v[i];
  return out + "]";
}

// A file of the final tree, not through a symlink; nullptr otherwise, with
// `why` ("it does not exist") to follow the caller's "expected ...; ".
const std::string* file_of(const CheckContext& ctx, const std::string& path, std::string& why) {
  auto it = ctx.final->find(path);
  if (it == ctx.final->end()) {
    why = "it does not exist";
    return nullptr;
  }
  if (it->second.link) {
    why = "it is a symlink (checks do not follow symlinks)";
    return nullptr;
  }
  return &it->second.content;
}

std::string failure(const check::Check& c, const CheckContext& ctx, bool& errored) {
  std::string why;
  using check::Type;
  switch (c.type) {
  case Type::exit_code: {
    const int want = static_cast<int>(c.number);
    if (ctx.process->exit_code == want) return "";
    const std::string expected = "expected exit code " + std::to_string(want) + "; the command ";
    if (ctx.process->exit_code < 0)
      return expected + "was killed by signal " + std::to_string(ctx.process->signal);
    return expected + "exited with " + std::to_string(ctx.process->exit_code);
  }
  case Type::stdout_text: {
    check::Result r = check::evaluate(*c.inner, ctx.process->out, "stdout");
    errored = r.errored;
    return r.passed ? "" : r.detail;
  }
  case Type::file_exists: {
    if (ctx.final->contains(c.path)) return "";
    const std::string dir = c.path + "/";
    for (const auto& [p, e] : *ctx.final)
      if (p.starts_with(dir)) return "";
    return "expected " + shown(c.path) + " to exist; it does not";
  }
  case Type::file_contains: {
    const std::string expected =
        "expected " + shown(c.path) + " to contain " + shown(c.values.front()) + "; ";
    const std::string* text = file_of(ctx, c.path, why);
    if (text == nullptr) return expected + why;
    if (text->find(c.values.front()) != std::string::npos) return "";
    return expected + "the file is " + shown(*text);
  }
  case Type::file_json: {
    const std::string* text = file_of(ctx, c.path, why);
    if (text == nullptr) return "expected " + shown(c.path) + " to be JSON; " + why;
    boost::system::error_code ec;
    boost::json::parse_options opts;
    opts.max_depth = 64;
    boost::json::value doc = boost::json::parse(*text, ec, {}, opts);
    if (ec) return "expected " + shown(c.path) + " to be JSON; it is not (" + ec.message() + ")";
    std::string f = check::json_paths_failure(c, doc);
    return f.empty() ? "" : shown(c.path) + ": " + f;
  }
  case Type::command: {
    ProcessSpec spec;
    spec.argv = c.argv;
    spec.cwd = ctx.work;
    spec.env = ctx.env;
    spec.timeout_s = c.timeout_s;
    spec.stop = ctx.stop;
    ProcessResult r = run_process(spec);
    if (!r.started) {
      errored = true;
      return r.start_error;
    }
    const std::string expected = "expected " + names(c.argv) + " to exit 0; it ";
    if (r.timed_out)
      return expected + "timed out after " + std::to_string(static_cast<int>(c.timeout_s)) + " s";
    if (r.exit_code == 0) return "";
    std::string tail = r.err.empty() ? r.out : r.err;
    if (tail.size() > 200) tail = tail.substr(tail.size() - 200);
    return expected +
           (r.exit_code < 0 ? "was killed by signal " + std::to_string(r.signal)
                            : "exited with " + std::to_string(r.exit_code)) +
           (tail.empty() ? "" : ": " + shown(tail));
  }
  case Type::diff_size: {
    std::size_t n = 0;
    for (const auto& p : changed_paths(*ctx.fixture, *ctx.final)) {
      auto a = ctx.fixture->find(p), b = ctx.final->find(p);
      const bool link =
          (a != ctx.fixture->end() && a->second.link) || (b != ctx.final->end() && b->second.link);
      n += link ? 1
                : changed_lines(a == ctx.fixture->end() ? std::string_view() : a->second.content,
                                b == ctx.final->end() ? std::string_view() : b->second.content);
    }
    if (static_cast<double>(n) <= c.number) return "";
    return "expected at most " + std::to_string(static_cast<long long>(c.number)) + " changed lines; " +
           std::to_string(n) + " changed";
  }
  case Type::file_scope: {
    std::vector<std::string> outside;
    for (const auto& p : changed_paths(*ctx.fixture, *ctx.final))
      if (std::none_of(c.values.begin(), c.values.end(),
                       [&](const std::string& g) { return glob_match(g, p); }))
        outside.push_back(p);
    if (outside.empty()) return "";
    std::string list;
    for (std::size_t i = 0; i < outside.size() && i < 5; ++i)
      list += (i ? ", " : "") + shown(outside[i]);
    if (outside.size() > 5) list += ", ...";
    return "expected changes only in " + names(c.values) + "; " + std::to_string(outside.size()) +
           " path(s) changed outside: " + list;
  }
  case Type::tool_sequence: {
    std::vector<std::string> got;
    for (const auto& tc : *ctx.tools)
      got.push_back(tc.name);
    return check::order_failure(c.mode, c.values, got);
  }
  case Type::final_state: {
    const std::string* text = file_of(ctx, c.path, why);
    if (text == nullptr)
      return "expected " + shown(c.path) + " to have sha256 " + c.values.front() + "; " + why;
    std::string got = sha256_hex(*text);
    return got == c.values.front()
               ? ""
               : "expected " + shown(c.path) + " to have sha256 " + c.values.front() + "; it has " + got;
  }
  default: break;
  }
  // A text check on an agent case applies to its stdout.
  check::Result r = check::evaluate(c, ctx.process->out, "stdout");
  errored = r.errored;
  return r.passed ? "" : r.detail;
}

} // namespace

std::size_t changed_lines(std::string_view a, std::string_view b) {
  const auto la = lines_of(a), lb = lines_of(b);
  const std::size_t n = la.size(), m = lb.size();
  if (n == 0 || m == 0) return n + m;
  if (n * m > std::size_t{25'000'000}) {
    std::map<std::string_view, long> count;
    for (auto l : la)
      ++count[l];
    for (auto l : lb)
      --count[l];
    std::size_t diff = 0;
    for (const auto& [l, k] : count)
      diff += static_cast<std::size_t>(k < 0 ? -k : k);
    return diff;
  }
  std::vector<std::size_t> prev(m + 1, 0), cur(m + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j)
      cur[j] = la[i - 1] == lb[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    std::swap(prev, cur);
  }
  return n + m - 2 * prev[m];
}

std::vector<std::string> changed_paths(const Tree& before, const Tree& after) {
  std::vector<std::string> out;
  auto a = before.begin(), b = after.begin();
  while (a != before.end() || b != after.end()) {
    if (b == after.end() || (a != before.end() && a->first < b->first)) {
      out.push_back((a++)->first);
    } else if (a == before.end() || b->first < a->first) {
      out.push_back((b++)->first);
    } else {
      if (a->second.link != b->second.link || a->second.content != b->second.content) out.push_back(a->first);
      ++a;
      ++b;
    }
  }
  return out;
}

check::Result evaluate(const check::Check& c, const CheckContext& ctx) {
  check::Result r;
  r.label = c.label;
  try {
    bool errored = false;
    r.detail = failure(c, ctx, errored);
    r.errored = errored;
    r.passed = r.detail.empty() && !errored;
  } catch (const std::exception& e) {
    r.errored = true;
    r.detail = "could not evaluate: " + redact(e.what());
  }
  return r;
}

} // namespace gate::agent
