//===- SafeFiles.cpp - hostile-input-safe file reading and writing --------===//

#include "attnc/Support/SafeFiles.h"

#include "attnc/Support/FileKind.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace attnc {

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

static Error notRegular(StringRef what, StringRef path, mode_t mode) {
  return makeError(what + " '" + path + "' is " + describeFileKind(mode) +
                   ", not a regular file");
}

Expected<std::unique_ptr<MemoryBuffer>> readRegularFile(StringRef path,
                                                        StringRef what) {
  if (path == "-") {
    // A pipe is the normal way to feed stdin; a device other than a terminal
    // or /dev/null (e.g. < /dev/zero) would be read without end.
    struct stat st;
    bool devNull = false;
    struct stat nullSt;
    if (::stat("/dev/null", &nullSt) == 0 && S_ISCHR(nullSt.st_mode))
      devNull = true;
    if (::fstat(STDIN_FILENO, &st) == 0 && S_ISCHR(st.st_mode) &&
        !::isatty(STDIN_FILENO) && !(devNull && st.st_rdev == nullSt.st_rdev))
      return makeError(what + " (stdin) is a character device, not a file "
                              "or pipe");
    auto buffer = MemoryBuffer::getSTDIN();
    if (!buffer)
      return makeError("cannot read " + what +
                       " from stdin: " + buffer.getError().message());
    return std::move(*buffer);
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return makeError("cannot open " + what + " '" + path +
                     "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return makeError("cannot stat " + what + " '" + path +
                     "': " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return notRegular(what, path, st.st_mode);
  }
  // Read exactly the size fstat reported, never until an EOF that may not
  // come.
  auto buffer = MemoryBuffer::getOpenFile(sys::fs::convertFDToNativeFile(fd),
                                          path, st.st_size);
  ::close(fd);
  if (!buffer)
    return makeError("cannot read " + what + " '" + path +
                     "': " + buffer.getError().message());
  return std::move(*buffer);
}

Error checkRegularFile(StringRef path, StringRef what) {
  struct stat st;
  if (::stat(path.str().c_str(), &st) != 0)
    return makeError("cannot open " + what + " '" + path +
                     "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return notRegular(what, path, st.st_mode);
  return Error::success();
}

Error checkOutputIsNotAnInput(StringRef output, ArrayRef<std::string> inputs) {
  if (output == "-")
    return Error::success();
  for (const std::string &input : inputs) {
    if (input.empty() || input == "-")
      continue;
    bool same = false;
    // Fails (and leaves `same` false) when either does not exist.
    if (!sys::fs::equivalent(output, input, same) && same)
      return makeError("the output '" + output +
                       "' is the same file as the input '" + input +
                       "'; refusing to overwrite an input");
  }
  return Error::success();
}

SafeOutputFile::SafeOutputFile(SafeOutputFile &&other)
    : finalPath(std::move(other.finalPath)), target(std::move(other.target)),
      temp(std::move(other.temp)), special(other.special), done(other.done) {
  other.temp.clear();
  other.done = true;
}

SafeOutputFile::~SafeOutputFile() {
  if (!done && !temp.empty()) {
    sys::fs::remove(temp);
    sys::DontRemoveFileOnSignal(temp);
  }
}

Expected<SafeOutputFile> SafeOutputFile::prepare(StringRef path,
                                                 ArrayRef<std::string> inputs) {
  if (path.empty())
    return makeError("empty output path");
  if (Error err = checkOutputIsNotAnInput(path, inputs))
    return std::move(err);
  SafeOutputFile out;
  out.finalPath = path.str();
  out.target = path.str();
  if (path == "-") {
    out.special = true;
  } else {
    struct stat st;
    if (::stat(out.finalPath.c_str(), &st) == 0) {
      if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        out.special = true;
      } else if (!S_ISREG(st.st_mode)) {
        return makeError("cannot write '" + path + "': it is " +
                         describeFileKind(st.st_mode));
      } else {
        // Through a symbolic link: replace the file it names, keep the
        // link.
        SmallString<256> real;
        if (!sys::fs::real_path(path, real))
          out.target = std::string(real);
      }
    } else if (errno != ENOENT) {
      return makeError("cannot write '" + path + "': " + std::strerror(errno));
    } else if (sys::fs::is_symlink_file(path)) {
      return makeError("cannot write '" + path +
                       "': it is a symbolic link to a missing file");
    }
  }

  SmallString<256> model;
  int fd = -1;
  std::error_code ec;
  if (out.special) {
    ec = sys::fs::createTemporaryFile("attnc-output", "", fd, model);
  } else {
    StringRef dir = sys::path::parent_path(out.target);
    model = dir.empty() ? "." : dir;
    sys::path::append(model,
                      "." + sys::path::filename(out.target) + ".tmp-%%%%%%");
    SmallString<256> unique;
    ec = sys::fs::createUniqueFile(model, fd, unique);
    model = unique;
  }
  if (ec) {
    StringRef dir = sys::path::parent_path(out.target);
    return makeError("cannot write '" + path + "': cannot create a file in '" +
                     (dir.empty() ? StringRef(".") : dir) +
                     "': " + ec.message());
  }
  sys::Process::SafelyCloseFileDescriptor(fd);
  out.temp = std::string(model);
  sys::RemoveFileOnSignal(out.temp);
  return std::move(out);
}

static Error copyInto(int outFd, StringRef from, StringRef finalPath) {
  auto buffer = MemoryBuffer::getFile(from, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read back '" + from +
                     "': " + buffer.getError().message());
  const char *p = (*buffer)->getBufferStart();
  size_t n = (*buffer)->getBufferSize();
  while (n) {
    ssize_t w = ::write(outFd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return makeError("cannot write '" + finalPath +
                       "': " + std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Error::success();
}

Error SafeOutputFile::commit(bool executable) {
  assert(!done && "committed twice");
  done = true;
  auto cleanup = [&] {
    sys::fs::remove(temp);
    sys::DontRemoveFileOnSignal(temp);
  };
  if (finalPath == "-") {
    outs().flush();
    Error err = copyInto(STDOUT_FILENO, temp, "stdout");
    cleanup();
    return err;
  }
  if (special) {
    // Never create or truncate: the device or FIFO stays what it is. A FIFO
    // without a reader would block; O_NONBLOCK turns that into ENXIO.
    int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      cleanup();
      if (e == ENXIO)
        return makeError("cannot write '" + finalPath +
                         "': it is a FIFO with no reader");
      return makeError("cannot write '" + finalPath + "': " + std::strerror(e));
    }
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
      ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    Error err = copyInto(fd, temp, finalPath);
    if (::close(fd) != 0 && !err)
      err = makeError("cannot write '" + finalPath +
                      "': " + std::strerror(errno));
    cleanup();
    return err;
  }
  // The destination may have changed since prepare(): never rename over
  // anything but a regular file.
  struct stat st;
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    cleanup();
    return makeError("cannot write '" + finalPath + "': it is now " +
                     describeFileKind(st.st_mode));
  }
  if (executable)
    sys::fs::setPermissions(temp, sys::fs::all_read | sys::fs::all_exe |
                                      sys::fs::owner_write);
  if (std::error_code ec = sys::fs::rename(temp, target)) {
    cleanup();
    return makeError("cannot write '" + finalPath + "': " + ec.message());
  }
  sys::DontRemoveFileOnSignal(temp);
  return Error::success();
}

Error writeFileSafely(StringRef path, StringRef contents,
                      ArrayRef<std::string> inputs) {
  if (path == "-") {
    outs() << contents;
    outs().flush();
    if (outs().has_error())
      return makeError("cannot write to stdout");
    return Error::success();
  }
  auto out = SafeOutputFile::prepare(path, inputs);
  if (!out)
    return out.takeError();
  if (Error err = out->write([&](raw_ostream &os) { os << contents; }))
    return err;
  return out->commit();
}

Error SafeOutputFile::write(function_ref<void(raw_ostream &)> print) {
  std::error_code ec;
  raw_fd_ostream os(temp, ec);
  if (ec)
    return makeError("cannot write '" + temp + "': " + ec.message());
  print(os);
  os.close();
  if (os.has_error())
    return makeError("cannot write '" + finalPath +
                     "': " + os.error().message());
  return Error::success();
}

std::optional<size_t> findExcessiveMlirNesting(StringRef text,
                                               unsigned maxDepth) {
  // MLIR bytecode starts with "ML\xefR".
  if (text.starts_with("ML\xef"
                       "R"))
    return std::nullopt;
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < n && text[i + 1] == '/')
        while (i < n && text[i] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > maxDepth)
        return i;
      break;
    case '>':
      // "->" and ">=" (affine constraints) close nothing.
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < n && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::optional<size_t> findExcessiveJsonNesting(StringRef text,
                                               unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return i;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string lineColumn(StringRef text, size_t offset) {
  StringRef before = text.take_front(offset);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column =
      lineStart == StringRef::npos ? offset + 1 : offset - lineStart;
  return std::to_string(line) + ":" + std::to_string(column);
}

Expected<std::unique_ptr<MemoryBuffer>> readJsonFile(StringRef path) {
  auto buffer = readRegularFile(path, "file");
  if (!buffer)
    return buffer.takeError();
  StringRef text = (*buffer)->getBuffer();
  if (auto at = findExcessiveJsonNesting(text, kMaxNestingDepth))
    return makeError(path + ":" + lineColumn(text, *at) +
                     ": JSON nests deeper than " + Twine(kMaxNestingDepth) +
                     " levels");
  return std::move(*buffer);
}

} // namespace attnc
