//===- SafeTensorsTest.cpp - safetensors reader tests ---------------------===//

#include "SafeTensors.h"
#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace attnrt;
using namespace attnrt_test;

namespace {

class SafeTensorsTest : public ::testing::Test {
protected:
  TempDir dir;

  /// Writes `image` to a file and returns the open error ("" on success).
  std::string openErr(const std::string &image, SafeTensorsFile &f) {
    std::string path = dir.file("w.safetensors");
    writeFile(path, image);
    std::string err;
    if (f.open(path, err))
      return "";
    // Errors are prefixed with the path; strip it for comparison.
    EXPECT_EQ(err.compare(0, path.size() + 2, path + ": "), 0) << err;
    return err.substr(path.size() + 2);
  }
  std::string openErr(const std::string &image) {
    SafeTensorsFile f;
    return openErr(image, f);
  }

  static ManifestEntry weight(const std::string &name, DType t,
                              std::vector<int64_t> dims, int axis = -1,
                              std::vector<std::string> parts = {}) {
    ManifestEntry e;
    e.kind = EntryKind::Weight;
    e.name = name;
    e.dtype = t;
    e.dims = dims;
    numElements(dims, e.numElements);
    e.bytes = e.numElements * dtypeSize(t);
    e.concatAxis = axis;
    e.concatParts = parts;
    return e;
  }

  static ManifestEntry gathered(const std::string &name, DType t,
                                std::vector<int64_t> dims, int axis,
                                int64_t extent,
                                std::vector<GatherRange> ranges) {
    ManifestEntry e = weight(name, t, dims);
    e.gatherAxis = axis;
    e.gatherSourceExtent = extent;
    e.gatherRanges = ranges;
    return e;
  }

  /// Resolves `e` against `f` and gathers it: its numElements elements as T
  /// (empty, with a failure recorded, if either step fails). The buffer is
  /// prefilled with 0xa5 bytes so that elements left unwritten show.
  template <typename T>
  static std::vector<T> gatherAs(const SafeTensorsWeights &f,
                                 const ManifestEntry &e) {
    std::vector<const StTensor *> parts;
    std::string err;
    if (!resolveWeight(f, e, parts, err)) {
      ADD_FAILURE() << err;
      return {};
    }
    std::vector<T> out(static_cast<size_t>(e.numElements));
    std::memset(out.data(), 0xa5, out.size() * sizeof(T));
    if (!gatherWeight(f, e, parts, out.data())) {
      ADD_FAILURE() << "gatherWeight failed for '" << e.name << "'";
      return {};
    }
    return out;
  }

  /// The error of resolving `e` against `f`, which must fail.
  /// The error for tensor `name` of `path` stored with shape `stored` where
  /// the model expects `expected` (then `detail`, when given).
  static std::string shapeErr(const std::string &path, const std::string &name,
                              const std::string &stored,
                              const std::string &expected,
                              const std::string &detail = "") {
    return path + ": tensor '" + name + "' has shape " + stored +
           " but the model expects " + expected + detail;
  }
  static std::string resolveErr(const SafeTensorsWeights &f,
                                const ManifestEntry &e) {
    std::vector<const StTensor *> parts;
    std::string err;
    EXPECT_FALSE(resolveWeight(f, e, parts, err)) << e.name;
    return err;
  }
};

TEST_F(SafeTensorsTest, ParsesValidFile) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> b = {-1, 1LL << 40};
  std::vector<uint16_t> c = {0x3f80};
  std::string image = makeSafetensors({{"a", "F32", {2, 3}, bytesOf(a)},
                                       {"b.x", "I64", {2}, bytesOf(b)},
                                       {"c", "BF16", {}, bytesOf(c)},
                                       {"empty", "F16", {0, 5}, ""},
                                       {"d", "F64", {1}, std::string(8, 'x')}},
                                      /*withMetadata=*/true);
  SafeTensorsFile f;
  ASSERT_EQ(openErr(image, f), "");
  EXPECT_EQ(f.tensors().size(), 5u);
  EXPECT_EQ(f.fileSize(), image.size());
  EXPECT_EQ(f.headerBytes(), headerBytesOf(image));
  const StTensor *ta = f.find("a");
  ASSERT_NE(ta, nullptr);
  EXPECT_EQ(ta->dtype, "F32");
  EXPECT_EQ(ta->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ta->begin, 0u);
  EXPECT_EQ(ta->end, 24u);
  EXPECT_EQ(valuesOf<float>(f.tensorData(*ta), 6), a);
  const StTensor *tb = f.find("b.x");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(valuesOf<int64_t>(f.tensorData(*tb), 2), b);
  EXPECT_TRUE(f.find("c")->shape.empty());
  EXPECT_EQ(f.find("empty")->bytes(), 0u);
  EXPECT_EQ(f.find("__metadata__"), nullptr);
  EXPECT_EQ(f.find("missing"), nullptr);
}

