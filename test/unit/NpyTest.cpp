//===- NpyTest.cpp - .npy reader/writer tests -----------------------------===//

#include "Npy.h"
#include "TestUtil.h"

#include "gtest/gtest.h"

#include <utility>

#include <sys/stat.h>

using namespace attnrt;
using namespace attnrt_test;

namespace {

ManifestEntry input(const std::string &name, DType t,
                    std::vector<int64_t> dims) {
  ManifestEntry e;
  e.name = name;
  e.dtype = t;
  e.dims = dims;
  numElements(dims, e.numElements);
  e.bytes = e.numElements * dtypeSize(t);
  return e;
}

std::vector<unsigned char> toBytes(const std::string &s) {
  return std::vector<unsigned char>(s.begin(), s.end());
}

/// A .npy image with a custom header dict and version.
std::string npyImage(const std::string &dict, const std::string &data,
                     int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  std::string h = dict + "\n";
  if (major == 1) {
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
  } else {
    for (int k = 0; k < 4; ++k)
      out += static_cast<char>((h.size() >> (8 * k)) & 0xff);
  }
  return out + h + data;
}

std::string parseErr(const std::string &image) {
  NpyArray a;
  std::string err;
  EXPECT_FALSE(parseNpy(toBytes(image), "x.npy", a, err));
  return err;
}

template <typename T>
void roundTrip(const TempDir &dir, DType t, std::vector<int64_t> shape,
               std::vector<T> values) {
  std::string path = dir.file(std::string("rt_") + dtypeName(t) + ".npy");
  std::string err;
  ASSERT_TRUE(writeNpy(path, dtypeInfo(t).npyDescr, shape, values.data(),
                       values.size() * sizeof(T), err))
      << err;
  std::string raw = readFile(path);
  // Version 1.0, data 64-byte aligned, header ends in a newline.
  EXPECT_EQ(raw[6], 1);
  EXPECT_EQ(raw[7], 0);
  size_t hlen = static_cast<unsigned char>(raw[8]) |
                (static_cast<size_t>(static_cast<unsigned char>(raw[9])) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(raw[10 + hlen - 1], '\n');
  NpyArray a;
  ASSERT_TRUE(readNpy(path, a, err)) << err;
  EXPECT_EQ(a.descr, dtypeInfo(t).npyDescr);
  EXPECT_EQ(a.shape, shape);
  EXPECT_FALSE(a.fortranOrder);
  ASSERT_EQ(a.dataBytes, values.size() * sizeof(T));
  EXPECT_EQ(valuesOf<T>(a.data(), values.size()), values);
  EXPECT_TRUE(checkNpyForInput(path, a, 0, input("x", t, shape), err)) << err;
}

TEST(Npy, RoundTripEachDType) {
  TempDir dir;
  roundTrip<float>(dir, DType::F32, {2, 3}, {1.5f, -2, 3, 4, 5, 6e10f});
  roundTrip<uint16_t>(dir, DType::F16, {3}, {0x3c00, 0xc000, 0x7bff});
  roundTrip<uint16_t>(dir, DType::BF16, {1, 2}, {0x3f80, 0xbf80});
  roundTrip<int32_t>(dir, DType::I32, {}, {-7});
  roundTrip<int64_t>(dir, DType::I64, {2, 1, 2}, {1, -1, INT64_MAX, INT64_MIN});
  EXPECT_EQ(dir.list().size(), 5u); // no temporary files left behind
}

TEST(Npy, HeaderText) {
  std::string h = npyHeader("<f4", {1, 16});
  EXPECT_EQ(h.size(), 128u); // numpy pads the preamble to 64 bytes
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 16), }";
  EXPECT_EQ(h.substr(10, dict.size()), dict);
  EXPECT_EQ(h.substr(10 + dict.size()),
            std::string(128 - 11 - dict.size(), ' ') + "\n");
  EXPECT_NE(npyHeader("<i8", {5}).find("'shape': (5,), }"), std::string::npos);
  EXPECT_NE(npyHeader("<i8", {}).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, ReadsVersions2And3AndVariants) {
  std::vector<float> v = {1, 2};
  for (int major : {2, 3}) {
    NpyArray a;
    std::string err;
    ASSERT_TRUE(
        parseNpy(toBytes(npyImage("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (2,), }",
                                  bytesOf(v), major)),
                 "x.npy", a, err))
        << err;
    EXPECT_EQ(a.major, major);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(valuesOf<float>(a.data(), 2), v);
  }
  // Key order, double quotes, no trailing comma, '=' byte order, 'L' suffix.
  NpyArray a;
  std::string err;
  ASSERT_TRUE(parseNpy(toBytes(npyImage("{\"shape\": (1L, 2L), \"descr\": "
                                        "'=f4', 'fortran_order': False}",
                                        bytesOf(v))),
                       "x.npy", a, err))
      << err;
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 2}));
}

