#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gate {

// Writes a file so that readers see either the old content or the whole new
// content, never a part: a unique temp file next to the target (mkstemp),
// fsync-free rename on commit(), removal in the destructor if commit() never
// ran. Failures (read-only or full directory) throw Error(cannot_run) naming
// the path.
class AtomicFile {
public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view data);
  void commit();
  // commit(), except that a temp file removed by another process before the
  // rename (`gate cache prune --temp-age 0` racing a write) gives false
  // instead of an error: the caller still holds the content and can write
  // it again. Any other failure throws as commit() does.
  bool commit_unless_vanished();

  // Temp files carry this marker and their writer's pid so that a crash's
  // leftovers can be found and cleaned ("<name>.gate-tmp-<pid>-XXXXXX").
  static constexpr std::string_view k_temp_marker = ".gate-tmp-";

private:
  std::filesystem::path target_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Removes the temp files a killed writer left next to `target` (its own
// naming, "<name>.gate-tmp-<pid>-…", regular files only): those whose writer
// pid no longer runs, last written over a minute ago (the pid may belong to
// another container sharing the directory, whose writer is still busy), and
// any not written for a day. A running writer's file is left alone (its
// mtime moves as it writes), unless it stalled for that day.
void remove_stale_temp_files(const std::filesystem::path& target);

// Convenience: the whole content at once; written again (up to 3 times in
// all) when a concurrent prune removes the temp file before its rename.
// Stale temp files of the target are removed once it is written, except
// for cache entries, whose directories are large and cleaned by `gate cache
// prune` instead (RELIABILITY 9).
enum class StaleTemps { remove, keep };
void write_file_atomically(const std::filesystem::path& target, std::string_view data,
                           StaleTemps stale = StaleTemps::remove);

// Creates a directory and its parents; a failure (a file in the way, a
// read-only or full disk) throws Error(cannot_run) naming the path.
void ensure_directory(const std::filesystem::path& dir);

} // namespace gate
