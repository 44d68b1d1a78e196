#include <gate/report/report.hpp>

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include <gate/report/read_builder.hpp>
#include <gate/util/error.hpp>
#include <gate/util/fd.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

// The reader is one pass of Boost.JSON's SAX parser straight into the
// Report: no DOM of the whole file, no second pass. A 100,000-task
// baseline is read in chunks, so memory holds the runs, not the text.
// The strictness rules live with the handler, in read_builder.hpp.
namespace gate::report {

namespace {

using detail::Builder;
using detail::shown;
namespace bj = boost::json;
using ec_t = boost::system::error_code;

// Feeds the parser and turns its failure into an Error(bad_input): the
// builder's own message, or a syntax fault at its line and column, which
// `locate` finds from the byte offset (only on this error path).
class Reader {
public:
  Reader(const std::string& where, const ReadOptions& o) : where_(where), parser_(options(), where, o) {}
  Reader(const std::string& where, const detail::Table& table, void* root)
      : where_(where), parser_(options(), where, table, root) {}

  // Feeds one piece; after an error the parser takes no more (failed()).
  void feed(const char* data, std::size_t size, bool more) {
    std::size_t used = parser_.write_some(more, data, size, ec_);
    offset_ += used;
    if (parser_.handler().stopped) {
      ec_ = {};
      done_ = true;
      return;
    }
    if (!ec_ && !more && used < size) ec_ = bj::error::extra_data;
  }
  bool failed() const { return static_cast<bool>(ec_); }
  // The header was read whole (ReadOptions::header_only) and nothing more
  // is wanted.
  bool done() const { return done_; }
  template <class Locate> [[noreturn]] void raise(Locate locate) {
    const Builder& b = parser_.handler();
    if (!b.semantic.empty()) throw_bad_input(b.semantic);
    throw_bad_input(locate(offset_, b.problem.empty() ? json::describe(ec_) : b.problem));
  }
  Report finish() {
    Report r = std::move(parser_.handler().report);
    if (done_) return r;
    auto by_id = [](const auto& a, const auto& b) { return a.id < b.id; };
    if (!std::is_sorted(r.tasks.begin(), r.tasks.end(), by_id)) // gate writes them sorted
      std::sort(r.tasks.begin(), r.tasks.end(), by_id);
    for (std::size_t i = 1; i < r.tasks.size(); ++i)
      if (r.tasks[i].id == r.tasks[i - 1].id)
        throw_bad_input(where_ + ": duplicate task id " + shown(r.tasks[i].id));
    // A run's route is written only where it differs from the shared one;
    // a task whose runs mix both gets the shared route spelled out, so that
    // comparing routes within the task (route pollution) sees real values.
    // Elsewhere an empty route stands for it (route_of).
    const results::Route& shared = r.runs_route.empty() ? r.route : r.runs_route;
    for (auto& t : r.tasks) {
      const bool any =
          std::any_of(t.runs.begin(), t.runs.end(), [](const auto& x) { return !x.route.empty(); });
      if (!any) continue;
      for (auto& run : t.runs)
        if (run.route.empty()) run.route = shared;
    }
    // The runs are the source of truth; the stored numbers are for readers.
    compute(r, options_from_config(r.config, where_));
    return r;
  }

private:
  static bj::parse_options options() {
    bj::parse_options o;
    o.max_depth = 64;
    o.allow_invalid_utf8 = false;
    return o;
  }
  std::string where_;
  bj::basic_parser<Builder> parser_;
  ec_t ec_;
  std::size_t offset_ = 0;
  bool done_ = false;
};

} // namespace

Report from_json(std::string_view text, const std::string& where, const ReadOptions& o) {
  Reader reader(where, o);
  reader.feed(text.data(), text.size(), false);
  if (reader.failed())
    reader.raise([&](std::size_t offset, const std::string& what) {
      return json::located_at(text, offset, where, 1, what);
    });
  return reader.finish();
}

void detail::read_into(std::string_view text, const std::string& where, const Table& table, void* obj) {
  Reader reader(where, table, obj);
  reader.feed(text.data(), text.size(), false);
  if (reader.failed())
    reader.raise([&](std::size_t offset, const std::string& what) {
      return json::located_at(text, offset, where, 1, what);
    });
}

Report read(const std::filesystem::path& file, const ReadOptions& o) {
  const std::string where = file.string();
  const Fd in(open_input(file));
  struct stat st {};
  const bool regular = fstat(in.get(), &st) == 0 && S_ISREG(st.st_mode);
  Reader reader(where, o);
  // Read in pieces, which the streaming reader takes as they come: reading
  // the whole file first, or mapping it, measured no faster and would hold
  // all of it at once. A header-only read stops after the header.
  {
    std::vector<char> chunk(1 << 20);
    std::size_t total = 0;
    while (!reader.failed() && !reader.done()) {
      const ssize_t got = ::read(in.get(), chunk.data(), chunk.size());
      if (got < 0) {
        if (errno == EINTR) continue;
        throw Error(Exit::bad_input, where + ": read error: " + std::strerror(errno));
      }
      total += static_cast<std::size_t>(got);
      // A regular file is read to its end whatever its size, as before; a
      // pipe's size is not known beforehand, so its limit is counted.
      if (!regular && total > k_max_input_bytes)
        throw_bad_input(where + ": larger than " + byte_limit_text(k_max_input_bytes) +
                        ", the limit for a report");
      const bool more = got > 0;
      reader.feed(chunk.data(), static_cast<std::size_t>(got), more);
      if (!more) break;
    }
  }
  if (reader.failed())
    reader.raise([&](std::size_t offset, const std::string& what) {
      // Count lines up to the fault again: only ever on this error path,
      // and only from a file, since what a pipe gave is gone.
      if (!regular) return where + ": byte " + std::to_string(offset + 1) + ": " + what;
      const std::string text = read_file(file, std::numeric_limits<std::size_t>::max());
      return json::located_at(std::string_view(text).substr(0, offset), offset, where, 1, what);
    });
  return reader.finish();
}

bool complete_on_disk(const std::filesystem::path& file) {
  ReadOptions header;
  header.header_only = true;
  try {
    return read(file, header).complete;
  } catch (const Error&) {
    return false;
  }
}

} // namespace gate::report
