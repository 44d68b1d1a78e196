#include <gate/cache/store.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unordered_set>

#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/fd.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::cache {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_entry_suffix = ".entry";
constexpr std::string_view k_symlink_refused = "symlink refused";

std::string errno_text(int err) { return std::strerror(err); }

bool is_lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_key(std::string_view s) { return s.size() == 64 && is_lower_hex(s); }

bool is_entry_name(std::string_view name) {
  return name.size() == 64 + k_entry_suffix.size() && name.ends_with(k_entry_suffix) &&
         is_lower_hex(name.substr(0, 64));
}

// A file name fit for a terminal or a CI log: control bytes, backslashes and
// invalid UTF-8 are shown as \xNN, so a crafted name cannot inject anything.
std::string display(std::string_view path) {
  std::string out;
  static constexpr char k_hex[] = "0123456789abcdef";
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out.push_back(k_hex[c >> 4]);
    out.push_back(k_hex[c & 0xf]);
  };
  for (std::size_t i = 0; i < path.size();) {
    unsigned char c = static_cast<unsigned char>(path[i]);
    if (c < 0x20 || c == 0x7f || c == '\\') {
      escape(c);
      ++i;
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else {
      std::size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
      if (len > 1 && i + len <= path.size() && valid_utf8(path.substr(i, len))) {
        out.append(path.substr(i, len));
        i += len;
      } else {
        escape(c);
        ++i;
      }
    }
  }
  return redact(out);
}

void check_key(const std::string& key) {
  if (!is_key(key))
    throw_bad_input("invalid cache key \"" + display(utf8_prefix(key, 80)) +
                    "\": expected 64 lowercase hex digits");
}

// Opens a directory without following a symlink; -1 with errno set
// otherwise. Linux reports a symlink under O_DIRECTORY as ENOTDIR: it is
// told apart here as ELOOP so that the reason can say "symlink refused".
int open_dir_at(int dirfd, const char* name) {
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOTDIR) {
    struct stat st {};
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      errno = ELOOP;
    else
      errno = ENOTDIR;
  }
  return fd;
}

// Reads the open file `fd` if it is a regular file. Returns 0 or an errno;
// `why` says what was wrong.
int read_open_entry(int fd, std::string& out, std::string& why) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    why = "cannot read: " + errno_text(err);
    return err;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return EINVAL;
  }
  // Asking for one byte more than fstat's size makes the usual case a single
  // read(): a regular file reads short only at its end, so stopping exactly
  // at that size is the whole file, while getting the extra byte means it
  // grew since fstat and the rest is read too. A truncated file ends early
  // (read() returns 0) and decode() rejects it.
  const auto size = static_cast<std::size_t>(st.st_size);
  out.resize(size + 1);
  std::size_t used = 0;
  for (;;) {
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      why = "cannot read: " + errno_text(err);
      return err;
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used == size) break;
    if (used == out.size()) out.resize(out.size() * 2);
  }
  out.resize(used);
  return 0;
}

// Reads the regular file `name` in `dirfd` without following a symlink or
// blocking on a FIFO. Returns 0 or an errno; `why` says what was wrong.
int read_entry_at(int dirfd, const char* name, std::string& out, std::string& why) {
  Fd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    int err = errno;
    why = err == ELOOP ? std::string(k_symlink_refused) : "cannot read: " + errno_text(err);
    return err;
  }
  return read_open_entry(fd.get(), out, why);
}

// Everything found under the root, classified without following a symlink.
enum class Kind { entry, bad, temp };
struct Item {
  std::string path;
  Kind kind = Kind::bad;
  std::string reason;     // Kind::bad
  bool removable = false; // Kind::bad: prune() may unlink it
  std::string key;        // Kind::entry
  std::uint64_t size = 0;
  std::chrono::system_clock::time_point mtime;
};

Item bad(std::string path, std::string reason, bool removable) {
  Item it;
  it.path = std::move(path);
  it.reason = std::move(reason);
  it.removable = removable;
  return it;
}

