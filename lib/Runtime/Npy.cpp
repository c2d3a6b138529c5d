//===- Npy.cpp - .npy reading and writing ---------------------------------===//

#include "Npy.h"
#include "FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnrt {

static const char kMagic[] = "\x93NUMPY";

namespace {

/// Parser for the Python dict literal in an .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
public:
  HeaderParser(const std::string &s) : s(s) {}

  bool parse(NpyArray &out, std::string &err) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    ws();
    if (!eat('{'))
      return fail(err, "header is not a dict");
    while (true) {
      ws();
      if (eat('}'))
        break;
      std::string key;
      if (!str(key))
        return fail(err, "expected a quoted key in the header dict");
      ws();
      if (!eat(':'))
        return fail(err, "expected ':' after '" + key + "' in the header");
      ws();
      if (key == "descr") {
        if (!str(out.descr))
          return fail(err, "'descr' is not a string (structured dtypes are "
                           "not supported)");
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (word("True"))
          out.fortranOrder = true;
        else if (word("False"))
          out.fortranOrder = false;
        else
          return fail(err, "'fortran_order' is not True or False");
        haveOrder = true;
      } else if (key == "shape") {
        if (!shape(out.shape))
          return fail(err, "'shape' is not a tuple of non-negative integers");
        haveShape = true;
      } else {
        return fail(err, "unexpected key '" + key + "' in the header");
      }
      ws();
      if (eat(','))
        continue;
      ws();
      if (eat('}'))
        break;
      return fail(err, "expected ',' or '}' in the header dict");
    }
    ws();
    if (i != s.size())
      return fail(err, "unexpected characters after the header dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(err, std::string("header lacks '") +
                           (!haveDescr   ? "descr"
                            : !haveOrder ? "fortran_order"
                                         : "shape") +
                           "'");
    return true;
  }

private:
  const std::string &s;
  size_t i = 0;

  static bool fail(std::string &err, const std::string &m) {
    err = m;
    return false;
  }
  void ws() {
    while (i < s.size() &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
  }
  bool eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool word(const char *w) {
    size_t n = std::strlen(w);
    if (s.compare(i, n, w) == 0) {
      i += n;
      return true;
    }
    return false;
  }
  bool str(std::string &out) {
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      return false;
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\')
        return false;
      ++i;
    }
    if (i >= s.size())
      return false;
    out = s.substr(start, i - start);
    ++i;
    return true;
  }
  bool shape(std::vector<int64_t> &out) {
    out.clear();
    if (!eat('('))
      return false;
    while (true) {
      ws();
      if (eat(')'))
        return true;
      size_t start = i;
      int64_t v = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (v > (INT64_MAX - 9) / 10)
          return false;
        v = v * 10 + (s[i] - '0');
        ++i;
      }
      if (i == start)
        return false;
      eat('L'); // Python 2 long literals.
      out.push_back(v);
      ws();
      if (eat(','))
        continue;
      ws();
      if (eat(')'))
        return true;
      return false;
    }
  }
};

} // namespace

bool parseNpy(std::vector<unsigned char> bytes, const std::string &name,
              NpyArray &out, std::string &err) {
  out = NpyArray();
  const std::string pfx = name + ": ";
  const size_t n = bytes.size();
  if (n < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    err = pfx + "not a .npy file (bad magic)";
    return false;
  }
  out.major = bytes[6];
  out.minor = bytes[7];
  size_t hlen, hstart;
  if (out.major == 1) {
    hlen = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
    hstart = 10;
  } else if (out.major == 2 || out.major == 3) {
    if (n < 12) {
      err = pfx + "truncated .npy header";
      return false;
    }
    hlen = bytes[8] | (static_cast<size_t>(bytes[9]) << 8) |
           (static_cast<size_t>(bytes[10]) << 16) |
           (static_cast<size_t>(bytes[11]) << 24);
    hstart = 12;
  } else {
    err = pfx + strFormat("unsupported .npy format version %d.%d", out.major,
                          out.minor);
    return false;
  }
  if (hlen > n - hstart) {
    err = pfx + strFormat("truncated .npy header (header length %zu, file "
                          "is %zu bytes)",
                          hlen, n);
    return false;
  }
  std::string header(reinterpret_cast<const char *>(bytes.data()) + hstart,
                     hlen);
  std::string herr;
  HeaderParser hp(header);
  if (!hp.parse(out, herr)) {
    err = pfx + "invalid .npy header: " + herr;
    return false;
  }
  // descr: byte order, kind, item size ("<f4").
  const std::string &d = out.descr;
  if (d.size() < 3 || std::strchr("<>|=", d[0]) == nullptr) {
    err = pfx + "unsupported dtype '" + d + "'";
    return false;
  }
  char *endp = nullptr;
  long isz = std::strtol(d.c_str() + 2, &endp, 10);
  if (!std::strchr("fiubc", d[1]) || *endp != '\0' || isz <= 0 || isz > 64) {
    err = pfx + "unsupported dtype '" + d + "'";
    return false;
  }
  out.itemSize = static_cast<size_t>(isz);
  if (d[0] == '>' && out.itemSize > 1) {
    err = pfx + "big-endian data ('" + d + "') is not supported";
    return false;
  }
  out.descr[0] = out.itemSize == 1 ? '|' : '<';
  if (out.fortranOrder) {
    err = pfx + "Fortran-order arrays are not supported (save a C-order "
                "array, e.g. with np.ascontiguousarray)";
    return false;
  }
  uint64_t elems;
  if (!numElements(out.shape, elems) || elems > SIZE_MAX / out.itemSize) {
    err = pfx + "shape " + formatShapeTuple(out.shape) + " is too large";
    return false;
  }
  out.dataOffset = hstart + hlen;
  out.dataBytes = static_cast<size_t>(elems) * out.itemSize;
  size_t have = n - out.dataOffset;
  if (have != out.dataBytes) {
    err = pfx + strFormat("%s: shape %s with dtype '%s' needs %zu bytes but "
                          "the file has %zu",
                          have < out.dataBytes ? "truncated data"
                                               : "unexpected trailing data",
                          formatShapeTuple(out.shape).c_str(), d.c_str(),
                          out.dataBytes, have);
    return false;
  }
  out.file = std::move(bytes);
  return true;
}

