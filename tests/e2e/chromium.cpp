#include "chromium.hpp"

#include <doctest.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "harness.hpp"

namespace gate::e2e {

namespace fs = std::filesystem;

namespace {
constexpr int k_browser_timeout_s = 90;
} // namespace

bool skip_browser() {
  const char* v = std::getenv("GATE_SKIP_BROWSER");
  if (v == nullptr || std::string(v) != "1") return false;
  gate::testing::skip_test("GATE_SKIP_BROWSER=1 is set; the HTML report is not checked in a browser");
  return true;
}

fs::path chromium() {
  const char* v = std::getenv("GATE_CHROMIUM");
  return v != nullptr && *v != '\0' ? fs::path(v) : fs::path("/usr/bin/chromium");
}

void require_chromium() {
  if (::access(chromium().c_str(), X_OK) != 0)
    FAIL("headless Chromium not found at " << chromium().string()
                                           << ": install it (Debian: apt-get install -y chromium), point "
                                              "GATE_CHROMIUM at it, or set GATE_SKIP_BROWSER=1 to skip");
}

std::string percent_encode(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Runs Chromium in its own process group, stdout and stderr to files in
// `scratch`; the whole group is killed after the timeout and after exit
// (helpers Chromium leaves behind must not outlive the test).
Browser load(const fs::path& html, const std::string& query, const fs::path& scratch, int budget_ms) {
  std::string url =
      "file://" + percent_encode(fs::absolute(html).string(), true) + (query.empty() ? "" : "?" + query);
  fs::path profile = scratch / "chromium-profile", out = scratch / "dom.html", err = scratch / "chromium.log";
  fs::create_directories(profile);
  std::vector<std::string> args = {chromium().string(),
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--no-first-run",
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--user-data-dir=" + profile.string(),
                                   "--virtual-time-budget=" + std::to_string(budget_ms),
                                   "--dump-dom",
                                   url};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  Browser b;
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(k_browser_timeout_s);
  bool done = false;
  while (!done) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      done = true;
    } else if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL("chromium did not finish within " << k_browser_timeout_s << " s loading " << url);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ::kill(-pid, SIGKILL); // stray helpers of the group, if any; ESRCH when none
  b.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  b.dom = slurp(out);
  b.log = slurp(err);
  return b;
}

std::string html_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

} // namespace gate::e2e