std::vector<std::string> list_dir(int dirfd) {
  std::vector<std::string> names;
  // fdopendir takes over its descriptor; give it one of its own.
  int own = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (own < 0) return names;
  DIR* dir = ::fdopendir(own);
  if (dir == nullptr) {
    ::close(own);
    return names;
  }
  while (const dirent* d = ::readdir(dir)) {
    std::string_view name = d->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

void walk_shard(int rootfd, const std::string& shard, const std::string& shard_path,
                std::vector<Item>& items) {
  Fd dir(open_dir_at(rootfd, shard.c_str()));
  if (!dir) {
    int err = errno;
    if (err != ENOENT)
      items.push_back(
          bad(shard_path, err == ELOOP ? std::string(k_symlink_refused) : errno_text(err), false));
    return;
  }
  std::string bytes;
  for (const std::string& name : list_dir(dir.get())) {
    std::string path = shard_path + "/" + name;
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue; // gone meanwhile
    if (S_ISLNK(st.st_mode)) {
      items.push_back(bad(path, std::string(k_symlink_refused), true));
    } else if (S_ISDIR(st.st_mode)) {
      items.push_back(bad(path, "not a cache entry (a directory)", false));
    } else if (!S_ISREG(st.st_mode)) {
      items.push_back(bad(path, "not a regular file", true));
    } else if (name.find(AtomicFile::k_temp_marker) != std::string::npos) {
      Item it;
      it.path = path;
      it.kind = Kind::temp;
      it.size = static_cast<std::uint64_t>(st.st_size);
      it.mtime = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
      items.push_back(std::move(it));
    } else if (!is_entry_name(name)) {
      items.push_back(bad(path, "not a cache entry", true));
    } else if (name.compare(0, 2, shard) != 0) {
      items.push_back(bad(path, "entry in the wrong shard directory", true));
    } else {
      std::string why;
      if (read_entry_at(dir.get(), name.c_str(), bytes, why) != 0) {
        items.push_back(bad(path, why, true));
        continue;
      }
      std::string key = name.substr(0, 64);
      DecodeResult r = decode(bytes, key);
      if (!r.entry) {
        items.push_back(bad(path, r.reason, true));
        continue;
      }
      Item it;
      it.path = path;
      it.kind = Kind::entry;
      it.key = std::move(key);
      it.size = bytes.size();
      items.push_back(std::move(it));
    }
  }
}

std::vector<Item> walk(const fs::path& root) {
  std::vector<Item> items;
  Fd rootfd(open_dir_at(AT_FDCWD, root.c_str()));
  if (!rootfd) {
    int err = errno;
    if (err == ENOENT) return items;
    throw_cannot_run("cannot read cache directory " + display(root.string()) + ": " +
                     (err == ELOOP ? "it is a symlink" : errno_text(err)));
  }
  for (const std::string& name : list_dir(rootfd.get())) {
    std::string path = (root / name).string();
    struct stat st {};
    if (::fstatat(rootfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      items.push_back(bad(path, std::string(k_symlink_refused), true));
    } else if (!S_ISDIR(st.st_mode) || name.size() != 2 || !is_lower_hex(name)) {
      // Possibly the user's own file (a .gitattributes): reported, left alone.
      items.push_back(bad(path, "not a cache shard directory", false));
    } else {
      walk_shard(rootfd.get(), name, path, items);
    }
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.path < b.path; });
  return items;
}

void check_root(const fs::path& root) {
  struct stat st {};
  if (::lstat(root.c_str(), &st) != 0) return;
  if (S_ISLNK(st.st_mode))
    throw_cannot_run("cache directory " + display(root.string()) + " is a symlink; refusing to use it");
  if (!S_ISDIR(st.st_mode))
    throw_cannot_run("cache directory " + display(root.string()) + " exists but is not a directory");
}

// Set once openat2() turned out to be unavailable (an old kernel, a seccomp
// filter): get() then always takes the path walk.
std::atomic<bool> g_no_openat2{false};

// Opens <key[0:2]>/<key>.entry below `rootfd` in one call, refusing a symlink
// at either level as read_entry_at() would, and never blocking on a FIFO.
// Returns the descriptor or -errno.
int open_entry_beneath(int rootfd, const std::string& key) {
  char rel[2 + 1 + 64 + k_entry_suffix.size() + 1];
  rel[0] = key[0];
  rel[1] = key[1];
  rel[2] = '/';
  std::memcpy(rel + 3, key.data(), 64);
  std::memcpy(rel + 3 + 64, k_entry_suffix.data(), k_entry_suffix.size());
  rel[sizeof rel - 1] = '\0';
  open_how how{};
  how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

// The root's descriptor for get(), opened on first use. Not cached while the
// root cannot be opened: put() may create it later.
std::shared_ptr<const int> shared_root_fd(std::mutex& mutex, std::shared_ptr<const int>& cached,
                                          const fs::path& root) {
  std::lock_guard lock(mutex);
  if (cached) return cached;
  int fd = open_dir_at(AT_FDCWD, root.c_str());
  if (fd < 0) return nullptr;
  // Concurrent get()s may still use a descriptor being dropped: whoever
  // holds the last reference closes it.
  cached = std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
  return cached;
}

// A directory removed (a user clearing the cache mid-run) keeps its open
// descriptors but holds nothing any more; its replacement must be opened.
bool removed(int dirfd) {
  struct stat st {};
  return ::fstat(dirfd, &st) == 0 && st.st_nlink == 0;
}

// get() by walking the path, one level at a time: the fallback for when the
// one-call open fails, and the source of its exact reasons.
Lookup get_by_path(const fs::path& root, const std::string& key) {
  Lookup out;
  fs::path shard = root / key.substr(0, 2);
  Fd dir(open_dir_at(AT_FDCWD, shard.c_str()));
  if (!dir) {
    int err = errno;
    if (err == ENOENT) return out;
    out.corrupt_reason = display(shard.string()) + ": " +
                         (err == ELOOP     ? std::string(k_symlink_refused)
                          : err == ENOTDIR ? std::string("not a directory")
                                           : errno_text(err));
    return out;
  }
  std::string name = key + std::string(k_entry_suffix);
  std::string bytes, why;
  int err = read_entry_at(dir.get(), name.c_str(), bytes, why);
  if (err == ENOENT) return out;
  std::string path = display((shard / name).string());
  if (err != 0) {
    out.corrupt_reason = path + ": " + why;
    return out;
  }
  DecodeResult r = decode(bytes, key);
  if (!r.entry) {
    out.corrupt_reason = path + ": " + r.reason;
    return out;
  }
  out.entry = std::move(r.entry);
  out.bytes = std::move(bytes);
  return out;
}

std::size_t shard_index(const std::string& key) {
  auto nibble = [](char c) { return static_cast<std::size_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
  return nibble(key[0]) * 16 + nibble(key[1]);
}

} // namespace

Store::Store(fs::path root) : root_(std::move(root)), dir_made_(256, false) {
  std::string s = root_.string();
  if (s.empty()) throw_bad_input("the cache directory is empty");
  // "dir/" would make lstat follow a symlink named dir.
  while (s.size() > 1 && s.back() == '/')
    s.pop_back();
  root_ = s;
  check_root(root_);
}

fs::path Store::path_for(const std::string& key) const {
  check_key(key);
  return root_ / key.substr(0, 2) / (key + std::string(k_entry_suffix));
}

// The hit path of a replay makes one open: openat2() below a cached root
// descriptor with symlinks refused by the kernel, then fstat and read. No
// path text is built unless something is wrong; whatever the one-call open
// rejects is looked at again by get_by_path() for the exact reason.
Lookup Store::get_local(const std::string& key) const {
  if (g_no_openat2.load(std::memory_order_relaxed)) return get_by_path(root_, key);
  std::shared_ptr<const int> rootfd = shared_root_fd(dirs_mutex_, root_fd_, root_);
  if (!rootfd) return get_by_path(root_, key);
  int fd = open_entry_beneath(*rootfd, key);
  if (fd < 0) {
    if (fd == -ENOSYS || fd == -EPERM || fd == -EINVAL) g_no_openat2.store(true, std::memory_order_relaxed);
    if (fd == -ENOENT) {
      if (!removed(*rootfd)) return {};
      std::lock_guard lock(dirs_mutex_);
      if (root_fd_ == rootfd) root_fd_.reset();
    }
    return get_by_path(root_, key);
  }
  Fd file(fd);
  Lookup out;
  std::string bytes, why;
  if (read_open_entry(file.get(), bytes, why) != 0) {
    out.corrupt_reason = display(path_for(key).string()) + ": " + why;
    return out;
  }
  DecodeResult r = decode(bytes, key);
  if (!r.entry) {
    out.corrupt_reason = display(path_for(key).string()) + ": " + r.reason;
    return out;
  }
  out.entry = std::move(r.entry);
  out.bytes = std::move(bytes);
  return out;
}

Lookup Store::get(const std::string& key) const {
  check_key(key);
  Lookup local = get_local(key);
  if (local.entry || !remote_) return local;
  Remote::Got got = remote_->get(key);
  if (!got.entry) {
    if (!got.rejected.empty())
      local.corrupt_reason += (local.corrupt_reason.empty() ? "" : "; ") + got.rejected;
    return local;
  }
  Lookup out;
  // A corrupt local file is replaced by the verified remote one.
  try {
    write_local(key, got.bytes);
  } catch (const Error& e) {
    out.local_write_error = e.what();
  }
  out.entry = std::move(got.entry);
  out.bytes = std::move(got.bytes);
  out.remote = remote_->where();
  return out;
}

void Store::make_shard_dir(const std::string& key) const {
  std::lock_guard lock(dirs_mutex_);
  std::size_t index = shard_index(key);
  if (dir_made_[index]) return;
  if (!root_made_) {
    std::error_code ec;
    fs::create_directories(root_, ec);
    if (ec)
      throw_cannot_run("cannot create cache directory " + display(root_.string()) + ": " + ec.message());
    check_root(root_);
    root_made_ = true;
  }
  fs::path shard = root_ / key.substr(0, 2);
  // Another thread or process may create it at the same moment: EEXIST is
  // fine as long as what exists is a real directory.
  if (::mkdir(shard.c_str(), 0755) != 0 && errno != EEXIST)
    throw_cannot_run("cannot create cache directory " + display(shard.string()) + ": " + errno_text(errno));
  struct stat st {};
  if (::lstat(shard.c_str(), &st) != 0)
    throw_cannot_run("cannot create cache directory " + display(shard.string()) + ": " + errno_text(errno));
  if (S_ISLNK(st.st_mode))
    throw_cannot_run("cache directory " + display(shard.string()) +
                     " is a symlink; refusing to write through it");
  if (!S_ISDIR(st.st_mode))
    throw_cannot_run("cannot write cache directory " + display(shard.string()) + ": not a directory");
  dir_made_[index] = true;
}

void Store::write_local(const std::string& key, std::string_view bytes) const {
  const fs::path target = path_for(key);
  for (int attempt = 0;; ++attempt) {
    make_shard_dir(key);
    try {
      write_file_atomically(target, bytes, StaleTemps::keep);
      return;
    } catch (const Error&) {
      // The directory may have been deleted since it was made (a user
      // clearing the cache mid-run): make it again, once.
      struct stat st {};
      if (attempt > 0 || ::lstat(target.parent_path().c_str(), &st) == 0) throw;
      std::lock_guard lock(dirs_mutex_);
      dir_made_.assign(dir_made_.size(), false);
      root_made_ = false;
    }
  }
}

void Store::put(const Entry& e) {
  check_key(e.key);
  const std::string bytes = encode(e);
  write_local(e.key, bytes);
  if (remote_) remote_->put(e.key, bytes);
}

bool Store::remove(const std::string& key) {
  check_key(key);
  fs::path shard = root_ / key.substr(0, 2);
  Fd dir(open_dir_at(AT_FDCWD, shard.c_str()));
  if (!dir) return false;
  std::string name = key + std::string(k_entry_suffix);
  if (::unlinkat(dir.get(), name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  throw_cannot_run("cannot remove " + display((shard / name).string()) + ": " + errno_text(errno));
}

Stats Store::stats() const {
  Stats s;
  for (const Item& it : walk(root_)) {
    switch (it.kind) {
    case Kind::entry:
      ++s.entries;
      s.bytes += it.size;
      break;
    case Kind::bad: ++s.corrupt; break;
    case Kind::temp: ++s.temp_files; break;
    }
  }
  return s;
}

std::map<std::string, Entry> Store::by_fingerprint(const std::set<std::string>& fingerprints) const {
  std::map<std::string, Entry> found;
  if (fingerprints.empty()) return found;
  for (const Item& it : walk(root_)) {
    if (it.kind != Kind::entry) continue;
    Lookup l = get(it.key);
    if (!l.entry) continue;
    std::string fp = make_fingerprint(l.entry->provider, l.entry->path, l.entry->request);
    if (fingerprints.count(fp) == 0) continue;
    auto at = found.find(fp);
    if (at == found.end() || l.entry->replica < at->second.replica) found[fp] = std::move(*l.entry);
  }
  return found;
}

std::vector<std::string> Store::verify() const {
  std::vector<std::string> out;
  for (const Item& it : walk(root_))
    if (it.kind == Kind::bad) out.push_back(display(it.path) + ": " + it.reason);
  return out;
}

std::size_t Store::prune(const std::vector<std::string>* keep, std::chrono::seconds temp_age) {
  std::unordered_set<std::string> kept;
  if (keep != nullptr) kept.insert(keep->begin(), keep->end());
  const auto now = std::chrono::system_clock::now();
  std::size_t removed = 0;
  for (const Item& it : walk(root_)) {
    bool drop = false;
    switch (it.kind) {
    case Kind::entry: drop = keep != nullptr && kept.count(it.key) == 0; break;
    case Kind::bad: drop = it.removable; break;
    case Kind::temp: drop = now - it.mtime >= temp_age; break;
    }
    if (!drop) continue;
    // unlink never follows the last component: a symlink goes, its target stays.
    if (::unlink(it.path.c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      throw_cannot_run("cannot remove " + display(it.path) + ": " + errno_text(errno));
    }
  }
  return removed;
}

Store::Stale Store::prune_unreferenced(const std::function<bool(const Entry&)>& referenced, bool apply) {
  Stale out;
  for (const Item& it : walk(root_)) {
    if (it.kind != Kind::entry) continue;
    Lookup l = get_local(it.key);
    if (!l.entry || referenced(*l.entry)) continue;
    if (apply && ::unlink(it.path.c_str()) != 0) {
      if (errno == ENOENT) continue; // another prune was first
      throw_cannot_run("cannot remove " + display(it.path) + ": " + errno_text(errno));
    }
    ++out.entries;
    out.bytes += it.size;
  }
  return out;
}

} // namespace gate::cache