bool readNpy(const std::string &path, NpyArray &out, std::string &err) {
  // A regular file only, read to its size: a FIFO would block and
  // /dev/zero would never end.
  std::vector<unsigned char> bytes;
  if (!readRegularFile(path, bytes, err))
    return false;
  return parseNpy(std::move(bytes), path, out, err);
}

std::string npyHeader(const char *descr, const std::vector<int64_t> &shape) {
  std::string dict =
      std::string("{'descr': '") + descr +
      "', 'fortran_order': False, 'shape': " + formatShapeTuple(shape) + ", }";
  // Pad with spaces and a final newline so the data starts 64-byte aligned.
  size_t pre = 10;
  if (dict.size() + 1 + pre > 65535)
    pre = 12;
  size_t total = pre + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kMagic, 6);
  size_t hlen = dict.size();
  if (pre == 10) {
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(hlen & 0xff);
    out += static_cast<char>((hlen >> 8) & 0xff);
  } else {
    out += '\x02';
    out += '\x00';
    for (int k = 0; k < 4; ++k)
      out += static_cast<char>((hlen >> (8 * k)) & 0xff);
  }
  return out + dict;
}

static bool writeAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool writeNpyTemp(const std::string &path, const char *descr,
                  const std::vector<int64_t> &shape, const void *data,
                  size_t bytes, std::string &tmpPath, std::string &err) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty())
    dir = "/";
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = dir + "/." + base + ".tmpXXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0) {
    err = path + ": cannot create a temporary file in '" + dir +
          "': " + std::strerror(errno);
    return false;
  }
  tmpPath = buf.data();
  // mkstemp creates 0600; give the file the permissions open() would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  std::string header = npyHeader(descr, shape);
  bool ok =
      writeAll(fd, header.data(), header.size()) && writeAll(fd, data, bytes);
  int writeErrno = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok) {
    ::unlink(tmpPath.c_str());
    err = path + ": write failed: " + std::strerror(writeErrno);
    return false;
  }
  return true;
}

bool commitFile(const std::string &tmpPath, const std::string &path,
                std::string &err) {
  if (::rename(tmpPath.c_str(), path.c_str()) != 0) {
    err = path + ": cannot write: " + std::strerror(errno);
    ::unlink(tmpPath.c_str());
    return false;
  }
  return true;
}

bool writeNpy(const std::string &path, const char *descr,
              const std::vector<int64_t> &shape, const void *data, size_t bytes,
              std::string &err) {
  std::string tmp;
  return writeNpyTemp(path, descr, shape, data, bytes, tmp, err) &&
         commitFile(tmp, path, err);
}

static std::string describeDescr(const std::string &d) {
  static const struct {
    const char *descr, *name;
  } names[] = {{"<f2", "float16"}, {"<f4", "float32"}, {"<f8", "float64"},
               {"<i1", "int8"},    {"<i2", "int16"},   {"<i4", "int32"},
               {"<i8", "int64"},   {"|i1", "int8"},    {"|u1", "uint8"},
               {"<u2", "uint16"},  {"<u4", "uint32"},  {"<u8", "uint64"},
               {"|b1", "bool"}};
  for (const auto &n : names)
    if (d == n.descr)
      return "'" + d + "' (" + n.name + ")";
  return "'" + d + "'";
}

bool checkNpyForInput(const std::string &path, const NpyArray &a, int index,
                      const ManifestEntry &in, std::string &err) {
  const std::string who =
      strFormat("the model's input %d '%s'", index, in.name.c_str());
  const char *want = dtypeInfo(in.dtype).npyDescr;
  if (a.descr != want) {
    err = path + ": dtype " + describeDescr(a.descr) + " but " + who +
          " expects " + dtypeName(in.dtype) +
          (in.dtype == DType::BF16 ? " (stored as '<u2' raw bits)"
                                   : std::string(" ('") + want + "')");
    return false;
  }
  // `?` (dynamic) sizes take any extent; the runtime checks the sizes
  // that must agree between inputs (attnrt_set_input_shaped, attnrt_run).
  bool matches = a.shape.size() == in.dims.size();
  for (size_t d = 0; matches && d < a.shape.size(); ++d)
    matches = in.dims[d] == kDynamicDim || a.shape[d] == in.dims[d];
  if (!matches) {
    err = path + ": shape " + formatShapeTuple(a.shape) + " but " + who +
          " expects " + formatShapeTuple(in.dims);
    // Where the model takes any size in some dimension, say which fixed
    // one is wrong.
    if (in.isDynamic() && a.shape.size() == in.dims.size())
      for (size_t d = 0; d < a.shape.size(); ++d)
        if (in.dims[d] != kDynamicDim && a.shape[d] != in.dims[d]) {
          err += strFormat(" (dimension %zu is %lld, the model's is %lld)", d,
                           static_cast<long long>(a.shape[d]),
                           static_cast<long long>(in.dims[d]));
          break;
        }
    return false;
  }
  return true;
}

} // namespace attnrt
