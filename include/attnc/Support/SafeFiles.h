//===- SafeFiles.h - hostile-input-safe file reading and writing -*- C++
//-*-===//
//
// What the tools do with the paths a user names: inputs must be regular
// files (a FIFO blocks in open, /dev/zero never ends), read no further than
// their size; an output never replaces a device, FIFO or an input file, is
// written to a temporary file and renamed into place only on success, and
// leaves nothing behind on failure; text inputs nest no deeper than the
// recursive parsers (MLIR, llvm::json) can take.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_SAFEFILES_H
#define ATTNC_SUPPORT_SAFEFILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace attnc {

/// Reads `path` ("-": stdin) after checking that it is a regular file: a
/// FIFO, device, socket or directory is refused without blocking. `what`
/// names the input in the message ("input file", "--weights", ...).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(llvm::StringRef path, llvm::StringRef what);

/// Checks, without opening it, that `path` is a regular file (following
/// links): for inputs that another component reads later.
llvm::Error checkRegularFile(llvm::StringRef path, llvm::StringRef what);

/// An error if `output` is the same file as one of `inputs` (by device and
/// inode, so links and other spellings are caught). "-" never matches.
llvm::Error checkOutputIsNotAnInput(llvm::StringRef output,
                                    llvm::ArrayRef<std::string> inputs);

/// An output file written safely. prepare() checks the destination before
/// any work is done; the caller writes tempPath(); commit() renames it over
/// a regular (or missing) destination, or copies it into a character device
/// or a FIFO that has a reader (never replacing them). Without commit() the
/// temporary file is removed (also on a signal).
class SafeOutputFile {
public:
  SafeOutputFile() = default;
  SafeOutputFile(SafeOutputFile &&other);
  SafeOutputFile &operator=(SafeOutputFile &&other) = delete;
  SafeOutputFile(const SafeOutputFile &) = delete;
  ~SafeOutputFile();

  /// Refuses directories, sockets, missing parent directories and outputs
  /// that are inputs; creates the temporary file.
  static llvm::Expected<SafeOutputFile>
  prepare(llvm::StringRef path, llvm::ArrayRef<std::string> inputs = {});

  llvm::StringRef tempPath() const { return temp; }
  /// Writes what `print` prints into the temporary file (commit puts it in
  /// place); an error names the file that could not be written.
  llvm::Error write(llvm::function_ref<void(llvm::raw_ostream &)> print);
  llvm::Error commit(bool executable = false);

private:
  std::string finalPath; ///< As given (for messages).
  std::string target;    ///< Where the bytes go (links resolved).
  std::string temp;
  bool special = false; ///< A character device or FIFO: copy, never rename.
  bool done = false;
};

/// Writes `contents` to `path` through a SafeOutputFile ("-": stdout).
llvm::Error writeFileSafely(llvm::StringRef path, llvm::StringRef contents,
                            llvm::ArrayRef<std::string> inputs = {});

/// The deepest nesting attnc accepts in textual inputs (MLIR brackets,
/// braces, parentheses and angle brackets; JSON arrays and objects). The
/// recursive-descent parsers use stack per level; real models nest a few
/// dozen levels.
constexpr unsigned kMaxNestingDepth = 256;

/// Where textual MLIR first nests deeper than `maxDepth` (byte offset into
/// `text`), if it does. Strings and comments are skipped; bytecode is not
/// textual and is not checked.
std::optional<size_t> findExcessiveMlirNesting(llvm::StringRef text,
                                               unsigned maxDepth);

/// The same for JSON ('[' and '{' outside strings).
std::optional<size_t> findExcessiveJsonNesting(llvm::StringRef text,
                                               unsigned maxDepth);

/// "line:col" (1-based) of a byte offset.
std::string lineColumn(llvm::StringRef text, size_t offset);

/// For file options of passes (scores-file=, spec-file=): reads a regular
/// JSON file and checks its nesting. The error says which and where
/// ("FILE:L:C: ...") without the "error:" prefix.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readJsonFile(llvm::StringRef path);

} // namespace attnc

#endif // ATTNC_SUPPORT_SAFEFILES_H
