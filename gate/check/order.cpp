#include <gate/check/check.hpp>

#include <algorithm>

#include <gate/util/redact.hpp>

namespace gate::check {

namespace {

std::string names(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + v[i];
  return out + "]";
}

// `want` appears in `got` in order, not necessarily adjacent.
bool subsequence(const std::vector<std::string>& want, const std::vector<std::string>& got) {
  std::size_t i = 0;
  for (const auto& g : got)
    if (i < want.size() && g == want[i]) ++i;
  return i == want.size();
}

} // namespace

std::string order_failure(Order mode, const std::vector<std::string>& want,
                          const std::vector<std::string>& got) {
  bool ok = false;
  const char* verb = "";
  switch (mode) {
  case Order::equals:
    ok = got == want;
    verb = "equal ";
    break;
  case Order::starts_with:
    ok = got.size() >= want.size() && std::equal(want.begin(), want.end(), got.begin());
    verb = "start with ";
    break;
  case Order::contains:
    ok = subsequence(want, got);
    verb = "contain (in order) ";
    break;
  }
  if (ok) return "";
  return std::string("expected tool calls to ") + verb + names(want) + "; they were " + redact(names(got));
}

} // namespace gate::check
