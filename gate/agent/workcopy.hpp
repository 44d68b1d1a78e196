#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace gate::agent {

// One entry of a work copy as gate sees it without following symlinks.
struct FileEntry {
  bool link = false;
  std::string content; // the file's bytes, or the symlink's target text
};

// Relative path ('/'-separated) → entry; regular files and symlinks only
// (directories are implied by their contents, other kinds are skipped).
using Tree = std::map<std::string, FileEntry>;

// A fresh directory below `root` (the system temp dir when empty) holding a
// copy of `fixture`: directories and regular files (with their permission
// bits, holes kept as holes) copied, symlinks recreated with the same target
// text and never followed. Throws Error(cannot_run) naming the path on
// failure, for a symlink that leads outside the copy (resolved as the
// kernel would, through other links), and for a fixture over
// k_max_tree_bytes of files.
std::filesystem::path make_work_copy(const std::filesystem::path& fixture, const std::filesystem::path& root);

// Removes a work copy; symlinks inside are removed as links. Never throws.
void remove_work_copy(const std::filesystem::path& dir) noexcept;

// The most bytes of files a work copy may hold: its fixture is copied only
// under it, and the copy is read only under it for the state hash.
inline constexpr std::size_t k_max_tree_bytes = std::size_t{256} << 20;

// Reads every regular file and symlink below `dir`, never following a
// symlink. Throws Error(cannot_run) when the tree is larger than
// `max_bytes` in total (an agent that filled the disk, or made a sparse
// file), naming the limit; a file's size is checked before it is read.
Tree read_tree(const std::filesystem::path& dir, std::size_t max_bytes = k_max_tree_bytes);

// The work copy's final state hash: sha256 over, for each entry in byte
// order of its relative path, "file\0<path>\0<sha256 of bytes>\n" or
// "link\0<path>\0<target>\n". Empty directories do not count.
std::string state_hash(const Tree& tree);

// The bytes of `rel` (a relative path, no "..") inside `root`; nullopt with
// `why` set when it is missing, not a regular file, or reached through a
// symlink (checks never follow one: it could point outside the copy), or
// larger than `max_bytes`.
std::optional<std::string> read_inside(const std::filesystem::path& root, const std::string& rel,
                                       std::string& why, std::size_t max_bytes = k_max_tree_bytes);

// Writes `text` to `rel` inside `root`, creating parent directories; each
// component is opened with O_NOFOLLOW, so a symlink planted in the fixture
// cannot redirect the write outside the copy (RELIABILITY 39): it fails
// with Error(cannot_run) instead.
void write_inside(const std::filesystem::path& root, const std::string& rel, const std::string& text);

} // namespace gate::agent
