// LD_PRELOAD shim for the end-to-end tests: makes gate's atomic writes fail
// as a full, broken, read-only or forbidden disk would, so the tests can see
// what gate does then. gate itself has no test seam; the harness preloads
// this library into the gate it starts when a test sets
// GATE_TEST_FAULT_WRITE = enospc | eio (writes and the close fail) or
// erofs | eacces (the temp file cannot be created). Only files whose name
// holds gate's temp marker are touched. Plain C library calls only: the
// library must not pull a second C++ runtime into the process.
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

namespace {

constexpr const char* k_marker = ".gate-tmp-"; // gate::AtomicFile::k_temp_marker
constexpr int k_max_fd = 65536;

using MkstempFn = int (*)(char*);
using WriteFn = ssize_t (*)(int, const void*, size_t);
using CloseFn = int (*)(int);

template <class F> F next(const char* name) { return reinterpret_cast<F>(dlsym(RTLD_NEXT, name)); }

// Resolved at load, before gate's own code runs; looked up again by a call
// that comes earlier (another library's constructor).
MkstempFn g_mkstemp = nullptr, g_mkstemp64 = nullptr;
WriteFn g_write = nullptr;
CloseFn g_close = nullptr;
void resolve() {
  g_mkstemp = next<MkstempFn>("mkstemp");
  g_mkstemp64 = next<MkstempFn>("mkstemp64");
  g_write = next<WriteFn>("write");
  g_close = next<CloseFn>("close");
}

int g_fault = 0;
bool g_at_create = false;
bool g_failing[k_max_fd]; // fds of temp files made while a write fault is set

__attribute__((constructor)) void read_fault() {
  resolve();
  const char* v = std::getenv("GATE_TEST_FAULT_WRITE");
  if (v == nullptr || *v == '\0') return;
  if (std::strcmp(v, "enospc") == 0)
    g_fault = ENOSPC;
  else if (std::strcmp(v, "eio") == 0)
    g_fault = EIO;
  else if (std::strcmp(v, "erofs") == 0)
    g_fault = EROFS;
  else if (std::strcmp(v, "eacces") == 0)
    g_fault = EACCES;
  else {
    std::fprintf(stderr, "gate: error: GATE_TEST_FAULT_WRITE=%.40s: expected enospc, eio, erofs or eacces\n",
                 v);
    std::_Exit(3);
  }
  g_at_create = g_fault == EROFS || g_fault == EACCES;
}

int make_temp(bool large, char* tmpl) {
  if (g_mkstemp == nullptr) resolve();
  MkstempFn real = large ? g_mkstemp64 : g_mkstemp;
  const bool ours = g_fault != 0 && std::strstr(tmpl, k_marker) != nullptr;
  if (ours && g_at_create) {
    errno = g_fault;
    return -1;
  }
  int fd = real(tmpl);
  if (ours && fd >= 0 && fd < k_max_fd) g_failing[fd] = true;
  return fd;
}

} // namespace

extern "C" {

int mkstemp(char* tmpl) { return make_temp(false, tmpl); }
int mkstemp64(char* tmpl) { return make_temp(true, tmpl); }

ssize_t write(int fd, const void* buf, size_t n) {
  if (g_write == nullptr) resolve();
  if (fd >= 0 && fd < k_max_fd && g_failing[fd] && n > 0) {
    errno = g_fault;
    return -1;
  }
  return g_write(fd, buf, n);
}

// An empty file fails too: at close, as NFS reports a write error.
int close(int fd) {
  if (g_close == nullptr) resolve();
  const bool failing = fd >= 0 && fd < k_max_fd && g_failing[fd];
  if (failing) g_failing[fd] = false;
  const int rc = g_close(fd);
  if (failing && rc == 0) {
    errno = g_fault;
    return -1;
  }
  return rc;
}

} // extern "C"