TEST_F(SafeTensorsTest, TruncatedAndBadLength) {
  EXPECT_EQ(openErr("abcde"), "file is 5 bytes, too short for a safetensors "
                              "file (at least 8 bytes of header length "
                              "needed)");
  EXPECT_EQ(openErr(""), "file is 0 bytes, too short for a safetensors file "
                         "(at least 8 bytes of header length needed)");
  EXPECT_EQ(openErr(rawSafetensors("{}", "", 100)),
            "header length 100 is beyond the end of the file (10 bytes)");
  EXPECT_EQ(openErr(rawSafetensors("{}", "", UINT64_MAX - 1)),
            "header length 18446744073709551614 is beyond the end of the file "
            "(10 bytes)");
  // A header that a JSON parser would accept but is cut short.
  std::string image = makeSafetensors({{"a", "F32", {2}, std::string(8, 0)}});
  EXPECT_EQ(openErr(image.substr(0, image.size() - 4)),
            "tensor 'a': data_offsets [0, 8] end is beyond the data section "
            "(4 bytes)");
}

TEST_F(SafeTensorsTest, AbsurdHeaderLength) {
  // A sparse file big enough that a 101 MB header "fits".
  std::string path = dir.file("big.safetensors");
  const uint64_t n = 101ull * 1024 * 1024;
  writeFile(path, rawSafetensors("", "", n));
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(n + 8)), 0);
  SafeTensorsFile f;
  std::string err;
  EXPECT_FALSE(f.open(path, err));
  EXPECT_EQ(err, path + ": header length 105906176 is absurd (limit is "
                        "104857600 bytes)");
}

TEST_F(SafeTensorsTest, BadJson) {
  EXPECT_EQ(openErr(rawSafetensors("{\"a\": }", "")),
            "header is not valid JSON: unexpected character '}' (expected a "
            "value) at byte 6");
  EXPECT_EQ(openErr(rawSafetensors("{\"a\": {\"dtype\": \"F32\"", "")),
            "header is not valid JSON: unexpected end of input (expected ',' "
            "or '}') at byte 21");
  EXPECT_EQ(openErr(rawSafetensors("[1, 2]", "")),
            "header is not a JSON object (it is an array)");
  EXPECT_EQ(openErr(rawSafetensors("", "")),
            "header is not valid JSON: unexpected end of input (expected a "
            "value) at byte 0");
  EXPECT_EQ(openErr(rawSafetensors("{\"__metadata__\": 3}", "")),
            "'__metadata__' is not an object");
}

TEST_F(SafeTensorsTest, TensorsTileTheDataSection) {
  // Two F32 [2] tensors 'a' and 'b' at the given offsets.
  auto two = [&](const std::string &a, const std::string &b, size_t dataBytes) {
    const std::string entry =
        "{\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": ";
    return openErr(
        rawSafetensors("{\"a\": " + entry + a + "}, \"b\": " + entry + b + "}}",
                       std::string(dataBytes, 0)));
  };
  EXPECT_EQ(two("[0, 8]", "[8, 16]", 16), "");
  EXPECT_EQ(two("[8, 16]", "[0, 8]", 16), "");
  EXPECT_EQ(two("[0, 8]", "[4, 12]", 12),
            "tensor 'b': data_offsets [4, 12] overlap tensor 'a' at [0, 8]");
  EXPECT_EQ(two("[0, 8]", "[0, 8]", 8),
            "tensor 'b': data_offsets [0, 8] overlap tensor 'a' at [0, 8]");
  EXPECT_EQ(two("[0, 8]", "[12, 20]", 20),
            "tensor 'b': data_offsets [12, 20] leave bytes [8, 12) of the "
            "data section unused (tensors must tile it without holes)");
  EXPECT_EQ(two("[4, 12]", "[12, 20]", 20),
            "tensor 'a': data_offsets [4, 12] leave bytes [0, 4) of the "
            "data section unused (tensors must tile it without holes)");
  EXPECT_EQ(two("[0, 8]", "[8, 16]", 20),
            "the tensors cover 16 bytes of the 20-byte data section; the rest "
            "is unused (tensors must tile it without holes)");
  // Metadata maps strings to strings.
  EXPECT_EQ(openErr(rawSafetensors("{\"__metadata__\": {\"k\": 1}}", "")),
            "'__metadata__' value 'k' is not a string");
}

