//===- FileIO.h - runtime file checks for hostile paths ---------*- C++ -*-===//
//
// Inputs are opened without blocking (a FIFO) and must be regular files read
// no further than their size (/dev/zero never ends); outputs never replace a
// device, FIFO, directory or input file. Plain C++17 and POSIX.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_FILEIO_H
#define ATTNC_LIB_RUNTIME_FILEIO_H

#include <cstdint>
#include <string>
#include <vector>

namespace attnrt {

/// Opens `path` for reading without blocking and checks that it is a regular
/// file; returns the descriptor (or -1 with `err` set: "PATH: ...") and its
/// size.
int openRegularFile(const std::string &path, uint64_t &size, std::string &err);

/// Reads all of a regular file (exactly the size fstat reports).
bool readRegularFile(const std::string &path, std::vector<unsigned char> &out,
                     std::string &err);

/// Where an output goes.
enum class OutputKind {
  File,   ///< A new or regular file: written to a temporary, then renamed.
  Device, ///< A character device or FIFO: written in place, never replaced.
};

/// Checks an output path before anything is computed: not a directory,
/// socket or block device, not the same file as any of `inputs` (by device
/// and inode). For a regular file reached through a link, `resolved` is the
/// file the link names (so that the link survives); otherwise the path.
bool checkOutputPath(const std::string &path,
                     const std::vector<std::string> &inputs, OutputKind &kind,
                     std::string &resolved, std::string &err);

/// Writes `chunks` into a character device or FIFO in place (a FIFO without
/// a reader is an error, not a wait).
bool writeInPlace(const std::string &path,
                  const std::vector<std::pair<const void *, size_t>> &chunks,
                  std::string &err);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_FILEIO_H
