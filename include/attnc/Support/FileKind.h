//===- FileKind.h - what a path that is not a regular file is --*- C++ -*-===//
//
// Shared by the tools' file checks (SafeFiles.cpp) and libattnrt's
// (FileIO.cpp); header-only because libattnrt does not link LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_FILEKIND_H
#define ATTNC_SUPPORT_FILEKIND_H

#include <sys/stat.h>

namespace attnc {

/// "a directory", "a FIFO", ... for the mode of a file that is not a regular
/// file, for messages that refuse it.
inline const char *describeFileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace attnc

#endif // ATTNC_SUPPORT_FILEKIND_H