TEST_F(SafeTensorsTest, BadEntries) {
  auto err = [&](const std::string &entry, size_t dataBytes = 16) {
    return openErr(
        rawSafetensors("{\"t\": " + entry + "}", std::string(dataBytes, 0)));
  };
  EXPECT_EQ(err("[]"), "tensor 't': entry is not an object");
  EXPECT_EQ(err(R"({"shape": [2], "data_offsets": [0, 8]})"),
            "tensor 't': missing 'dtype'");
  EXPECT_EQ(err(R"({"dtype": "F32", "data_offsets": [0, 8]})"),
            "tensor 't': missing 'shape'");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [2]})"),
            "tensor 't': missing 'data_offsets'");
  EXPECT_EQ(err(R"({"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]})"),
            "tensor 't': unknown dtype 'Q4'");
  EXPECT_EQ(err(R"({"dtype": 4, "shape": [2], "data_offsets": [0, 8]})"),
            "tensor 't': 'dtype' is not a string");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})"),
            "tensor 't': 'shape' is not an array of non-negative integers");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})"),
            "tensor 't': 'shape' is not an array of non-negative integers");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [2], "data_offsets": [0]})"),
            "tensor 't': 'data_offsets' is not a pair of non-negative "
            "integers");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]})"),
            "tensor 't': data_offsets [8, 0] begin is after end");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [2], "data_offsets": [12, 20]})"),
            "tensor 't': data_offsets [12, 20] end is beyond the data section "
            "(16 bytes)");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]})"),
            "tensor 't': data_offsets [0, 8] span 8 bytes but shape [3] with "
            "dtype F32 needs 12");
  EXPECT_EQ(
      err(R"({"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 16]})"),
      "tensor 't': data_offsets [0, 16] span 16 bytes but shape [2, 2] "
      "with dtype BF16 needs 8");
  EXPECT_EQ(err(R"({"dtype": "F32", "shape": [4294967296, 4294967296],)"
                R"( "data_offsets": [0, 8]})"),
            "tensor 't': shape [4294967296, 4294967296] is too large");
}

TEST_F(SafeTensorsTest, MissingFile) {
  SafeTensorsWeights f;
  std::string err;
  EXPECT_FALSE(f.open(dir.file("nope.safetensors"), err));
  EXPECT_EQ(err, dir.file("nope.safetensors") +
                     ": cannot open: No such file or directory");
}

