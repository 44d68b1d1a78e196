#include <gate/agent/workcopy.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <gate/util/error.hpp>
#include <gate/util/fd.hpp>
#include <gate/util/input.hpp>
#include <gate/util/sha256.hpp>

namespace gate::agent {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& rel) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= rel.size()) {
    std::size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    parts.push_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool safe_parts(const std::vector<std::string>& parts) {
  for (const auto& p : parts)
    if (p.empty() || p == "." || p == "..") return false;
  return !parts.empty();
}

std::string errno_text() { return std::strerror(errno); }

// The kernel gives up after this many links in one lookup (ELOOP).
constexpr int k_max_links = 40;

// Whether the symlink at `rel` in the copy open at `rootfd` leads strictly
// below the root when the kernel resolves it. The text of a target is not
// enough: through `sub/sub2/a -> ..`, "sub/sub2/a/../.." climbs out while
// reading as if it stayed in. So the walk is the kernel's own: each
// component is looked up with O_NOFOLLOW in the directory reached so far, a
// link's target is spliced in where it stands, and ".." goes back to the
// directory the walk really came from. A step above the root, an absolute
// target, a loop or the root itself (whose ".." is outside) is refused.
// Past a missing component the rest is taken as text: the agent may create
// it, as a directory, before writing through the link.
bool resolves_inside(int rootfd, const std::string& rel) {
  std::vector<std::unique_ptr<Fd>> dirs; // the walk's directories below the root
  std::vector<std::string> pending;      // components still to resolve, next one last
  const auto push = [&pending](const std::string& path) {
    const auto parts = split(path);
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  };
  push(rel);
  std::size_t missing = 0; // depth below the last component that exists
  int links = 0;
  while (!pending.empty()) {
    const std::string c = std::move(pending.back());
    pending.pop_back();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (missing > 0) {
        --missing;
      } else if (dirs.empty()) {
        return false;
      } else {
        dirs.pop_back();
      }
      continue;
    }
    if (missing > 0) {
      ++missing;
      continue;
    }
    const int at = dirs.empty() ? rootfd : dirs.back()->get();
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(at, c.c_str(), target, sizeof target);
    if (n > 0) {
      if (++links > k_max_links || target[0] == '/') return false;
      push(std::string(target, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == ENOENT) {
      missing = 1;
      continue;
    }
    const int fd = ::openat(at, c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    // Not a directory: a file below the root, and any component after it
    // fails with ENOTDIR.
    if (fd < 0) return true;
    dirs.push_back(std::make_unique<Fd>(fd));
  }
  return !dirs.empty() || missing > 0;
}

// Refuses the copy at `work` if one of its `links` (path in the copy, target
// text) leads outside it; checked once all are made, since one link's way
// out can run through another made after it.
void refuse_escaping_links(const fs::path& fixture, const fs::path& work,
                           const std::vector<std::pair<std::string, std::string>>& links) {
  if (links.empty()) return;
  Fd root(::open(work.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) throw_cannot_run("cannot open the work copy " + work.string() + ": " + errno_text());
  for (const auto& [rel, target] : links)
    if (target.empty() || target.front() == '/' || !resolves_inside(root.get(), rel))
      throw_cannot_run(
          "fixture symlink " + (fixture / rel).string() + " -> " + target +
          " points outside the work copy; refused, so nothing outside can be written through it");
}

// Copies the regular file `from` to the new file `to`, holes as holes
// (SEEK_DATA/SEEK_HOLE; a file system without them gets a full copy), so
// that a sparse fixture file costs the copy no more disk than the fixture.
void copy_sparse(const fs::path& from, const fs::path& to, mode_t mode) {
  const Fd in(::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in) throw_cannot_run("cannot read " + from.string() + ": " + errno_text());
  const Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777));
  struct stat st {};
  if (!out || ::fstat(in.get(), &st) != 0)
    throw_cannot_run("cannot write " + to.string() + ": " + errno_text());
  std::vector<char> buf(1 << 16);
  for (off_t at = 0; at < st.st_size;) {
    off_t data = ::lseek(in.get(), at, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break; // only a hole is left
    off_t hole = data < 0 ? st.st_size : ::lseek(in.get(), data, SEEK_HOLE);
    if (data < 0) data = at;
    if (hole < 0) hole = st.st_size;
    for (at = data; at < hole;) {
      const ssize_t n = ::pread(in.get(), buf.data(), std::min<off_t>(hole - at, 1 << 16), at);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        throw_cannot_run("cannot read " + from.string() + ": " + (n == 0 ? "it shrank" : errno_text()));
      }
      for (ssize_t done = 0; done < n;) {
        const ssize_t w =
            ::pwrite(out.get(), buf.data() + done, static_cast<std::size_t>(n - done), at + done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw_cannot_run("cannot write " + to.string() + ": " + errno_text());
        done += w;
      }
      at += n;
    }
  }
  // A trailing hole has no data to write: the size makes it.
  if (::ftruncate(out.get(), st.st_size) != 0)
    throw_cannot_run("cannot write " + to.string() + ": " + errno_text());
}

} // namespace

fs::path make_work_copy(const fs::path& fixture, const fs::path& root) {
  std::error_code ec;
  fs::path base = root.empty() ? fs::temp_directory_path(ec) : root;
  if (ec) throw_cannot_run("no temporary directory for the agent's work copy: " + ec.message());
  fs::create_directories(base, ec);
  std::string tmpl = (base / "gate-agent-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw_cannot_run("cannot create a work directory in " + base.string() + ": " + errno_text());
  const fs::path work = tmpl;
  try {
    std::vector<std::pair<std::string, std::string>> links;
    std::uintmax_t total = 0;
    for (auto it = fs::recursive_directory_iterator(fixture); it != fs::recursive_directory_iterator();
         ++it) {
      const fs::path rel = it->path().lexically_relative(fixture);
      const fs::path dst = work / rel;
      const auto st = it->symlink_status();
      if (fs::is_symlink(st)) {
        const fs::path target = fs::read_symlink(it->path());
        fs::create_symlink(target, dst);
        links.emplace_back(rel.generic_string(), target.string());
      } else if (fs::is_directory(st)) {
        fs::create_directory(dst);
        fs::permissions(dst, st.permissions() | fs::perms::owner_all);
      } else if (fs::is_regular_file(st)) {
        // By apparent size, as read_tree will read it for the state hash.
        total += it->file_size();
        if (total > k_max_tree_bytes)
          throw_cannot_run("fixture " + fixture.string() + " holds more than " +
                           byte_limit_text(k_max_tree_bytes) + " of files (at " + rel.string() +
                           "); a work copy is capped at that");
        copy_sparse(it->path(), dst, static_cast<mode_t>(st.permissions()));
      }
    }
    refuse_escaping_links(fixture, work, links);
  } catch (const fs::filesystem_error& e) {
    remove_work_copy(work);
    throw_cannot_run("cannot copy fixture " + fixture.string() + " to " + work.string() + ": " + e.what());
  } catch (...) {
    remove_work_copy(work);
    throw;
  }
  return work;
}

void remove_work_copy(const fs::path& dir) noexcept {
  std::error_code ec;
  // An agent may leave read-only directories; make them writable first
  // (permissions() on a symlink would follow it, so links are skipped).
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(dir, ec);
}

Tree read_tree(const fs::path& dir, std::size_t max_bytes) {
  Tree tree;
  std::size_t total = 0;
  std::error_code ec;
  const auto too_big = [&] {
    throw_cannot_run("the work copy " + dir.string() + " holds more than " + byte_limit_text(max_bytes) +
                     " of files");
  };
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto st = it->symlink_status(ec);
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (fs::is_symlink(st)) {
      tree[rel] = FileEntry{true, fs::read_symlink(it->path(), ec).string()};
    } else if (fs::is_regular_file(st)) {
      // The size first: a sparse file the agent made is refused unread.
      if (const auto size = it->file_size(ec); !ec && total + size > max_bytes) too_big();
      std::string why;
      auto bytes = read_inside(dir, rel, why, max_bytes - total);
      if (!bytes) continue; // vanished or unreadable: it is not part of the state
      total += bytes->size();
      tree[rel] = FileEntry{false, std::move(*bytes)};
    }
  }
  if (ec) throw_cannot_run("cannot read the work copy " + dir.string() + ": " + ec.message());
  return tree;
}

std::string state_hash(const Tree& tree) {
  std::string manifest;
  for (const auto& [path, e] : tree) {
    manifest += e.link ? "link" : "file";
    manifest.push_back('\0');
    manifest += path;
    manifest.push_back('\0');
    manifest += e.link ? e.content : sha256_hex(e.content);
    manifest.push_back('\n');
  }
  return sha256_hex(manifest);
}

std::optional<std::string> read_inside(const fs::path& root, const std::string& rel, std::string& why,
                                       std::size_t max_bytes) {
  const auto parts = split(rel);
  if (!safe_parts(parts)) {
    why = "not a plain relative path";
    return std::nullopt;
  }
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    why = "cannot open the work copy: " + errno_text();
    return std::nullopt;
  }
  int current = dir.get();
  std::vector<std::unique_ptr<Fd>> held;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    int fd =
        ::openat(current, parts[i].c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
    if (fd < 0) {
      why = errno == ELOOP || errno == ENOTDIR
                ? "is a symlink or goes through one (checks do not follow symlinks)"
            : errno == ENOENT ? "does not exist"
                              : errno_text();
      return std::nullopt;
    }
    held.push_back(std::make_unique<Fd>(fd));
    current = fd;
  }
  struct stat st {};
  if (::fstat(current, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "is not a regular file";
    return std::nullopt;
  }
  std::string out;
  switch (read_all(current, max_bytes, out)) {
  case ReadAll::ok: return out;
  case ReadAll::too_big: why = "is larger than " + byte_limit_text(max_bytes); break;
  case ReadAll::failed: why = "cannot be read: " + errno_text(); break;
  }
  return std::nullopt;
}

void write_inside(const fs::path& root, const std::string& rel, const std::string& text) {
  const auto parts = split(rel);
  if (!safe_parts(parts)) throw_cannot_run("refusing to write " + rel + ": not a plain relative path");
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) throw_cannot_run("cannot open " + root.string() + ": " + errno_text());
  int current = dir.get();
  std::vector<std::unique_ptr<Fd>> held;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (::mkdirat(current, parts[i].c_str(), 0755) != 0 && errno != EEXIST)
      throw_cannot_run("cannot create " + (root / rel).parent_path().string() + ": " + errno_text());
    int fd = ::openat(current, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      throw_cannot_run("refusing to write " + (root / rel).string() + ": " + parts[i] +
                       " is a symlink or not a directory (" + errno_text() + ")");
    held.push_back(std::make_unique<Fd>(fd));
    current = fd;
  }
  Fd out(
      ::openat(current, parts.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (out.get() < 0)
    throw_cannot_run("refusing to write " + (root / rel).string() + ": " +
                     (errno == ELOOP ? std::string("it is a symlink") : errno_text()));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(out.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_cannot_run("cannot write " + (root / rel).string() + ": " + errno_text());
    done += static_cast<std::size_t>(n);
  }
}

} // namespace gate::agent
