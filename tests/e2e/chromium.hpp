#pragma once
// Headless Chromium for the end-to-end tests that check a page in a
// browser: the HTML verdict (test_html_chromium.cpp) and the Mermaid chart
// of the PR Markdown (test_mermaid_chromium.cpp).

#include <filesystem>
#include <string>

namespace gate::e2e {

// GATE_CHROMIUM overrides the path, for machines that install it elsewhere.
std::filesystem::path chromium();

// True (with a message) when GATE_SKIP_BROWSER=1 asks to skip browser tests.
bool skip_browser();

// Fails the test when Chromium is not there, saying how to get it.
void require_chromium();

std::string percent_encode(const std::string& s, bool keep_slash);

// &, <, >, " as entities.
std::string html_text(const std::string& s);

struct Browser {
  int exit_code = -1;
  std::string dom;
  std::string log; // Chromium's stderr, with the page's console messages
};

// Loads file://html?query in headless Chromium and dumps the DOM after the
// page's scripts ran for `budget_ms` of virtual time. Runs Chromium in its
// own process group, stdout and stderr to files in `scratch`; the whole
// group is killed after the timeout and after exit (helpers Chromium leaves
// behind must not outlive the test).
Browser load(const std::filesystem::path& html, const std::string& query,
             const std::filesystem::path& scratch, int budget_ms = 2000);

} // namespace gate::e2e