TEST_F(SafeTensorsTest, ResolveAgainstManifest) {
  std::string path = dir.file("weights.safetensors");
  writeFile(path,
            makeSafetensors({{"encoder.layer.0.attention.self.query.weight",
                              "F32",
                              {768, 768},
                              std::string(768 * 768 * 4, 0)},
                             {"h", "F16", {4}, std::string(8, 0)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;
  const char *query = "encoder.layer.0.attention.self.query.weight";
  EXPECT_EQ(resolveErr(f, weight(query, DType::F32, {768, 512})),
            shapeErr(path, query, "[768, 768]", "[768, 512]"));
  EXPECT_EQ(resolveErr(f, weight("h", DType::BF16, {4})),
            path + ": tensor 'h' has dtype F16 but the model expects BF16");
  EXPECT_EQ(resolveErr(f, weight("gone", DType::F32, {4})),
            path + ": the model needs tensor 'gone' but the file does not "
                   "contain it");
  std::vector<const StTensor *> parts;
  ASSERT_TRUE(resolveWeight(f, weight("h", DType::F16, {4}), parts, err))
      << err;
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0]->name, "h");
}

TEST_F(SafeTensorsTest, ConcatWeights) {
  std::string path = dir.file("w.safetensors");
  // Three [2, k] int32 tensors concatenated along axis 1 (interleaving rows)
  // and along axis 0 after a reshape-compatible check.
  std::vector<int32_t> q = {1, 2, 3, 4};        // [2, 2]
  std::vector<int32_t> k = {5, 6, 7, 8, 9, 10}; // [2, 3]
  std::vector<int32_t> v = {11, 12};            // [2, 1]
  writeFile(path, makeSafetensors({{"q", "I32", {2, 2}, bytesOf(q)},
                                   {"k", "I32", {2, 3}, bytesOf(k)},
                                   {"v", "I32", {2, 1}, bytesOf(v)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;
  std::vector<const StTensor *> parts;
  ManifestEntry w = weight("qkv", DType::I32, {2, 6}, 1, {"q", "k", "v"});
  ASSERT_TRUE(resolveWeight(f, w, parts, err)) << err;
  ASSERT_EQ(parts.size(), 3u);
  std::vector<int32_t> out(12, -1);
  gatherWeight(f, w, parts, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 5, 6, 7, 11, 3, 4, 8, 9, 10, 12}));

  // Along axis 0: [2,2] ++ [2,2] would need equal trailing dims.
  ManifestEntry w0 = weight("qq", DType::I32, {4, 2}, 0, {"q", "q"});
  ASSERT_TRUE(resolveWeight(f, w0, parts, err)) << err;
  std::vector<int32_t> out0(8, -1);
  gatherWeight(f, w0, parts, out0.data());
  EXPECT_EQ(out0, (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));

  EXPECT_FALSE(resolveWeight(
      f, weight("qkv", DType::I32, {2, 7}, 1, {"q", "k", "v"}), parts, err));
  EXPECT_EQ(err, path + ": tensors q, k, v concatenated along axis 1 give "
                        "shape [2, 6] but the model's weight 'qkv' expects "
                        "[2, 7]");
  EXPECT_FALSE(resolveWeight(f, weight("qk", DType::I32, {5, 2}, 0, {"q", "k"}),
                             parts, err));
  EXPECT_EQ(err, path + ": tensor 'k' has shape [2, 3] but the model expects "
                        "[*, 2] (part 2 of weight 'qk', concatenated along "
                        "axis 0)");
  EXPECT_FALSE(resolveWeight(f, weight("qx", DType::I32, {2, 4}, 1, {"q", "x"}),
                             parts, err));
  EXPECT_EQ(err, path + ": the model needs tensor 'x' but the file does not "
                        "contain it (part 2 of weight 'qx', concatenated "
                        "along axis 1)");
  EXPECT_FALSE(resolveWeight(f, weight("qk", DType::F32, {2, 5}, 1, {"q", "k"}),
                             parts, err));
  EXPECT_EQ(err, path + ": tensor 'q' has dtype I32 but the model expects "
                        "F32 (part 1 of weight 'qk', concatenated along axis "
                        "1)");
}

TEST_F(SafeTensorsTest, GatherWeights) {
  std::string path = dir.file("w.safetensors");
  std::vector<int32_t> w(4 * 3); // [4, 3]: w[r][c] = 10 * r + c
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      w[r * 3 + c] = 10 * r + c;
  std::vector<int32_t> t3(2 * 3 * 4); // [2, 3, 4]: 100 * i + 10 * j + k
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        t3[(i * 3 + j) * 4 + k] = 100 * i + 10 * j + k;
  writeFile(path, makeSafetensors({{"w", "I32", {4, 3}, bytesOf(w)},
                                   {"t3", "I32", {2, 3, 4}, bytesOf(t3)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;
  std::vector<const StTensor *> parts;

  // Axis 0 (pruned rows): rows 3, then 0..1, then 1 again (overlap).
  ManifestEntry g0 =
      gathered("w", DType::I32, {4, 3}, 0, 4, {{3, 1}, {0, 2}, {1, 1}});
  ASSERT_TRUE(resolveWeight(f, g0, parts, err)) << err;
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0]->name, "w");
  std::vector<int32_t> out0(12, -1);
  gatherWeight(f, g0, parts, out0.data());
  EXPECT_EQ(out0, (std::vector<int32_t>{30, 31, 32, 0, 1, 2, 10, 11, 12, 10, 11,
                                        12}));

  // Axis 1 (pruned columns): columns 2, then 0.
  ManifestEntry g1 = gathered("w", DType::I32, {4, 2}, 1, 3, {{2, 1}, {0, 1}});
  ASSERT_TRUE(resolveWeight(f, g1, parts, err)) << err;
  std::vector<int32_t> out1(8, -1);
  gatherWeight(f, g1, parts, out1.data());
  EXPECT_EQ(out1, (std::vector<int32_t>{2, 0, 12, 10, 22, 20, 32, 30}));

  // Middle axis of a rank-3 tensor, and the last axis.
  ManifestEntry m1 =
      gathered("t3", DType::I32, {2, 2, 4}, 1, 3, {{2, 1}, {0, 1}});
  ASSERT_TRUE(resolveWeight(f, m1, parts, err)) << err;
  std::vector<int32_t> outm(16, -1);
  gatherWeight(f, m1, parts, outm.data());
  EXPECT_EQ(outm, (std::vector<int32_t>{20, 21, 22, 23, 0, 1, 2, 3, 120, 121,
                                        122, 123, 100, 101, 102, 103}));
  ManifestEntry m2 = gathered("t3", DType::I32, {2, 3, 2}, 2, 4, {{1, 2}});
  ASSERT_TRUE(resolveWeight(f, m2, parts, err)) << err;
  std::vector<int32_t> outl(12, -1);
  gatherWeight(f, m2, parts, outl.data());
  EXPECT_EQ(outl, (std::vector<int32_t>{1, 2, 11, 12, 21, 22, 101, 102, 111,
                                        112, 121, 122}));

  // The whole source, in order, is the tensor itself.
  ManifestEntry all = gathered("w", DType::I32, {4, 3}, 0, 4, {{0, 4}});
  ASSERT_TRUE(resolveWeight(f, all, parts, err)) << err;
  std::vector<int32_t> outa(12, -1);
  gatherWeight(f, all, parts, outa.data());
  EXPECT_EQ(outa, w);
}

TEST_F(SafeTensorsTest, TransposedWeights) {
  std::string path = dir.file("w.safetensors");
  std::vector<int32_t> w(4 * 3), k(1 * 3); // w[r][c] = 10 * r + c
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      w[r * 3 + c] = 10 * r + c;
  k = {100, 101, 102};
  writeFile(path, makeSafetensors({{"w", "I32", {4, 3}, bytesOf(w)},
                                   {"k", "I32", {1, 3}, bytesOf(k)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;

  // Plain: the buffer [3, 4] is w^T.
  ManifestEntry t = weight("w", DType::I32, {3, 4});
  t.transpose = true;
  EXPECT_EQ(
      gatherAs<int32_t>(f, t),
      (std::vector<int32_t>{0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32}));

  // Gathered rows 3 and 1 of w ([2, 3]), transposed to [3, 2].
  ManifestEntry g = gathered("w", DType::I32, {2, 3}, 0, 4, {{3, 1}, {1, 1}});
  g.dims = {3, 2};
  g.transpose = true;
  EXPECT_EQ(gatherAs<int32_t>(f, g),
            (std::vector<int32_t>{30, 10, 31, 11, 32, 12}));

  // w and k concatenated along axis 0 ([5, 3]), transposed to [3, 5].
  ManifestEntry c = weight("wk", DType::I32, {3, 5});
  c.concatAxis = 0;
  c.concatParts = {"w", "k"};
  c.transpose = true;
  EXPECT_EQ(gatherAs<int32_t>(f, c),
            (std::vector<int32_t>{0, 10, 20, 30, 100, 1, 11, 21, 31, 101, 2, 12,
                                  22, 32, 102}));

  // Shape errors name the untransposed shape the file must hold.
  ManifestEntry bad = weight("w", DType::I32, {4, 3});
  bad.transpose = true;
  EXPECT_EQ(resolveErr(f, bad), shapeErr(path, "w", "[4, 3]", "[3, 4]"));
}

TEST_F(SafeTensorsTest, PanelWeights) {
  std::string path = dir.file("w.safetensors");
  // w [4, 3]: w[r][c] = 10 * r + c; v [2, 4]: v[r][c] = 10 * r + c.
  std::vector<int32_t> w(4 * 3), v(2 * 4);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      w[r * 3 + c] = 10 * r + c;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c)
      v[r * 4 + c] = 10 * r + c;
  writeFile(path, makeSafetensors({{"w", "I32", {4, 3}, bytesOf(w)},
                                   {"v", "I32", {2, 4}, bytesOf(v)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;

  // Each layout against the buffer it must give.
  auto expectPanels = [&](const char *what, const char *name,
                          std::vector<int64_t> dims, bool transpose, bool pairs,
                          const std::vector<int32_t> &want) {
    ManifestEntry e = weight(name, DType::I32, dims);
    e.panels = true;
    e.transpose = transpose;
    e.pairs = pairs;
    EXPECT_EQ(gatherAs<int32_t>(f, e), want) << what;
  };
  expectPanels("v as stored ([K, N] = [2, 4]) in panels of 2 columns", "v",
               {2, 2, 2}, false, false, {0, 1, 10, 11, 2, 3, 12, 13});
  expectPanels("w^T ([3, 4]) in panels of 2 columns", "w", {2, 3, 2}, true,
               false, {0, 10, 1, 11, 2, 12, 20, 30, 21, 31, 22, 32});
  // Rows (0, 1) and (2, 3) of each column side by side.
  expectPanels("w as stored ([4, 3]) in pair panels of 3 columns", "w",
               {1, 2, 6}, false, true,
               {0, 10, 1, 11, 2, 12, 20, 30, 21, 31, 22, 32});
  expectPanels("v ([2, 4]) in pair panels of 2 columns", "v", {2, 1, 4}, false,
               true, {0, 10, 1, 11, 2, 12, 3, 13});

  // Shape errors name the tensor the file must hold.
  ManifestEntry bad = weight("w", DType::I32, {2, 4, 2});
  bad.transpose = true;
  bad.panels = true;
  EXPECT_EQ(resolveErr(f, bad), shapeErr(path, "w", "[4, 3]", "[4, 4]"));
}

TEST_F(SafeTensorsTest, ConvertedWeights) {
  std::string path = dir.file("w.safetensors");
  // a [2, 2] f32: 1, 2.5, -0.1, 65520 (f16 overflows to infinity there);
  // b [1, 2] f32 for a concatenation; h [2] f16: 1.5, -2; g [2] bf16: 1.5,
  // -2.5.
  std::vector<float> a = {1.0f, 2.5f, -0.1f, 65520.0f};
  std::vector<float> b = {3.0f, 0.5f};
  std::vector<uint16_t> h = {0x3e00, 0xc000};
  std::vector<uint16_t> g = {0x3fc0, 0xc020};
  writeFile(path, makeSafetensors({{"a", "F32", {2, 2}, bytesOf(a)},
                                   {"b", "F32", {1, 2}, bytesOf(b)},
                                   {"h", "F16", {2}, bytesOf(h)},
                                   {"g", "BF16", {2}, bytesOf(g)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;

  // Without `convert` the dtypes must match.
  ManifestEntry plain = weight("a", DType::F16, {2, 2});
  EXPECT_EQ(resolveErr(f, plain),
            path + ": tensor 'a' has dtype F32 but the model expects F16");

  // f32 -> f16, rounded to nearest even; too large is infinity.
  ManifestEntry half = plain;
  half.convert = true;
  EXPECT_EQ(gatherAs<uint16_t>(f, half),
            (std::vector<uint16_t>{0x3c00, 0x4100, 0xae66, 0x7c00}));

  // Converted to bf16 as stored: straight from the file.
  ManifestEntry plainBf = weight("a", DType::BF16, {2, 2});
  plainBf.convert = true;
  EXPECT_EQ(gatherAs<uint16_t>(f, plainBf),
            (std::vector<uint16_t>{0x3f80, 0x4020, 0xbdcd, 0x4780}));
  ManifestEntry fromBf = weight("g", DType::F32, {2});
  fromBf.convert = true;
  EXPECT_EQ(gatherAs<float>(f, fromBf), (std::vector<float>{1.5f, -2.5f}));

  // Transposed and converted to bf16: the transpose of a, then rounded.
  ManifestEntry bf = weight("a", DType::BF16, {2, 2});
  bf.transpose = true;
  bf.convert = true;
  EXPECT_EQ(gatherAs<uint16_t>(f, bf),
            (std::vector<uint16_t>{0x3f80, 0xbdcd, 0x4020, 0x4780}));

  // A concatenation is assembled as stored, then converted.
  ManifestEntry cat = weight("ab", DType::F16, {3, 2}, 0, {"a", "b"});
  cat.convert = true;
  EXPECT_EQ(
      gatherAs<uint16_t>(f, cat),
      (std::vector<uint16_t>{0x3c00, 0x4100, 0xae66, 0x7c00, 0x4200, 0x3800}));

  // f16 -> f32 is exact; a file already in the model's type is copied.
  ManifestEntry wide = weight("h", DType::F32, {2});
  wide.convert = true;
  EXPECT_EQ(gatherAs<float>(f, wide), (std::vector<float>{1.5f, -2.0f}));
  ManifestEntry same = weight("h", DType::F16, {2});
  same.convert = true;
  EXPECT_EQ(gatherAs<uint16_t>(f, same), h);

  // The shape is still checked against the stored tensor.
  ManifestEntry shape = weight("a", DType::F16, {4, 1});
  shape.convert = true;
  EXPECT_EQ(resolveErr(f, shape), shapeErr(path, "a", "[2, 2]", "[4, 1]"));
}

TEST_F(SafeTensorsTest, GatherSourceErrors) {
  std::string path = dir.file("w.safetensors");
  writeFile(path, makeSafetensors({{"layer.0.attn.q.weight",
                                    "F32",
                                    {768, 768},
                                    std::string(768 * 768 * 4, 0)}}));
  SafeTensorsWeights f;
  std::string err;
  ASSERT_TRUE(f.open(path, err)) << err;
  std::vector<const StTensor *> parts;
  // The manifest says the unpruned tensor has 1024 rows; the file has 768.
  EXPECT_FALSE(
      resolveWeight(f,
                    gathered("layer.0.attn.q.weight", DType::F32, {512, 768}, 0,
                             1024, {{0, 256}, {512, 256}}),
                    parts, err));
  EXPECT_EQ(err, path + ": tensor 'layer.0.attn.q.weight' has shape "
                        "[768, 768] but the model expects [1024, 768] (the "
                        "source of weight 'layer.0.attn.q.weight' of shape "
                        "[512, 768], gathered along axis 0 from start:length "
                        "slices 0:256,512:256)");
  EXPECT_TRUE(parts.empty());
  // A non-gathered dimension differs.
  EXPECT_FALSE(resolveWeight(f,
                             gathered("layer.0.attn.q.weight", DType::F32,
                                      {512, 512}, 0, 768, {{0, 512}}),
                             parts, err));
  EXPECT_EQ(err, path + ": tensor 'layer.0.attn.q.weight' has shape "
                        "[768, 768] but the model expects [768, 512] (the "
                        "source of weight 'layer.0.attn.q.weight' of shape "
                        "[512, 512], gathered along axis 0 from start:length "
                        "slices 0:512)");
  // Rank differs.
  EXPECT_FALSE(resolveWeight(f,
                             gathered("layer.0.attn.q.weight", DType::F32,
                                      {768, 64, 6}, 2, 12, {{0, 6}}),
                             parts, err));
  EXPECT_EQ(err, path + ": tensor 'layer.0.attn.q.weight' has shape "
                        "[768, 768] but the model expects [768, 64, 12] (the "
                        "source of weight 'layer.0.attn.q.weight' of shape "
                        "[768, 64, 6], gathered along axis 2 from "
                        "start:length slices 0:6)");
  EXPECT_FALSE(resolveWeight(f,
                             gathered("layer.0.attn.q.weight", DType::BF16,
                                      {768, 64}, 1, 768, {{64, 64}}),
                             parts, err));
  EXPECT_EQ(err, path + ": tensor 'layer.0.attn.q.weight' has dtype F32 but "
                        "the model expects BF16 (the source of weight "
                        "'layer.0.attn.q.weight' of shape [768, 64], gathered "
                        "along axis 1 from start:length slices 64:64)");
  EXPECT_FALSE(resolveWeight(
      f, gathered("layer.1.attn.q.weight", DType::F32, {2}, 0, 4, {{1, 2}}),
      parts, err));
  EXPECT_EQ(err, path + ": the model needs tensor 'layer.1.attn.q.weight' but "
                        "the file does not contain it (the source of weight "
                        "'layer.1.attn.q.weight' of shape [2], gathered along "
                        "axis 0 from start:length slices 1:2)");
  // Correct: heads 2 and 5 of 12 (64 columns each) kept.
  ASSERT_TRUE(
      resolveWeight(f,
                    gathered("layer.0.attn.q.weight", DType::F32, {768, 128}, 1,
                             768, {{128, 64}, {320, 64}}),
                    parts, err))
      << err;
}

} // namespace
