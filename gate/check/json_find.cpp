#include <gate/check/detail.hpp>

#include <boost/json.hpp>

// JSON objects inside text, found as promptfoo's contains-json finds them
// (its extractJsonObjects): from each `{`, braces are counted — strings
// not considered, as promptfoo does not — until they balance, the text
// ends or 100,000 characters pass; an unbalanced candidate is closed with
// the missing `}`s; one that parses is taken and the search goes on after
// it, one that does not is given up at its balance point. promptfoo parses
// leniently (js-yaml: unquoted keys, single quotes, // comments); gate
// parses JSON only.

namespace gate::check::detail {

namespace {

constexpr std::size_t k_max_candidate = 100'000; // promptfoo's maxJsonLength
// The bytes scanned in all, over every candidate: a megabyte of `{` would
// otherwise cost 10^11 steps. Beyond it the search stops, and says so.
constexpr std::size_t k_max_scanned = 32u << 20;
constexpr std::size_t k_max_depth = 64;

} // namespace

std::optional<boost::json::value> parse_json(std::string_view text) {
  boost::json::parse_options opts;
  opts.max_depth = k_max_depth;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(boost::json::string_view(text.data(), text.size()), ec, {}, opts);
  if (ec) return std::nullopt;
  return v;
}

std::vector<boost::json::value> json_objects_in(std::string_view text, bool& stopped) {
  std::vector<boost::json::value> found;
  std::size_t scanned = 0;
  stopped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    std::size_t open = 1, close = 0, j = i + 1;
    const std::size_t limit = std::min(text.size(), i + k_max_candidate);
    while (j < limit && open > close) {
      if (++scanned > k_max_scanned) {
        stopped = true;
        return found;
      }
      if (text[j] == '{') ++open;
      if (text[j] == '}') ++close;
      ++j;
      if (open != close && j != text.size() && j != i + k_max_candidate) continue;
      std::string candidate(text.substr(i, j - i));
      if (open > close) candidate.append(open - close, '}');
      if (auto v = parse_json(candidate); v && v->is_object()) {
        found.push_back(std::move(*v));
        i = j - 1;
        break;
      }
      if (open == close) break;
    }
  }
  return found;
}

std::string anywhere_failure(std::string_view answer, std::string_view subject,
                             const std::function<std::string(const boost::json::value&)>& holds) {
  bool stopped = false;
  const std::vector<boost::json::value> objects = json_objects_in(answer, stopped);
  const std::string bound = stopped ? " (the search stopped after 32 MiB of scanning)" : "";
  if (objects.empty())
    return "expected a JSON object in the text" + bound + "; " + what_came(subject, answer);
  std::string first;
  for (const auto& o : objects) {
    std::string why = holds(o);
    if (why.empty()) return {};
    if (first.empty()) first = std::move(why);
  }
  return "none of the " + std::to_string(objects.size()) + " JSON object" + (objects.size() == 1 ? "" : "s") +
         " in the text holds" + bound + "; the first: " + first;
}

} // namespace gate::check::detail
