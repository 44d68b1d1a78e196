#include <gate/util/redact.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <memory>
#include <mutex>
#include <vector>

#include <gate/util/redact_views.hpp>

namespace gate {

namespace {

using detail::Span;

// One text that gives a secret away. A short form (under 8 characters) is
// only a match where it stands alone: found inside a longer word it is far
// more likely ordinary text, and blanking it would corrupt answers and ids.
struct Form {
  std::string text;
  bool alone_only = false;
};
using Forms = std::vector<Form>;

constexpr std::size_t k_anywhere = 8;

// Every string gate writes is read against the set, so readers take no lock
// and no reference count: a registration publishes a new, immutable set
// and keeps the ones it replaced (a handful per process, registered as keys
// and tokens are read), so a reader's set is never freed under it.
std::mutex g_writers;                             // orders registrations
std::vector<std::unique_ptr<const Forms>> g_sets; // every set published; guarded by g_writers
std::atomic<const Forms*> g_forms{nullptr};       // the newest set; null until the first secret

const Forms* forms() { return g_forms.load(std::memory_order_acquire); }

// Characters of the words a key or a base64 text is written in.
bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '+' || c == '/';
}

bool stands_alone(std::string_view text, std::size_t pos, std::size_t len) {
  return (pos == 0 || !word_char(text[pos - 1])) && (pos + len == text.size() || !word_char(text[pos + len]));
}

void find_forms(const Forms& forms, std::string_view text, const std::function<void(Span)>& hit) {
  for (const Form& f : forms)
    for (std::size_t pos = text.find(f.text); pos != std::string_view::npos; pos = text.find(f.text, pos + 1))
      if (!f.alone_only || stands_alone(text, pos, f.text.size())) hit({pos, pos + f.text.size()});
}

// Every span of `text` that is, or decodes to, a part of a secret form: the
// raw bytes, the text with its JSON escapes decoded, and a stream's deltas
// joined across events. Sorted, overlaps merged.
std::vector<Span> secret_spans(std::string_view text) {
  const Forms* all = forms();
  if (all == nullptr) return {};
  std::vector<Span> spans;
  auto hit = [&spans](Span s) { spans.push_back(s); };
  auto find = [&all](std::string_view t, const std::function<void(Span)>& h) { find_forms(*all, t, h); };
  find(text, hit);
  detail::find_unescaped(text, find, hit);
  detail::find_across_events(text, find, hit);
  std::sort(spans.begin(), spans.end(), [](Span a, Span b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (Span s : spans) {
    if (!merged.empty() && s.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, s.end);
    else
      merged.push_back(s);
  }
  return merged;
}

// The characters of base64(p + secret + q), for any p of `offset` bytes
// (mod 3) and any q, that depend on the secret's bits alone.
std::string base64_stem(std::string_view secret, std::size_t offset) {
  std::string b64 = base64_encode(std::string(offset, '\0') + std::string(secret));
  const std::size_t first = (8 * offset + 5) / 6;
  const std::size_t end = 8 * (offset + secret.size()) / 6;
  return end > first ? b64.substr(first, end - first) : std::string();
}

void add_form(Forms& forms, std::string text) {
  if (text.empty()) return;
  for (const Form& f : forms)
    if (f.text == text) return;
  const bool alone_only = text.size() < k_anywhere;
  forms.push_back({std::move(text), alone_only});
}

} // namespace

std::string base64_encode(std::string_view data) {
  static constexpr char k_table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned v = (unsigned char)data[i] << 16 | (unsigned char)data[i + 1] << 8 | (unsigned char)data[i + 2];
    out += k_table[v >> 18 & 63];
    out += k_table[v >> 12 & 63];
    out += k_table[v >> 6 & 63];
    out += k_table[v & 63];
  }
  if (i + 1 == data.size()) {
    unsigned v = (unsigned char)data[i] << 16;
    out += k_table[v >> 18 & 63];
    out += k_table[v >> 12 & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    unsigned v = (unsigned char)data[i] << 16 | (unsigned char)data[i + 1] << 8;
    out += k_table[v >> 18 & 63];
    out += k_table[v >> 12 & 63];
    out += k_table[v >> 6 & 63];
    out += '=';
  }
  return out;
}

void register_secret(std::string_view secret) {
  if (secret.empty()) return;
  std::lock_guard lock(g_writers);
  Forms next = g_sets.empty() ? Forms() : *g_sets.back();
  add_form(next, std::string(secret));
  if (secret.size() >= 16) add_form(next, std::string(secret.substr(secret.size() - 8)));
  // Base64 of exactly the secret (Basic auth), and of any text holding it at
  // each of the three byte alignments, in both alphabets.
  add_form(next, base64_encode(secret));
  for (std::size_t offset = 0; offset < 3; ++offset) {
    std::string stem = base64_stem(secret, offset);
    std::string url = stem;
    std::replace(url.begin(), url.end(), '+', '-');
    std::replace(url.begin(), url.end(), '/', '_');
    add_form(next, std::move(stem));
    add_form(next, std::move(url));
  }
  if (!g_sets.empty() && next.size() == g_sets.back()->size()) return; // known already
  // Longest first: where two forms overlap the longer one decides the span.
  std::stable_sort(next.begin(), next.end(),
                   [](const Form& a, const Form& b) { return a.text.size() > b.text.size(); });
  g_sets.push_back(std::make_unique<const Forms>(std::move(next)));
  g_forms.store(g_sets.back().get(), std::memory_order_release);
}

std::string redact(std::string_view text) {
  if (forms() == nullptr) return std::string(text);
  std::vector<Span> spans = secret_spans(text);
  if (spans.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  for (Span s : spans) {
    out.append(text.substr(at, s.begin - at));
    out.append(k_redacted);
    at = s.end;
  }
  out.append(text.substr(at));
  return out;
}

bool contains_secret(std::string_view text) { return forms() != nullptr && !secret_spans(text).empty(); }

} // namespace gate
