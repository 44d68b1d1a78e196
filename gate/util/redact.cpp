#include <gate/util/redact.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace gate {

namespace {

std::mutex g_mutex;
std::vector<std::string> g_forms; // longest first
std::atomic<bool> g_any{false};

void add_form(std::string form) {
  if (form.size() < 8) return;
  for (const auto& f : g_forms)
    if (f == form) return;
  g_forms.push_back(std::move(form));
  std::sort(g_forms.begin(), g_forms.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
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
  std::lock_guard lock(g_mutex);
  add_form(std::string(secret));
  std::string b64 = base64_encode(secret);
  // The unpadded stem also matches when the secret sits inside a longer
  // base64 text at a 3-byte boundary.
  while (!b64.empty() && b64.back() == '=')
    b64.pop_back();
  if (b64.size() > 4) b64.resize(b64.size() - (secret.size() % 3 == 0 ? 0 : 1));
  add_form(b64);
  add_form(base64_encode("Bearer " + std::string(secret)));
  if (secret.size() >= 16) add_form(std::string(secret.substr(secret.size() - 8)));
  g_any = true;
}

std::string redact(std::string_view text) {
  if (!g_any) return std::string(text);
  std::lock_guard lock(g_mutex);
  std::string out(text);
  for (const auto& form : g_forms) {
    std::size_t pos = 0;
    while ((pos = out.find(form, pos)) != std::string::npos) {
      out.replace(pos, form.size(), k_redacted);
      pos += k_redacted.size();
    }
  }
  return out;
}

bool contains_secret(std::string_view text) {
  if (!g_any) return false;
  std::lock_guard lock(g_mutex);
  for (const auto& form : g_forms)
    if (text.find(form) != std::string_view::npos) return true;
  return false;
}

} // namespace gate