TEST(Npy, Errors) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(2,), }";
  EXPECT_EQ(parseErr("hello world, not numpy"),
            "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(parseErr("\x93NUMPY"), "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(parseErr(npyImage(ok, "", 4)),
            "x.npy: unsupported .npy format version 4.0");
  EXPECT_EQ(parseErr(npyImage(ok, std::string(4, 0))),
            "x.npy: truncated data: shape (2,) with dtype '<f4' needs 8 "
            "bytes but the file has 4");
  EXPECT_EQ(parseErr(npyImage(ok, std::string(12, 0))),
            "x.npy: unexpected trailing data: shape (2,) with dtype '<f4' "
            "needs 8 bytes but the file has 12");
  EXPECT_EQ(parseErr(npyImage(ok, std::string(8, 0)).substr(0, 40)),
            "x.npy: truncated .npy header (header length 58, file is 40 "
            "bytes)");
  // Headers rejected in front of a valid payload for shape (2,) of <f4.
  const std::pair<const char *, const char *> badHeaders[] = {
      {"{'descr': '<f4', 'fortran_order': True, "
       "'shape': (2,), }",
       "x.npy: Fortran-order arrays are not supported (save a C-order "
       "array, e.g. with np.ascontiguousarray)"},
      {"{'descr': '>f4', 'fortran_order': False, "
       "'shape': (2,), }",
       "x.npy: big-endian data ('>f4') is not supported"},
      {"{'descr': [('a', '<f4')], 'fortran_order': "
       "False, 'shape': (2,), }",
       "x.npy: invalid .npy header: 'descr' is not a string (structured "
       "dtypes are not supported)"},
      {"{'descr': '<U5', 'fortran_order': False, "
       "'shape': (2,), }",
       "x.npy: unsupported dtype '<U5'"},
      {"{'descr': '<f4', 'shape': (2,), }",
       "x.npy: invalid .npy header: header lacks 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, "
       "'shape': (2,), 'extra': 1}",
       "x.npy: invalid .npy header: unexpected key 'extra' in the "
       "header"},
      {"{'descr': '<f4', 'fortran_order': False, "
       "'shape': (-2,), }",
       "x.npy: invalid .npy header: 'shape' is not a tuple of "
       "non-negative integers"},
  };
  for (const auto &c : badHeaders)
    EXPECT_EQ(parseErr(npyImage(c.first, std::string(8, 0))), c.second)
        << c.first;
  EXPECT_EQ(parseErr(npyImage("'descr'", "")),
            "x.npy: invalid .npy header: header is not a dict");
}

TEST(Npy, CheckAgainstModelInput) {
  TempDir dir;
  std::string err;
  std::vector<float> v(16, 1.0f);
  std::string path = dir.file("x.npy");
  ASSERT_TRUE(writeNpy(path, "<f4", {1, 16}, v.data(), 64, err)) << err;
  NpyArray a;
  ASSERT_TRUE(readNpy(path, a, err)) << err;
  EXPECT_FALSE(
      checkNpyForInput("x.npy", a, 0, input("arg0", DType::F32, {1, 32}), err));
  EXPECT_EQ(err, "x.npy: shape (1, 16) but the model's input 0 'arg0' "
                 "expects (1, 32)");
  EXPECT_FALSE(
      checkNpyForInput("x.npy", a, 1, input("ids", DType::I64, {1, 16}), err));
  EXPECT_EQ(err, "x.npy: dtype '<f4' (float32) but the model's input 1 'ids' "
                 "expects i64 ('<i8')");
  EXPECT_FALSE(
      checkNpyForInput("x.npy", a, 0, input("h", DType::BF16, {1, 16}), err));
  EXPECT_EQ(err, "x.npy: dtype '<f4' (float32) but the model's input 0 'h' "
                 "expects bf16 (stored as '<u2' raw bits)");
  // '<u2' is bf16 only when the model expects bf16.
  std::vector<uint16_t> u(4, 0x3f80);
  ASSERT_TRUE(writeNpy(path, "<u2", {4}, u.data(), 8, err)) << err;
  ASSERT_TRUE(readNpy(path, a, err)) << err;
  EXPECT_TRUE(
      checkNpyForInput("x.npy", a, 0, input("h", DType::BF16, {4}), err))
      << err;
  EXPECT_FALSE(
      checkNpyForInput("x.npy", a, 0, input("h", DType::F16, {4}), err));
  EXPECT_EQ(err, "x.npy: dtype '<u2' (uint16) but the model's input 0 'h' "
                 "expects f16 ('<f2')");
  // Dynamic (`?`) dimensions take any size; a wrong static one is named.
  std::vector<float> w(6, 1.0f);
  ASSERT_TRUE(writeNpy(path, "<f4", {2, 3}, w.data(), 24, err)) << err;
  ASSERT_TRUE(readNpy(path, a, err)) << err;
  EXPECT_TRUE(checkNpyForInput("x.npy", a, 0,
                               input("x", DType::F32, {kDynamicDim, 3}), err))
      << err;
  EXPECT_FALSE(checkNpyForInput("x.npy", a, 0,
                                input("x", DType::F32, {1, kDynamicDim}), err));
  EXPECT_EQ(err, "x.npy: shape (2, 3) but the model's input 0 'x' expects "
                 "(1, ?) (dimension 0 is 2, the model's is 1)");
  EXPECT_FALSE(checkNpyForInput(
      "x.npy", a, 0, input("x", DType::F32, {1, kDynamicDim, 3}), err));
  EXPECT_EQ(err, "x.npy: shape (2, 3) but the model's input 0 'x' expects "
                 "(1, ?, 3)");
}

TEST(Npy, FileErrors) {
  TempDir dir;
  NpyArray a;
  std::string err;
  EXPECT_FALSE(readNpy(dir.file("missing.npy"), a, err));
  EXPECT_EQ(err, dir.file("missing.npy") +
                     ": cannot open: No such file or directory");
  float v = 1;
  EXPECT_FALSE(writeNpy(dir.file("no/such/dir/y.npy"), "<f4", {1}, &v, 4, err));
  EXPECT_NE(err.find("cannot create a temporary file in '" +
                     dir.file("no/such/dir") + "'"),
            std::string::npos)
      << err;
  // Files get ordinary permissions, not mkstemp's 0600.
  ASSERT_TRUE(writeNpy(dir.file("y.npy"), "<f4", {1}, &v, 4, err)) << err;
  struct stat st;
  ASSERT_EQ(::stat(dir.file("y.npy").c_str(), &st), 0);
  mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"y.npy"}));
}

} // namespace
