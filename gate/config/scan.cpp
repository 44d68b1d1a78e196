#include <gate/config/keys.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <new>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <gate/util/error.hpp>
#include <gate/util/text.hpp>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GATE_HAS_ASAN 1
#endif
#endif
#ifndef GATE_HAS_ASAN
#define GATE_HAS_ASAN 0
#endif

namespace gate::config::detail {
namespace {

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC0 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  return 0;
}

// The child's exit codes.
constexpr int k_parsed = 0;     // yaml-cpp returned, with documents or its own exception
constexpr int k_no_memory = 3;  // bad_alloc under the memory limit
constexpr int k_exec_error = 4; // anything else thrown

// The CPU time yaml-cpp may take for `bytes` of text: a 1 MiB config parses
// in under a second, and a small file that loops stops in a quarter second.
std::uint64_t parse_cpu_us(std::size_t bytes) {
  return 250'000 + k_yaml_parse_cpu_us_per_mib * bytes / (std::uint64_t{1} << 20);
}

// The process's address space now, in bytes (0 when /proc cannot say).
std::uint64_t address_space_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  const bool read = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  const long page = sysconf(_SC_PAGESIZE);
  return read && page > 0 ? pages * static_cast<std::uint64_t>(page) : 0;
}

// Parses `text` in a forked child under parse_cpu_us() of CPU time and
// k_yaml_parse_memory of address space beyond what the process already
// holds (the child starts as a copy of a parent that may be large). yaml-cpp
// is deterministic, so a child that returns means the parent's own parse of
// the same text returns too; one that loops is killed.
int probe_in_child(const std::string& text) {
  [[maybe_unused]] const std::uint64_t held = address_space_bytes(); // not bounded under ASan, below
  const pid_t pid = fork();
  if (pid < 0) return k_parsed; // no process to spare: parse in place, as before the guard
  if (pid == 0) {
    // SIGPROF's default action ends the child; RLIMIT_CPU is a backstop.
    const std::uint64_t us = parse_cpu_us(text.size());
    itimerval timer{};
    timer.it_value.tv_sec = static_cast<time_t>(us / 1'000'000);
    timer.it_value.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
    signal(SIGPROF, SIG_DFL);
    setitimer(ITIMER_PROF, &timer, nullptr);
    rlimit cpu{us / 1'000'000 + 2, us / 1'000'000 + 3};
    setrlimit(RLIMIT_CPU, &cpu);
    // A child that does not run at all (a lock held by another thread at the
    // fork) uses no CPU time: a wall-clock alarm ends it too.
    signal(SIGALRM, SIG_DFL);
    alarm(static_cast<unsigned>(us / 1'000'000 + 10));
#if !defined(__SANITIZE_ADDRESS__) && !GATE_HAS_ASAN
    // AddressSanitizer reserves terabytes of address space for its shadow,
    // so the fuzz build bounds CPU time only.
    rlimit mem{held + k_yaml_parse_memory, held + k_yaml_parse_memory};
    setrlimit(RLIMIT_AS, &mem);
#endif
    int code = k_parsed;
    try {
      (void)YAML::LoadAll(text);
    } catch (const YAML::Exception&) {
      // The parent's parse reports it with its mark.
    } catch (const std::bad_alloc&) {
      code = k_no_memory;
    } catch (...) {
      code = k_exec_error;
    }
    _exit(code);
  }
  // RLIMIT_CPU counts CPU time, which a busy machine does not steal; the
  // wall-clock bound is only a backstop for a child that never runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  // A parse takes well under a millisecond: poll soon, then back off.
  std::chrono::microseconds pause(50);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return k_parsed;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return SIGKILL + 128;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// True when the rest of the line after `i` holds more than blanks.
bool content_follows(std::string_view text, std::size_t i) {
  for (; i < text.size() && text[i] != '\n'; ++i) {
    if (!blank(text[i])) return true;
  }
  return false;
}

} // namespace

