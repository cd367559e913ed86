#pragma once
// A directory of output files that is replaced all at once. Local (call on the rank
// that writes files, usually the root); no MPI.
#include <filesystem>
#include <string>
#include <vector>

namespace tessera {

/// The set of files one run writes into an output directory, replaced whole or not
/// at all: at every instant `target` is either the complete previous set or the
/// complete new one, even if the process is killed (SIGKILL) or the disk fills up.
///
/// How: files are written into a temporary directory next to the target (same
/// filesystem), named `.NAME.tessera-tmp-HOST-PID`. commit() adds a manifest
/// (`.tessera-manifest.json`: program, version, arguments, UTC time, files and
/// sizes), fsyncs every file and the directory, then swaps the temporary directory
/// with the target in one step (Linux renameat2 RENAME_EXCHANGE), or, where the
/// filesystem cannot exchange, moves the old set aside to `.NAME.tessera-old-HOST-PID`
/// and the new one in; the old set is then removed.
///
/// A later ResultSet for the same target removes the temporaries of runs on this
/// host whose process is gone, and moves a set left aside back into place if the
/// target is missing (a run killed between the two renames of the fallback).
///
/// What may be replaced: a missing target, an empty directory, or a directory that
/// holds a tessera manifest (a previous result set, whatever program wrote it).
/// Anything else (a file, a directory with the user's own files) is refused with
/// IoError before anything is written, so a mistyped --output never deletes data.
/// A symbolic link as target is followed: the directory it points to is replaced.
///
/// Usage:
///   ResultSet set(dir, "tessera-gauss", args);   // checks target, cleans stale temps
///   write_float_tiff(set.file("Lx.tiff"), lx);   // write each file at set.file(name)
///   set.commit();                                 // all files appear at once
/// Destroying an uncommitted ResultSet (an exception) removes its temporary directory
/// and leaves the target untouched.
class ResultSet {
 public:
  /// Name of the manifest inside a result set.
  static constexpr const char* kManifestName = ".tessera-manifest.json";

  /// Checks that `target` may be replaced (see above), creates its parent folders,
  /// removes stale temporaries and creates this run's temporary directory.
  /// `program` and `arguments` (the command line, argv[1..]) go into the manifest.
  /// Throws IoError with the reason (strerror) if the target may not be replaced or
  /// a directory cannot be created.
  ResultSet(std::filesystem::path target, std::string program, std::vector<std::string> arguments);
  ~ResultSet();
  ResultSet(const ResultSet&) = delete;
  ResultSet& operator=(const ResultSet&) = delete;

  /// Where to write the file `name` (a plain file name, no folders) of the new set;
  /// records it for the manifest. Throws InvalidArgument for names with '/' or a
  /// leading '.'.
  std::filesystem::path file(const std::string& name);

  /// Makes the new set the target's content (see above). Every file named through
  /// file() must exist. Throws IoError with the reason; on failure the target keeps
  /// the previous set. Call at most once.
  void commit();

  /// The directory the set will replace (absolute, symbolic link resolved).
  const std::filesystem::path& target() const { return target_; }
  /// This run's temporary directory (exists until commit() or destruction).
  const std::filesystem::path& staging() const { return staging_; }

  /// Removes the temporaries of dead runs on this host next to `target` and restores
  /// a set left aside if the target is missing. Done by the constructor; public for
  /// tools that only want to tidy up. Throws nothing.
  static void remove_stale(const std::filesystem::path& target);

 private:
  std::filesystem::path target_, staging_;
  std::string program_;
  std::vector<std::string> arguments_, files_;
  bool committed_ = false;
};

}  // namespace tessera
