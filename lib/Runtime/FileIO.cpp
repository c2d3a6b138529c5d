//===- FileIO.cpp - runtime file checks for hostile paths -----------------===//

#include "FileIO.h"

#include "attnc/Support/FileKind.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace attnrt {

int openRegularFile(const std::string &path, uint64_t &size, std::string &err) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    err = path + ": cannot open: " + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    err = path + ": cannot stat: " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    err = path + ": not a regular file (" +
          attnc::describeFileKind(st.st_mode) + ")";
    ::close(fd);
    return -1;
  }
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

bool readRegularFile(const std::string &path, std::vector<unsigned char> &out,
                     std::string &err) {
  uint64_t size;
  int fd = openRegularFile(path, size, err);
  if (fd < 0)
    return false;
  if (size > SIZE_MAX / 2) {
    err = path + ": file too large";
    ::close(fd);
    return false;
  }
  try {
    out.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc &) {
    err = path + ": out of memory reading the file";
    ::close(fd);
    return false;
  }
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      err = path + (r < 0 ? std::string(": read error: ") + std::strerror(errno)
                          : std::string(": file shrank while being read"));
      ::close(fd);
      return false;
    }
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return true;
}

bool checkOutputPath(const std::string &path,
                     const std::vector<std::string> &inputs, OutputKind &kind,
                     std::string &resolved, std::string &err) {
  kind = OutputKind::File;
  resolved = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      err = path + ": cannot write: " + std::strerror(errno);
      return false;
    }
    struct stat lst;
    if (::lstat(path.c_str(), &lst) == 0) {
      err = path + ": cannot write: it is a symbolic link to a missing file";
      return false;
    }
    return true; // A new file: its directory is checked when it is created.
  }
  for (const std::string &in : inputs) {
    struct stat ist;
    if (!in.empty() && ::stat(in.c_str(), &ist) == 0 &&
        ist.st_dev == st.st_dev && ist.st_ino == st.st_ino) {
      err = path + ": the output is the same file as the input '" + in +
            "'; refusing to overwrite an input";
      return false;
    }
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    kind = OutputKind::Device;
    return true;
  }
  if (S_ISDIR(st.st_mode)) {
    err = path + ": cannot write: Is a directory";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    err = path + ": cannot write: it is " + attnc::describeFileKind(st.st_mode);
    return false;
  }
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real))
    resolved = real;
  return true;
}

bool writeInPlace(const std::string &path,
                  const std::vector<std::pair<const void *, size_t>> &chunks,
                  std::string &err) {
  // Never O_CREAT or O_TRUNC: the device stays what it is.
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    err = path + ": cannot write: " +
          (errno == ENXIO ? std::string("it is a FIFO with no reader")
                          : std::string(std::strerror(errno)));
    return false;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  for (const auto &chunk : chunks) {
    const char *p = static_cast<const char *>(chunk.first);
    size_t n = chunk.second;
    while (n) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        err = path + ": write failed: " + std::strerror(errno);
        ::close(fd);
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  if (::close(fd) != 0) {
    err = path + ": write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

} // namespace attnrt