// One pass that follows just enough YAML to know whether a character is in
// a comment, a quoted scalar, a block scalar or a flow collection, and
// whether it would begin a token. It need not be exact: yaml-cpp parses
// afterwards, and its own depth guard stays as a backstop.
//
// yaml-cpp 0.7 loops forever, allocating, on some ',' outside a flow
// collection that begins a token (",", "\"a\" ,", "- a\n,", "  a: 0\n,b",
// " &a: ,b": the fuzzer's findings so far). Such a comma is never valid
// YAML, since ',' cannot begin a plain scalar, so all of them are refused;
// a ',' inside a plain scalar ("tags: a, b") is text and left alone.
// yaml-cpp 0.8.0 (Debian 13, ubuntu-24.04) loops on every one of them and on
// fuzz/corpus/config/regression-*.yaml too (.ci/debian13 tries each), so no
// part of this guard is for 0.7 alone.
YamlGuard prescan(std::string_view text, const std::string& where) {
  auto fail = [&](std::size_t line, std::size_t col, const std::string& msg) {
    throw Error(Exit::bad_input, located(where, line, col, msg));
  };
  if (text.size() > k_max_config_bytes) {
    fail(0, 0, "config is larger than 1 MiB; expected a small YAML file");
  }
  // A blank or the end of the line or file: what makes "-", "?" and ":"
  // indicators rather than the start of a plain scalar.
  auto blank_at = [&](std::size_t j) { return j >= text.size() || blank(text[j]) || text[j] == '\n'; };
  std::size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  std::size_t line = 1, col = 1;
  int depth = 0;
  char quote = 0; // ' or " while inside a quoted scalar
  std::size_t quote_line = 0, quote_col = 0;
  bool escaped = false; // the previous character was a backslash inside "..."
  bool comment = false;
  bool indentation = true; // still in the line's leading blanks
  char prev = '\n';        // the previous character
  char last = '\n';        // the last non-blank character on this line, '\n' if none
  // True while the next non-blank character outside brackets would begin a
  // token rather than continue a plain scalar.
  bool token_start = true;
  // Inside an anchor or alias ("&a:"): a ':' there is part of its name, not
  // a key's.
  bool property = false;
  std::size_t line_col = 0; // column of the line's first content, 0 = none yet
  // yaml-cpp 0.7 also loops on a document whose root is not a mapping
  // ("&a m\n?"), on a node that is neither a key nor an item where keys are
  // ("a: 1\n!!t[\n,b"), and after a line left of an indented root
  // ("  a: 0\n&x m\n?"). Rules on lines that refused those also refused
  // valid YAML (a { } mapping over several lines), so they no longer refuse:
  // they only tell whether the text is in the plain block form (every line
  // that begins outside quotes, brackets and block scalars a key or a "- "
  // item, none left of the root's column, block scalars dedented to their
  // key). Years of fuzzing held yaml-cpp to finishing on that form, so it
  // parses in place; any other text parses first in the bounded child
  // below. A fork costs milliseconds in a large process (the fuzzers, the
  // sanitizer builds), and nearly every config is in the plain form.
  bool plain = true;
  std::size_t root_col = 0;      // the document's first key's column, 0 = none yet
  bool key_on_line = false;      // a "key:" indicator outside brackets on this line
  bool line_starts_item = false; // the line's first content is "- "
  auto check_line = [&] {
    if (line_col == 0 || key_on_line || (root_col == 0 && line_starts_item)) {
      if (root_col == 0 && line_col != 0) root_col = line_col;
      return;
    }
    if (root_col == 0 || !line_starts_item) plain = false;
  };
  // A block scalar ("|", ">") holds the lines indented more than its parent
  // node: the key or "- " item it is the value of, at block_parent_col. Its
  // text is at block_text_col: the indentation indicator's ("|2"), counted
  // from the parent as yaml-cpp does, or else the first non-empty line's.
  // Nothing in its text counts.
  bool marker = false; // the character just read ended a "---" or "..." marker
  bool block_scalar = false;
  std::size_t block_parent_col = 0;
  std::size_t block_text_col = 0; // 0 = not known yet
  std::size_t node_col = 0;       // column of the line's last key, item or value begun outside brackets
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\0') fail(line, col, "NUL byte; expected UTF-8 text");
    // yaml-cpp ends a line at a lone CR in some places and not in others
    // (an anchor's name runs on over it: "&p\rpa ,l" loops), so the two
    // readings of such a file cannot be made to agree.
    if (c == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))
      fail(line, col, "carriage return not followed by a line feed; expected \\n or \\r\\n line endings");
    const std::size_t len = utf8_length(static_cast<unsigned char>(c));
    if (len == 0 || i + len > text.size() || !valid_utf8(text.substr(i, len))) {
      fail(line, col, "invalid UTF-8; expected UTF-8 text");
    }
    // Whether this character is outside quotes and brackets before it is read.
    const bool outside = quote == 0 && depth == 0;
    if (c == '\n') {
      check_line();
      ++line, ++i;
      col = 1;
      comment = false;
      property = false;
      indentation = true;
      token_start = true;
      line_col = 0;
      node_col = 0;
      key_on_line = false;
      prev = last = '\n';
      continue;
    }
    if (indentation && outside) {
      // YAML indents with spaces only, and yaml-cpp's own message for a tab
      // ("illegal map value") does not say so.
      if (c == '\t' && content_follows(text, i)) {
        fail(line, col, "tab character in indentation; YAML indents with spaces only");
      }
    }
    if (c != ' ' && c != '\t') indentation = false;
    if (block_scalar && line_col == 0 && !blank(c)) {
      // The first content of a line: the block scalar's text, the end of
      // the scalar, or a line yaml-cpp cannot place.
      if (col > block_parent_col && block_text_col == 0) block_text_col = col;
      if (col <= block_parent_col) {
        block_scalar = false;
      } else if (col >= block_text_col) {
        comment = true; // nothing on this line counts
      } else {
        // A line between the key's column and the text's: yaml-cpp reads a
        // new node where none can be (a finding looped there).
        block_scalar = false;
        if (c != '#') plain = false;
      }
    }
    if (comment) {
      // Nothing inside a comment (or a block scalar's text) counts.
    } else if (quote == '\'') {
      if (c == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          ++i, ++col; // '' is an escaped quote
        } else {
          quote = 0;
        }
      }
    } else if (quote == '"') {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        quote = 0;
      }
    } else if (property && !blank(c) && std::string_view(",[]{}").find(c) == std::string_view::npos) {
      // Still the property's name.
    } else {
      property = false;
      // A quote or bracket starts a node only where a node can start: where
      // a token begins outside brackets (first on the line, after "key:",
      // "- ", "? "), or after '[', '{', ',' or ':' inside them. Elsewhere it
      // is part of a plain scalar ("it's", "a[1]", "x{{").
      const bool node_start = depth == 0 ? token_start
                                         : std::string_view("[{,:").find(last) != std::string_view::npos &&
                                               (blank(prev) || prev == last);
      if (c == '#' && (blank(prev) || prev == '\n')) {
        comment = true;
      } else if (c == '!' && node_start) {
        // The loader refuses tags anyway, and yaml-cpp 0.7 ends a tag's
        // name where YAML does not (at a quote: '!!o"x: [a", "b' loops, the
        // eleventh finding).
        fail(line, col, "YAML tag: gate.yaml takes plain values; quote a value that starts with '!'");
      } else if ((c == '&' || c == '*') && node_start) {
        property = true;
      } else if (c == ',' && depth == 0 && token_start) {
        fail(line, col,
             "',' outside [ ] or { } where a value begins; expected key: value lines "
             "(quote a value that starts with ',')");
      } else if (c == ':' && depth == 0 && blank_at(i + 1)) {
        token_start = true; // the key ends, its value may begin
        key_on_line = true;
      } else if ((c == '\'' || c == '"') && node_start) {
        if (depth == 0) node_col = col;
        quote = c;
        quote_line = line, quote_col = col;
      } else if ((c == '[' || c == '{') && (depth > 0 || node_start)) {
        if (++depth > k_max_flow_depth) {
          fail(line, col,
               "brackets nested deeper than " + std::to_string(k_max_flow_depth) +
                   " levels; expected a shallow config");
        }
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      } else if (blank(c) || depth > 0 || !token_start || c == ']' || c == '}') {
        // A blank, inside brackets, inside a plain scalar, or a stray closing
        // bracket (yaml-cpp's own error): nothing changes.
      } else if ((c == '-' || c == '?') && blank_at(i + 1)) {
        // "- " and "? ": a value may still begin.
        node_col = col;
      } else if (col == 1 && (text.substr(i, 3) == "---" || text.substr(i, 3) == "...") && blank_at(i + 3)) {
        i += 2, col += 2; // a document marker, not content: a new root follows
        root_col = 0;
        marker = true;
      } else if ((c == '|' || c == '>') && node_start) {
        if (node_col == 0 && root_col == 0) plain = false; // a root scalar
        block_scalar = true;
        block_parent_col = node_col != 0 ? node_col : col; // alone on its line: its own column
        block_text_col = 0;
        // The header: "|", ">", then a chomping indicator and an indentation
        // digit in either order.
        for (std::size_t j = i + 1; j < text.size() && j <= i + 2; ++j) {
          if (text[j] >= '1' && text[j] <= '9') block_text_col = block_parent_col + (text[j] - '0');
        }
        comment = true; // the rest of the line
      } else {
        token_start = false; // a plain scalar begins
        node_col = col;
      }
    }
    if (marker) {
      marker = false;
    } else if (!comment && !blank(c)) {
      if (line_col == 0 && outside) {
        line_col = col;
        line_starts_item = c == '-' && blank_at(i + 1);
        if (root_col != 0 && col < root_col) plain = false;
      }
      last = c;
    }
    prev = c;
    i += len;
    ++col;
  }
  // yaml-cpp takes an unclosed quoted scalar up to the end of the file.
  if (quote != 0) {
    fail(quote_line, quote_col, std::string("quoted string never closed; expected a closing ") + quote);
  }
  check_line();
  if (plain) return YamlGuard::plain_form;
  const int code = probe_in_child(std::string(text));
  if (code == k_parsed) return YamlGuard::child;
  if (code == k_no_memory || code == k_exec_error)
    fail(0, 0,
         "the YAML parser needed more than " + std::to_string(k_yaml_parse_memory >> 20) +
             " MiB for this file; expected a small YAML file");
  throw Error(Exit::bad_input, located(where, 0, 0,
                                       "the YAML parser did not finish within " +
                                           std::to_string(parse_cpu_us(text.size()) / 1000) +
                                           " ms (yaml-cpp loops on some invalid YAML); expected valid YAML"));
}

} // namespace gate::config::detail
