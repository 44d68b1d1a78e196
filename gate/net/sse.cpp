#include <gate/net/sse.hpp>

#include <algorithm>
#include <iterator>
#include <limits>

#include <gate/util/text.hpp>

namespace gate::net {

namespace {

constexpr std::string_view k_bom = "\xEF\xBB\xBF";

// Digits only, as the spec requires; a value that does not fit is ignored
// like any other invalid value rather than wrapped.
std::optional<std::int64_t> parse_retry(std::string_view v) {
  if (v.empty()) return std::nullopt;
  std::int64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    int d = c - '0';
    if (n > (std::numeric_limits<std::int64_t>::max() - d) / 10) return std::nullopt;
    n = n * 10 + d;
  }
  return n;
}

} // namespace

SseDecoder::SseDecoder(SseLimits limits) : limits_(limits) {}

void SseDecoder::fail(const std::string& message) {
  error_ = message;
  line_.clear();
  line_.shrink_to_fit();
  data_.clear();
  data_.shrink_to_fit();
}

bool SseDecoder::append_line(std::string_view piece) {
  if (line_.size() + piece.size() > limits_.max_line_bytes) {
    fail("SSE line exceeds " + std::to_string(limits_.max_line_bytes) + " bytes");
    return false;
  }
  line_.append(piece);
  return true;
}

std::vector<SseEvent> SseDecoder::feed(std::string_view bytes) {
  std::vector<SseEvent> out;
  if (failed()) return out;
  if (!bom_done_) {
    // The BOM may itself arrive split; hold the first bytes until it is
    // either complete or ruled out.
    std::size_t take = std::min(bytes.size(), k_bom.size() - bom_probe_.size());
    bom_probe_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (k_bom.substr(0, bom_probe_.size()) == bom_probe_ && bom_probe_.size() < k_bom.size()) return out;
    bom_done_ = true;
    std::string probe = std::move(bom_probe_);
    bom_probe_.clear();
    if (probe != k_bom) {
      auto events = feed(probe);
      out.insert(out.end(), std::make_move_iterator(events.begin()), std::make_move_iterator(events.end()));
      if (failed()) return out;
    }
  }
  while (!bytes.empty()) {
    if (after_cr_) {
      after_cr_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    std::size_t eol = bytes.find_first_of("\r\n");
    if (!append_line(bytes.substr(0, eol))) return out;
    if (eol == std::string_view::npos) break;
    after_cr_ = bytes[eol] == '\r';
    bytes.remove_prefix(eol + 1);
    take_line(out);
    if (failed()) return out;
  }
  return out;
}

void SseDecoder::take_line(std::vector<SseEvent>& out) {
  if (line_.empty()) {
    dispatch(out);
    return;
  }
  std::string line = to_valid_utf8(line_, Utf8Repair::maximal_subpart);
  line_.clear();
  if (line.front() == ':') return; // a comment, e.g. a keep-alive ": ping"
  std::string_view view(line);
  std::size_t colon = view.find(':');
  if (colon == std::string_view::npos) {
    process_field(view, "");
    return;
  }
  std::string_view value = view.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  process_field(view.substr(0, colon), value);
}

void SseDecoder::process_field(std::string_view name, std::string_view value) {
  if (name == "event") {
    event_type_.assign(value);
  } else if (name == "data") {
    data_.append(value);
    data_ += '\n';
  } else if (name == "id") {
    // An id with NUL is ignored so it cannot truncate a C string later.
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  } else if (name == "retry") {
    if (auto ms = parse_retry(value)) retry_ms_ = ms;
  }
  // Any other field name is ignored, as the spec says.
  if (data_.size() + event_type_.size() > limits_.max_event_bytes)
    fail("SSE event exceeds " + std::to_string(limits_.max_event_bytes) + " bytes");
}

void SseDecoder::dispatch(std::vector<SseEvent>& out) {
  if (data_.empty()) {
    // No data: nothing is dispatched, but the event type is reset.
    event_type_.clear();
    return;
  }
  SseEvent e;
  data_.pop_back(); // the "\n" after the last data line
  e.data = std::move(data_);
  if (!event_type_.empty()) e.event = std::move(event_type_);
  e.id = last_id_;
  e.retry_ms = retry_ms_;
  data_.clear();
  event_type_.clear();
  out.push_back(std::move(e));
}

bool SseDecoder::finish() {
  bool pending = !bom_probe_.empty() || !line_.empty() || !data_.empty() || !event_type_.empty();
  bom_probe_.clear();
  bom_done_ = true;
  line_.clear();
  data_.clear();
  event_type_.clear();
  after_cr_ = false;
  return pending;
}

} // namespace gate::net
