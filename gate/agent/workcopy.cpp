#include <gate/agent/workcopy.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <gate/util/error.hpp>
#include <gate/util/fd.hpp>
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

bool read_fd(int fd, std::string& out) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

// A symlink at `rel` whose target, taken from the link's directory, stays
// strictly below the copy's root. Absolute targets never do: even one into the
// fixture would reach the suite's original, not the copy.
bool stays_inside(const fs::path& rel, const fs::path& target) {
  if (target.empty() || target.is_absolute()) return false;
  int depth = 0;
  for (const auto& part : rel.parent_path() / target) {
    if (part == "..") {
      if (--depth < 0) return false;
    } else if (part != "." && !part.empty()) {
      ++depth;
    }
  }
  // Not the root itself either: "q/.." through a link q -> "." would climb out.
  return depth > 0;
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
    for (auto it = fs::recursive_directory_iterator(fixture); it != fs::recursive_directory_iterator();
         ++it) {
      const fs::path rel = it->path().lexically_relative(fixture);
      const fs::path dst = work / rel;
      const auto st = it->symlink_status();
      if (fs::is_symlink(st)) {
        const fs::path target = fs::read_symlink(it->path());
        if (!stays_inside(rel, target)) {
          remove_work_copy(work);
          throw_cannot_run(
              "fixture symlink " + (fixture / rel).string() + " -> " + target.string() +
              " points outside the work copy; refused, so nothing outside can be written through it");
        }
        fs::create_symlink(target, dst);
      } else if (fs::is_directory(st)) {
        fs::create_directory(dst);
        fs::permissions(dst, st.permissions() | fs::perms::owner_all);
      } else if (fs::is_regular_file(st)) {
        fs::copy_file(it->path(), dst);
      }
    }
  } catch (const fs::filesystem_error& e) {
    remove_work_copy(work);
    throw_cannot_run("cannot copy fixture " + fixture.string() + " to " + work.string() + ": " + e.what());
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
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto st = it->symlink_status(ec);
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (fs::is_symlink(st)) {
      tree[rel] = FileEntry{true, fs::read_symlink(it->path(), ec).string()};
    } else if (fs::is_regular_file(st)) {
      std::string why;
      auto bytes = read_inside(dir, rel, why);
      if (!bytes) continue; // vanished or unreadable: it is not part of the state
      total += bytes->size();
      if (total > max_bytes)
        throw_cannot_run("the work copy " + dir.string() + " holds more than " + std::to_string(max_bytes) +
                         " bytes of files");
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

std::optional<std::string> read_inside(const fs::path& root, const std::string& rel, std::string& why) {
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
  if (!read_fd(current, out)) {
    why = "cannot be read: " + errno_text();
    return std::nullopt;
  }
  return out;
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
