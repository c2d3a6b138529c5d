//===- ManifestSchemaTest.cpp - dtype table and manifest round trip -------===//
//
// The compiler writes manifests with attnrt::writeManifest and the runtime
// parses them with parseManifest; both take their keywords and dtypes from
// attnc/Runtime/ManifestSchema.h. These tests pin the table and check that
// everything the writer can express parses back to the same records.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/ManifestSchema.h"
#include "attnc/Runtime/TensorIO.h"
#include "attnc/Runtime/attnrt.h"

#include "Manifest.h"

#include "gtest/gtest.h"

#include <cstring>
#include <tuple>

using namespace attnrt;

namespace {

/// The fields of a record the manifest round trip must preserve.
auto fieldsOf(const ManifestRecord &r) {
  return std::tie(r.kind, r.name, r.dtype, r.dims, r.concatAxis, r.concatParts,
                  r.gatherAxis, r.gatherSourceExtent, r.gatherRanges,
                  r.transpose, r.panels, r.pairs, r.convert, r.idBound,
                  r.causal, r.recomputePast, r.dimsFrom);
}

TEST(DTypeTable, Spellings) {
  struct Expected {
    DType dtype;
    attnrt_dtype c;
    const char *name, *npy, *safetensors;
    size_t bytes;
  };
  const Expected all[] = {
      {DType::F32, ATTNRT_F32, "f32", "<f4", "F32", 4},
      {DType::F16, ATTNRT_F16, "f16", "<f2", "F16", 2},
      {DType::BF16, ATTNRT_BF16, "bf16", "<u2", "BF16", 2},
      {DType::I32, ATTNRT_I32, "i32", "<i4", "I32", 4},
      {DType::I64, ATTNRT_I64, "i64", "<i8", "I64", 8},
  };
  ASSERT_EQ(std::size(kDTypes), std::size(all));
  for (const Expected &e : all) {
    const DTypeInfo &info = dtypeInfo(e.dtype);
    EXPECT_EQ(static_cast<int>(e.dtype), static_cast<int>(e.c));
    EXPECT_STREQ(info.name, e.name);
    EXPECT_STREQ(dtypeName(e.dtype), e.name);
    EXPECT_STREQ(info.npyDescr, e.npy);
    EXPECT_STREQ(info.safetensorsName, e.safetensors);
    EXPECT_EQ(dtypeSize(e.dtype), e.bytes);
    ASSERT_NE(lookupDType(e.name), nullptr);
    EXPECT_EQ(lookupDType(e.name)->dtype, e.dtype);
  }
  EXPECT_EQ(lookupDType("f64"), nullptr);
  EXPECT_EQ(lookupDType("F32"), nullptr);
  EXPECT_EQ(dtypeNameList(), "f32, f16, bf16, i32 or i64");
}

TEST(DTypeTable, ElementAsDouble) {
  const uint16_t half = 0x3c00, bf16 = 0x3f80; // both 1.0
  const float f = -2.5f;
  const int32_t i = -7;
  const int64_t l = int64_t(1) << 40;
  EXPECT_EQ(elementAsDouble(&half, DType::F16, 0), 1.0);
  EXPECT_EQ(elementAsDouble(&bf16, DType::BF16, 0), 1.0);
  EXPECT_EQ(elementAsDouble(&f, DType::F32, 0), -2.5);
  EXPECT_EQ(elementAsDouble(&i, DType::I32, 0), -7.0);
  EXPECT_EQ(elementAsDouble(&l, DType::I64, 0), 1099511627776.0);
}

TEST(DTypeTable, Keywords) {
  EXPECT_STREQ(targetName(Target::CPU), "cpu");
  EXPECT_STREQ(targetName(Target::CUDA), "cuda");
  EXPECT_EQ(lookupTarget("cuda"), Target::CUDA);
  EXPECT_EQ(lookupTarget("rocm"), std::nullopt);
  EXPECT_EQ(lookupEntryKind("output"), EntryKind::Output);
  EXPECT_EQ(lookupEntryKind("target"), std::nullopt);
}

ManifestRecord record(EntryKind kind, const std::string &name, DType dtype,
                      std::vector<int64_t> dims) {
  ManifestRecord r;
  r.kind = kind;
  r.name = name;
  r.dtype = dtype;
  r.dims = std::move(dims);
  return r;
}

// Every kind of record the compiler emits survives write -> parse.
TEST(ManifestSchema, RoundTrip) {
  std::vector<ManifestRecord> records;
  records.push_back(record(EntryKind::Weight, "w.0", DType::BF16, {768, 512}));
  ManifestRecord qkv = record(EntryKind::Weight, "qkv", DType::F16, {3, 2});
  qkv.concatAxis = 1;
  qkv.concatParts = {"q", "k.x", "v"};
  records.push_back(qkv);
  ManifestRecord g = record(EntryKind::Weight, "g", DType::F32, {8, 4});
  g.gatherAxis = 0;
  g.gatherSourceExtent = 6;
  g.gatherRanges = {{0, 2}, {4, 2}};
  g.transpose = true; // the gather refers to the untransposed [4, 6] tensor
  g.dims = {4, 4};
  records.push_back(g);
  ManifestRecord t = record(EntryKind::Weight, "w.0", DType::BF16, {512, 768});
  t.transpose = true;
  t.convert = true;
  records.push_back(t);
  // Panels of W^T [768, 512] (a [512, 768] tensor), converted.
  ManifestRecord pt =
      record(EntryKind::Weight, "w.0", DType::F32, {8, 768, 64});
  pt.transpose = true;
  pt.panels = true;
  pt.convert = true;
  records.push_back(pt);
  // The same in bf16 pair panels: [8, 768 / 2, 2 * 64].
  ManifestRecord pairs =
      record(EntryKind::Weight, "w.0", DType::BF16, {8, 384, 128});
  pairs.transpose = true;
  pairs.panels = true;
  pairs.pairs = true;
  pairs.convert = true;
  records.push_back(pairs);
  records.push_back(record(EntryKind::Input, "ids", DType::I64, {1, 128}));
  ManifestRecord bounded = record(EntryKind::Input, "tt", DType::I32, {1, 8});
  bounded.idBound = 2;
  records.push_back(bounded);
  records.push_back(record(EntryKind::Input, "scale", DType::F32, {}));
  records.push_back(record(EntryKind::Output, "out", DType::I32, {0, 4}));

  for (Target target : {Target::CPU, Target::CUDA}) {
    std::string text = writeManifest(target, records);
    Manifest m;
    std::string err;
    ASSERT_TRUE(parseManifest(text.c_str(), m, err)) << err << "\n" << text;
    EXPECT_EQ(m.version, kManifestVersion);
    EXPECT_EQ(m.target, target);
    ASSERT_EQ(m.entries.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      const ManifestRecord &want = records[i];
      const ManifestEntry &got = m.entries[i];
      EXPECT_EQ(fieldsOf(got), fieldsOf(want)) << i;
      EXPECT_EQ(formatManifestRecord(got), formatManifestRecord(want)) << i;
    }
    EXPECT_EQ(m.weights, (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(m.inputs, (std::vector<int>{6, 7, 8}));
    EXPECT_EQ(m.outputs, (std::vector<int>{9}));
  }
}

// The exact text, as attn-emit-model-entry's lit tests and compiled models
// have it: the format is an ABI.
TEST(ManifestSchema, Text) {
  ManifestRecord g = record(EntryKind::Weight, "g", DType::F32, {8, 4});
  g.gatherAxis = 0;
  g.gatherSourceExtent = 6;
  g.gatherRanges = {{0, 2}, {4, 2}};
  g.transpose = true;
  ManifestRecord c = record(EntryKind::Weight, "qkv", DType::F16, {3, 2});
  c.concatAxis = 1;
  c.concatParts = {"q", "k", "v"};
  c.convert = true;
  ManifestRecord ids = record(EntryKind::Input, "ids", DType::I64, {1, 16});
  ids.idBound = 30522;
  EXPECT_EQ(
      writeManifest(Target::CUDA,
                    {g, c, record(EntryKind::Input, "x", DType::I32, {}), ids,
                     record(EntryKind::Output, "y", DType::F32, {2})}),
      "attnc-manifest 1\n"
      "target cuda\n"
      "weight g f32 8x4 gather 0 6 0:2,4:2 transpose\n"
      "weight qkv f16 3x2 concat 1 q,k,v convert\n"
      "input x i32 scalar\n"
      "input ids i64 1x16 ids 30522\n"
      "output y f32 2\n");
}

// Dynamic sizes: `?` in the dims and one dims_from per `?`, before the
// other trailing keywords; the writer's text parses back to the records.
TEST(ManifestSchema, DynamicDims) {
  ManifestRecord ids =
      record(EntryKind::Input, "ids", DType::I64, {kDynamicDim, kDynamicDim});
  ids.dimsFrom = {{-1, -1}, {-1, -1}};
  ids.idBound = 100;
  ManifestRecord mask =
      record(EntryKind::Input, "mask", DType::F32, {kDynamicDim, kDynamicDim});
  mask.dimsFrom = {{0, 0}, {0, 1}};
  ManifestRecord y = record(EntryKind::Output, "y", DType::F32,
                            {kDynamicDim, kDynamicDim, 64});
  y.dimsFrom = {{0, 0}, {0, 1}};
  y.causal = true;
  y.recomputePast = 4096;
  std::vector<ManifestRecord> records = {ids, mask, y};
  std::string text = writeManifest(Target::CPU, records);
  EXPECT_EQ(
      text,
      "attnc-manifest 1\n"
      "target cpu\n"
      "input ids i64 ?x? dims_from -,- ids 100\n"
      "input mask f32 ?x? dims_from 0:0,0:1\n"
      "output y f32 ?x?x64 dims_from 0:0,0:1 causal recompute_past 4096\n");
  Manifest m;
  std::string err;
  ASSERT_TRUE(parseManifest(text.c_str(), m, err)) << err;
  ASSERT_EQ(m.entries.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(fieldsOf(m.entries[i]), fieldsOf(records[i])) << i;
    EXPECT_TRUE(m.entries[i].isDynamic());
  }
  EXPECT_TRUE(m.entries[2].causal);
  EXPECT_EQ(m.entries[2].recomputePast, 4096);
}

} // namespace
