//===- JsonManifestTest.cpp - JSON parser and manifest tests --------------===//

#include "Json.h"
#include "Manifest.h"

#include "gtest/gtest.h"

using namespace attnrt;

namespace {

JsonValue parseOk(const std::string &text) {
  JsonValue v;
  std::string err;
  EXPECT_TRUE(parseJson(text.data(), text.size(), v, err)) << err;
  return v;
}

std::string parseErr(const std::string &text) {
  JsonValue v;
  std::string err;
  EXPECT_FALSE(parseJson(text.data(), text.size(), v, err)) << text;
  return err;
}

TEST(Json, Scalars) {
  EXPECT_EQ(parseOk("null").kind, JsonValue::Null);
  JsonValue t = parseOk(" true ");
  EXPECT_EQ(t.kind, JsonValue::Bool);
  EXPECT_TRUE(t.boolean);
  EXPECT_FALSE(parseOk("false").boolean);
  JsonValue n = parseOk("-12.5e2");
  EXPECT_EQ(n.kind, JsonValue::Number);
  EXPECT_DOUBLE_EQ(n.asDouble(), -1250.0);
  uint64_t u = 0;
  EXPECT_FALSE(n.asU64(u));
  EXPECT_TRUE(parseOk("18446744073709551615").asU64(u));
  EXPECT_EQ(u, UINT64_MAX);
  EXPECT_FALSE(parseOk("18446744073709551616").asU64(u));
  EXPECT_FALSE(parseOk("1.0").asU64(u));
  EXPECT_TRUE(parseOk("0").asU64(u));
  EXPECT_EQ(u, 0u);
}

TEST(Json, StringEscapes) {
  JsonValue s =
      parseOk(R"("a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00")");
  ASSERT_EQ(s.kind, JsonValue::String);
  EXPECT_EQ(s.text, "a\"b\\c/d\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(Json, Containers) {
  JsonValue v = parseOk(R"({"a": [1, 2, {"b": null}], "c": {}, "d": []})");
  ASSERT_EQ(v.kind, JsonValue::Object);
  ASSERT_EQ(v.keys.size(), 3u);
  EXPECT_EQ(v.keys[0], "a");
  const JsonValue *a = v.get("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->kind, JsonValue::Array);
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(a->items[2].get("b")->kind, JsonValue::Null);
  EXPECT_EQ(v.get("c")->kind, JsonValue::Object);
  EXPECT_EQ(v.get("d")->items.size(), 0u);
  EXPECT_EQ(v.get("zz"), nullptr);
}

TEST(Json, Errors) {
  EXPECT_EQ(parseErr(R"({"a": })"),
            "unexpected character '}' (expected a value) at byte 6");
  EXPECT_EQ(parseErr("[1, 2,]"),
            "unexpected character ']' (expected a value) at byte 6");
  EXPECT_EQ(parseErr(R"({"a": 1,})"), "expected a string key at byte 8");
  EXPECT_EQ(parseErr(R"({"a" 1})"), "expected ':' after key at byte 5");
  EXPECT_EQ(parseErr(R"({"a": 1 "b": 2})"), "expected ',' or '}' at byte 8");
  EXPECT_EQ(parseErr(R"({"a": 1, "a": 2})"), "duplicate key \"a\" at byte 9");
  EXPECT_EQ(parseErr("\"abc"), "unterminated string at byte 4");
  EXPECT_EQ(parseErr("\"a\nb\""), "control character in string at byte 2");
  EXPECT_EQ(parseErr(R"("\x")"), "invalid escape '\\x' at byte 2");
  EXPECT_EQ(parseErr(R"("\ud800")"),
            "unpaired surrogate in \\u escape at byte 7");
  EXPECT_EQ(parseErr(R"("\u12g4")"), "invalid \\u escape at byte 3");
  EXPECT_EQ(parseErr("01"), "unexpected trailing characters at byte 1");
  EXPECT_EQ(parseErr("1."),
            "invalid number (expected digits after '.') at byte 2");
  EXPECT_EQ(parseErr("-"), "invalid number at byte 1");
  EXPECT_EQ(parseErr("tru"), "invalid literal (expected 'true') at byte 0");
  EXPECT_EQ(parseErr("{} x"), "unexpected trailing characters at byte 3");
  EXPECT_EQ(parseErr(""),
            "unexpected end of input (expected a value) at byte 0");
  EXPECT_EQ(parseErr("[1"),
            "unexpected end of input (expected ',' or ']') at byte 2");
  EXPECT_EQ(parseErr(std::string(1000, '[')), "nesting too deep at byte 129");
}

Manifest manifestOk(const char *text) {
  Manifest m;
  std::string err;
  EXPECT_TRUE(parseManifest(text, m, err)) << err;
  return m;
}

std::string manifestErr(const char *text) {
  Manifest m;
  std::string err;
  EXPECT_FALSE(parseManifest(text, m, err)) << text;
  return err;
}

/// A CPU manifest: the header, then `records` (each ending in a newline).
Manifest cpuManifestOk(const std::string &records) {
  return manifestOk(("attnc-manifest 1\ntarget cpu\n" + records).c_str());
}

std::string cpuManifestErr(const std::string &records) {
  return manifestErr(("attnc-manifest 1\ntarget cpu\n" + records).c_str());
}

/// The error for a manifest whose only record (line 3) is `record`.
std::string recordErr(const std::string &record) {
  return cpuManifestErr(record + "\n");
}

TEST(Manifest, Parses) {
  Manifest m = manifestOk("attnc-manifest 1\r\n"
                          "# a comment\n"
                          "\n"
                          "target cuda\n"
                          "weight w.0 bf16 768x512\n"
                          "weight qkv f16 3x2 concat 1 q,k.x,v\n"
                          "input ids i64 1x128\n"
                          "input  scale\tf32   scalar\n"
                          "output out i32 0x4");
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.target, Target::CUDA);
  ASSERT_EQ(m.entries.size(), 5u);
  EXPECT_EQ(m.weights, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.inputs, (std::vector<int>{2, 3}));
  EXPECT_EQ(m.outputs, (std::vector<int>{4}));
  EXPECT_EQ(m.entries[0].name, "w.0");
  EXPECT_EQ(m.entries[0].dtype, DType::BF16);
  EXPECT_EQ(m.entries[0].dims, (std::vector<int64_t>{768, 512}));
  EXPECT_EQ(m.entries[0].bytes, 768u * 512 * 2);
  EXPECT_EQ(m.entries[0].concatAxis, -1);
  EXPECT_EQ(m.entries[1].concatAxis, 1);
  EXPECT_EQ(m.entries[1].concatParts,
            (std::vector<std::string>{"q", "k.x", "v"}));
  EXPECT_EQ(m.entries[2].dtype, DType::I64);
  EXPECT_EQ(m.entries[2].bytes, 1024u);
  EXPECT_TRUE(m.entries[3].dims.empty());
  EXPECT_EQ(m.entries[3].numElements, 1u);
  EXPECT_EQ(m.entries[3].bytes, 4u);
  EXPECT_EQ(m.entries[4].bytes, 0u);
  EXPECT_EQ(m.entries[4].kind, EntryKind::Output);
  EXPECT_EQ(cpuManifestOk("").target, Target::CPU);
}

TEST(Manifest, Errors) {
  EXPECT_EQ(manifestErr(""), "manifest: empty (expected 'attnc-manifest 1')");
  EXPECT_EQ(manifestErr("target cpu\n"),
            "manifest line 1: expected 'attnc-manifest 1' as the first "
            "record, got 'target cpu'");
  EXPECT_EQ(manifestErr("attnc-manifest 2\n"),
            "manifest line 1: unsupported manifest version '2' (this runtime "
            "supports version 1)");
  EXPECT_EQ(manifestErr("attnc-manifest 1\ninput a f32 4\n"),
            "manifest: missing 'target cpu' or 'target cuda' record");
  EXPECT_EQ(manifestErr("attnc-manifest 1\ntarget tpu\n"),
            "manifest line 2: unknown target 'tpu' (expected 'cpu' or "
            "'cuda')");
  EXPECT_EQ(cpuManifestErr("target cpu\n"),
            "manifest line 3: duplicate 'target' record");
  EXPECT_EQ(cpuManifestErr("input a f64 4\n"),
            "manifest line 3: unknown dtype 'f64' (expected f32, f16, bf16, "
            "i32 or i64)");
  EXPECT_EQ(cpuManifestErr("input a f32 4x\n"),
            "manifest line 3: invalid dims '4x' (expected sizes joined by 'x' "
            "like 1x128x768, or 'scalar')");
  EXPECT_NE(cpuManifestErr("input a f32 4xx2\n").find("invalid dims '4xx2'"),
            std::string::npos);
  EXPECT_NE(cpuManifestErr("input a f32 -4\n").find("invalid dims '-4'"),
            std::string::npos);
  EXPECT_NE(
      cpuManifestErr("input a f32 99999999999999999999\n").find("invalid dims"),
      std::string::npos);
  EXPECT_EQ(cpuManifestErr("input a f32 4294967296x4294967296\n"),
            "manifest line 3: shape [4294967296, 4294967296] of 'a' is too "
            "large");
  EXPECT_EQ(
      cpuManifestErr("input a f32\n"),
      "manifest line 3: expected 'input <name> <dtype> <dims> [ids <rows> "
      "[encoder] | positions <bound>]'");
  EXPECT_EQ(
      cpuManifestErr("input a f32 4 x\n"),
      "manifest line 3: expected 'input <name> <dtype> <dims> [ids <rows> "
      "[encoder] | positions <bound>]'");
  EXPECT_EQ(cpuManifestErr("weight a f32 4 concat 0\n"),
            "manifest line 3: expected 'weight <name> <dtype> <dims> [concat "
            "<axis> <name>,<name>,... | gather <axis> <source_extent> "
            "<start>:<length>,<start>:<length>,...] [transpose] [panels "
            "[pairs]] [convert]'");
  EXPECT_EQ(cpuManifestErr("input a f32 4\noutput a f32 4\n"),
            "manifest line 4: duplicate name 'a'");
  EXPECT_EQ(cpuManifestErr("param a f32 4\n"),
            "manifest line 3: unknown record 'param' (expected target, "
            "weight, input, output or state)");
  EXPECT_EQ(cpuManifestErr("weight w f32 4x4 concat 2 a,b\n"),
            "manifest line 3: concat axis '2' of weight 'w' is not a "
            "dimension of its shape [4, 4]");
  EXPECT_EQ(cpuManifestErr("weight w f32 4x4 concat 0 a,,b\n"),
            "manifest line 3: empty tensor name in concat list 'a,,b' of "
            "weight 'w'");
  Manifest m;
  std::string err;
  EXPECT_FALSE(parseManifest(nullptr, m, err));
}

TEST(Manifest, Gather) {
  // The same tensor name bound plain, gathered along axis 0 (pruned rows,
  // overlapping and out of order) and gathered along axis 1.
  Manifest m = cpuManifestOk("weight q bf16 6x4\n"
                             "weight q bf16 4x4 gather 0 6 4:2,0:2\n"
                             "weight q bf16 6x3 gather 1 4 1:2,2:1\n"
                             "weight r f32 2x5x3 gather 2 7 6:1,0:2\n"
                             "input x f32 4\n");
  ASSERT_EQ(m.entries.size(), 5u);
  EXPECT_EQ(m.weights, (std::vector<int>{0, 1, 2, 3}));
  const ManifestEntry &plain = m.entries[0];
  EXPECT_TRUE(plain.isPlainWeight());
  EXPECT_FALSE(plain.isGather());
  EXPECT_EQ(plain.gatherAxis, -1);
  EXPECT_TRUE(plain.gatherRanges.empty());
  const ManifestEntry &g0 = m.entries[1];
  EXPECT_EQ(g0.name, "q");
  EXPECT_TRUE(g0.isGather());
  EXPECT_FALSE(g0.isPlainWeight());
  EXPECT_FALSE(g0.isConcat());
  EXPECT_EQ(g0.dims, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(g0.bytes, 4u * 4 * 2);
  EXPECT_EQ(g0.gatherAxis, 0);
  EXPECT_EQ(g0.gatherSourceExtent, 6);
  EXPECT_EQ(g0.gatherRanges,
            (std::vector<GatherRange>{GatherRange{4, 2}, GatherRange{0, 2}}));
  EXPECT_EQ(g0.gatherSourceDims(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(g0.gatherRangesText(), "4:2,0:2");
  const ManifestEntry &g1 = m.entries[2];
  EXPECT_EQ(g1.gatherAxis, 1);
  EXPECT_EQ(g1.gatherSourceDims(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(g1.gatherRanges,
            (std::vector<GatherRange>{GatherRange{1, 2}, GatherRange{2, 1}}));
  EXPECT_EQ(m.entries[3].gatherSourceDims(), (std::vector<int64_t>{2, 5, 7}));
  EXPECT_EQ(m.entries[3].bytes, 2u * 5 * 3 * 4);
  // Overlapping and repeated slices are allowed.
  Manifest o = cpuManifestOk("weight w f32 7 gather 0 4 0:3,1:3,3:1\n"
                             "weight w f32 2 gather 0 4 2:1,2:1\n");
  EXPECT_EQ(o.entries[0].gatherRanges.size(), 3u);
  EXPECT_EQ(o.entries[1].gatherRangesText(), "2:1,2:1");
}

TEST(Manifest, Convert) {
  Manifest m = cpuManifestOk("weight w f16 4x3 transpose convert\n"
                             "weight b bf16 3 convert\n"
                             "weight c f32 3\n");
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_TRUE(m.entries[0].convert);
  EXPECT_TRUE(m.entries[0].transpose);
  EXPECT_EQ(m.entries[0].bytes, 4u * 3 * 2);
  EXPECT_TRUE(m.entries[1].convert);
  EXPECT_FALSE(m.entries[1].transpose);
  EXPECT_FALSE(m.entries[2].convert);
  EXPECT_EQ(cpuManifestErr("weight ids i32 3 convert\n"),
            "manifest line 3: weight 'ids' is marked convert but has dtype "
            "i32; only float weights (f32, f16, bf16) convert");
  // convert comes last.
  EXPECT_NE(cpuManifestErr("weight w f16 4x3 convert transpose\n"), "");
}

TEST(Manifest, Causal) {
  Manifest m = cpuManifestOk("input ids i64 2x8\n"
                             "output logits bf16 2x8x5 causal\n"
                             "output h f32 2x8x4\n");
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_TRUE(m.entries[1].causal);
  EXPECT_FALSE(m.entries[2].causal);
  EXPECT_EQ(formatManifestRecord(m.entries[1]),
            "output logits bf16 2x8x5 causal");
  EXPECT_EQ(cpuManifestErr("output logits i32 2x8x5 causal\n"),
            "manifest line 3: output 'logits' is marked causal but is i32 "
            "[2, 8, 5] (causal logits are float [batch, seq, vocab], vocab > "
            "0)");
  EXPECT_NE(cpuManifestErr("output logits f32 8x5 causal\n"), "");
  // Only outputs are causal.
  EXPECT_EQ(cpuManifestErr("input ids i64 2x8x5 causal\n"),
            "manifest line 3: expected 'input <name> <dtype> <dims> [ids "
            "<rows> [encoder] | positions <bound>]'");
}

TEST(Manifest, RecomputePast) {
  Manifest m =
      cpuManifestOk("input ids i64 2x8\n"
                    "output logits f32 2x8x5 causal recompute_past 12\n"
                    "output h f32 2x8x4\n");
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_TRUE(m.entries[1].causal);
  EXPECT_EQ(m.entries[1].recomputePast, 12);
  // Without the field, as before: no recomputation.
  EXPECT_EQ(m.entries[2].recomputePast, -1);
  EXPECT_EQ(cpuManifestOk("output logits f32 2x8x5 causal\n")
                .entries[0]
                .recomputePast,
            -1);
  EXPECT_EQ(formatManifestRecord(m.entries[1]),
            "output logits f32 2x8x5 causal recompute_past 12");
  for (const char *length : {"0", "-1", "x", "99999999999999999999"})
    EXPECT_EQ(recordErr(std::string("output logits f32 2x8x5 causal "
                                    "recompute_past ") +
                        length),
              std::string("manifest line 3: invalid recompute_past length '") +
                  length +
                  "' of output 'logits' (expected the positive token count "
                  "past which generation recomputes the sequence)");
  // Only causal logits take it, after `causal`, with a length.
  const char *const malformed[] = {
      "output logits f32 2x8x5 recompute_past 12",
      "output logits f32 2x8x5 recompute_past 12 causal",
      "output logits f32 2x8x5 causal recompute_past",
      "input ids i64 2x8 causal recompute_past 12"};
  for (const char *record : malformed)
    EXPECT_NE(recordErr(record), "") << record;
  EXPECT_EQ(
      cpuManifestErr("output logits i32 2x8x5 causal recompute_past 12\n"),
      "manifest line 3: output 'logits' is marked causal but is i32 "
      "[2, 8, 5] (causal logits are float [batch, seq, vocab], vocab > "
      "0)");
}

TEST(Manifest, Encoder) {
  Manifest m = cpuManifestOk("input input_ids i64 2x6 ids 50 encoder\n"
                             "input decoder_input_ids i32 2x4 ids 50\n"
                             "output logits f32 2x4x50 causal\n");
  EXPECT_TRUE(m.entries[0].encoder);
  EXPECT_FALSE(m.entries[1].encoder);
  EXPECT_EQ(formatManifestRecord(m.entries[0]),
            "input input_ids i64 2x6 ids 50 encoder");
  // The encoder's mask has no id bound.
  Manifest masked = cpuManifestOk("input attention_mask i64 2x6 encoder\n");
  EXPECT_TRUE(masked.entries[0].encoder);
  EXPECT_EQ(formatManifestRecord(masked.entries[0]),
            "input attention_mask i64 2x6 encoder");
  // A decoder step's encoder output (e.g. cross-attention keys) is a
  // static float encoder input.
  Manifest keys = cpuManifestOk("input encoder_kv.0.key f32 2x4x6x8 encoder\n");
  EXPECT_TRUE(keys.entries[0].encoder);
  EXPECT_EQ(formatManifestRecord(keys.entries[0]),
            "input encoder_kv.0.key f32 2x4x6x8 encoder");
  // Otherwise only integer inputs [batch, seq] are encoder inputs.
  const char *notEncoder = "is marked encoder but is neither i32/i64 [batch, "
                           "seq] (token ids or their mask) nor a static float "
                           "[batch, ...] (an encoder output)";
  for (const char *record :
       {"input x f32 2x? dims_from - encoder", "input x f32 scalar encoder",
        "input x i64 2x6x3 encoder", "input x i64 2 positions 8 encoder"})
    EXPECT_EQ(recordErr(record),
              std::string("manifest line 3: input 'x' ") + notEncoder)
        << record;
  EXPECT_NE(cpuManifestErr("output y f32 2x6 encoder\n"), "");
}

TEST(Manifest, State) {
  Manifest m = cpuManifestOk("input pos i64 2 positions 8\n"
                             "state k_cache f32 2x2x8x4\n"
                             "output out f32 2x4\n");
  EXPECT_TRUE(m.entries[0].positions);
  EXPECT_EQ(m.entries[0].idBound, 8);
  EXPECT_EQ(formatManifestRecord(m.entries[0]), "input pos i64 2 positions 8");
  EXPECT_EQ(cpuManifestErr("input pos f32 2 positions 8\n"),
            "manifest line 3: input 'pos' has positions but dtype f32 "
            "(positions are i32 or i64)");
  EXPECT_EQ(cpuManifestErr("input pos i32 2 positions 0\n"),
            "manifest line 3: invalid position bound '0' of input 'pos' "
            "(expected the positive number of positions)");
  ASSERT_EQ(m.states.size(), 1u);
  EXPECT_EQ(m.entries[static_cast<size_t>(m.states[0])].name, "k_cache");
  EXPECT_EQ(m.entries[1].kind, EntryKind::State);
  EXPECT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(formatManifestRecord(m.entries[1]), "state k_cache f32 2x2x8x4");
  EXPECT_EQ(cpuManifestErr("state c f32 4 ids 3\n"),
            "manifest line 3: expected 'state <name> <dtype> <dims>'");
}

TEST(Manifest, Transpose) {
  // dims are the buffer's; concat and gather describe the untransposed
  // tensor ([3, 4] here).
  Manifest m = cpuManifestOk("weight w f32 4x3 transpose\n"
                             "weight w f32 3x4\n"
                             "weight g f32 4x3 gather 0 6 4:2,0:1 transpose\n"
                             "weight qk f32 4x3 concat 0 q,k transpose\n");
  ASSERT_EQ(m.entries.size(), 4u);
  const ManifestEntry &t = m.entries[0];
  EXPECT_TRUE(t.transpose);
  EXPECT_FALSE(t.isPlainWeight());
  EXPECT_EQ(t.dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(t.bytes, 4u * 3 * 4);
  EXPECT_EQ(t.untransposed().dims, (std::vector<int64_t>{3, 4}));
  EXPECT_FALSE(t.untransposed().transpose);
  EXPECT_TRUE(t.untransposed().isPlainWeight());
  EXPECT_FALSE(m.entries[1].transpose);
  EXPECT_TRUE(m.entries[1].isPlainWeight());
  const ManifestEntry &g = m.entries[2];
  EXPECT_TRUE(g.transpose);
  EXPECT_TRUE(g.isGather());
  EXPECT_EQ(g.dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(g.untransposed().gatherSourceDims(), (std::vector<int64_t>{6, 4}));
  EXPECT_TRUE(m.entries[3].transpose);
  EXPECT_EQ(m.entries[3].concatParts, (std::vector<std::string>{"q", "k"}));
}

TEST(Manifest, Panels) {
  // dims are the buffer's [P, K, W]; transpose, concat and gather describe
  // the [K, P * W] tensor the panels lay out ([3, 8] here).
  Manifest m = cpuManifestOk("weight w f32 2x3x4 panels\n"
                             "weight t f32 2x3x4 transpose panels convert\n"
                             "weight g f32 2x3x4 gather 1 10 2:8 panels\n");
  ASSERT_EQ(m.entries.size(), 3u);
  const ManifestEntry &w = m.entries[0];
  EXPECT_TRUE(w.panels);
  EXPECT_FALSE(w.transpose);
  EXPECT_FALSE(w.isPlainWeight());
  EXPECT_EQ(w.dims, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(w.bytes, 2u * 3 * 4 * 4);
  EXPECT_EQ(w.unpaneled().dims, (std::vector<int64_t>{3, 8}));
  EXPECT_TRUE(w.unpaneled().isPlainWeight());
  const ManifestEntry &t = m.entries[1];
  EXPECT_TRUE(t.panels && t.transpose && t.convert);
  EXPECT_EQ(t.unpaneled().dims, (std::vector<int64_t>{3, 8}));
  EXPECT_TRUE(t.unpaneled().transpose);
  EXPECT_EQ(t.untransposed().dims, (std::vector<int64_t>{8, 3}));
  EXPECT_TRUE(t.untransposed().isPlainWeight());
  EXPECT_EQ(m.entries[2].untransposed().gatherSourceDims(),
            (std::vector<int64_t>{3, 10}));
  EXPECT_EQ(formatManifestRecord(t),
            "weight t f32 2x3x4 transpose panels convert");
}

TEST(Manifest, PairPanels) {
  // dims are the buffer's [P, K / 2, 2 * W]: a [6, 8] tensor in pair panels
  // of 4 columns.
  Manifest m = cpuManifestOk("weight w bf16 2x3x8 transpose panels pairs "
                             "convert\n");
  const ManifestEntry &w = m.entries[0];
  EXPECT_TRUE(w.panels && w.pairs && w.transpose && w.convert);
  EXPECT_EQ(w.bytes, 2u * 3 * 8 * 2);
  EXPECT_EQ(w.unpaneled().dims, (std::vector<int64_t>{6, 8}));
  EXPECT_FALSE(w.unpaneled().pairs);
  EXPECT_EQ(w.untransposed().dims, (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(formatManifestRecord(w),
            "weight w bf16 2x3x8 transpose panels pairs convert");
  EXPECT_EQ(recordErr("weight w bf16 2x3x8 pairs"),
            "manifest line 3: weight 'w' is marked pairs without panels "
            "(expected 'panels pairs')");
  EXPECT_EQ(recordErr("weight w bf16 2x3x7 panels pairs"),
            "manifest line 3: weight 'w' is marked pairs but has shape "
            "[2, 3, 7]; pair panels are [P, K / 2, 2 * W] of a [K, P * W] "
            "tensor");
  // The gather selects 7 of the [6, 8] tensor's 6 rows.
  EXPECT_EQ(recordErr("weight g bf16 2x3x8 gather 0 10 0:7 panels pairs"),
            "manifest line 3: gather ranges '0:7' of weight 'g' select 7 "
            "along axis 0 but its shape [6, 8] has 6");
}

TEST(Manifest, PanelsErrors) {
  EXPECT_EQ(recordErr("weight w f32 3x8 panels"),
            "manifest line 3: weight 'w' is marked panels but has shape "
            "[3, 8]; panels are 3-D ([P, K, W] of a [K, P * W] tensor)");
  // The gather selects 9 columns of the [3, 8] tensor.
  EXPECT_EQ(recordErr("weight g f32 2x3x4 gather 1 10 0:9 panels"),
            "manifest line 3: gather ranges '0:9' of weight 'g' select 9 "
            "along axis 1 but its shape [3, 8] has 8");
  // Keyword order: transpose, panels, convert.
  EXPECT_EQ(
      recordErr("weight w f32 2x3x4 panels transpose"),
      "manifest line 3: expected 'weight <name> <dtype> <dims> [concat <axis> "
      "<name>,<name>,... | gather <axis> <source_extent> "
      "<start>:<length>,<start>:<length>,...] [transpose] [panels "
      "[pairs]] [convert]'");
  EXPECT_EQ(recordErr("input x f32 2x3x4 panels"),
            "manifest line 3: expected 'input <name> <dtype> <dims> [ids "
            "<rows> [encoder] | positions <bound>]'");
}

TEST(Manifest, TransposeErrors) {
  EXPECT_EQ(recordErr("weight w f32 4 transpose"),
            "manifest line 3: weight 'w' is marked transpose but has shape "
            "[4]; only 2-D weights can be transposed");
  EXPECT_EQ(recordErr("weight w f32 2x3x4 transpose"),
            "manifest line 3: weight 'w' is marked transpose but has shape "
            "[2, 3, 4]; only 2-D weights can be transposed");
  // Gather ranges are checked against the untransposed shape [3, 4]: 4
  // rows selected where it has 3.
  EXPECT_EQ(recordErr("weight g f32 4x3 gather 0 6 0:4 transpose"),
            "manifest line 3: gather ranges '0:4' of weight 'g' select 4 "
            "along axis 0 but its shape [3, 4] has 3");
  // Only weights take it, and only last.
  EXPECT_EQ(recordErr("input x f32 4x3 transpose"),
            "manifest line 3: expected 'input <name> <dtype> <dims> [ids "
            "<rows> [encoder] | positions <bound>]'");
  EXPECT_EQ(
      recordErr("weight w f32 4x3 transpose gather 0 6 0:4"),
      "manifest line 3: expected 'weight <name> <dtype> <dims> [concat <axis> "
      "<name>,<name>,... | gather <axis> <source_extent> "
      "<start>:<length>,<start>:<length>,...] [transpose] [panels "
      "[pairs]] [convert]'");
}

TEST(Manifest, IdBound) {
  Manifest m = manifestOk("attnc-manifest 1\ntarget cuda\n"
                          "input ids i64 2x8 ids 30522\n"
                          "input tt i32 2x8 ids 2\n"
                          "input x i64 2x8\n");
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].idBound, 30522);
  EXPECT_EQ(m.entries[1].idBound, 2);
  EXPECT_EQ(m.entries[2].idBound, -1);
  EXPECT_EQ(recordErr("input x f32 2x8 ids 10"),
            "manifest line 3: input 'x' has ids but dtype f32 (ids are i32 or "
            "i64)");
  for (const char *bound : {"0", "-1", "x", "99999999999999999999"})
    EXPECT_EQ(recordErr(std::string("input x i64 2x8 ids ") + bound),
              std::string("manifest line 3: invalid id bound '") + bound +
                  "' of input 'x' (expected the positive row count of its "
                  "table)");
  // Only inputs take it.
  EXPECT_EQ(recordErr("output y i64 2x8 ids 10"),
            "manifest line 3: expected 'output <name> <dtype> <dims> [causal "
            "[recompute_past <length>]]'");
  EXPECT_EQ(recordErr("input x i64 2x8 rows 10"),
            "manifest line 3: expected 'input <name> <dtype> <dims> [ids "
            "<rows> [encoder] | positions <bound>]'");
}

TEST(Manifest, GatherErrors) {
  // Axis.
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 2 6 0:4"),
            "manifest line 3: gather axis '2' of weight 'w' is not a "
            "dimension of its shape [4, 3]");
  EXPECT_EQ(recordErr("weight w f32 4x3 gather -1 6 0:4"),
            "manifest line 3: gather axis '-1' of weight 'w' is not a "
            "dimension of its shape [4, 3]");
  EXPECT_EQ(recordErr("weight w f32 scalar gather 0 6 0:1"),
            "manifest line 3: gather axis '0' of weight 'w' is not a "
            "dimension of its shape []");
  // Source extent.
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 0 six 0:4"),
            "manifest line 3: invalid gather source extent 'six' of weight "
            "'w' (expected the positive size of the source tensor along axis "
            "0)");
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 1 0 0:3"),
            "manifest line 3: invalid gather source extent '0' of weight 'w' "
            "(expected the positive size of the source tensor along axis 1)");
  EXPECT_NE(recordErr("weight w f32 4x3 gather 0 -6 0:4")
                .find("invalid gather source extent '-6'"),
            std::string::npos);
  EXPECT_EQ(recordErr("weight w f32 1x4294967296 gather 0 4294967296 0:1"),
            "manifest line 3: gather source shape [4294967296, 4294967296] "
            "of weight 'w' is too large");
  // Ranges out of bounds.
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 0 6 0:1,3:4"),
            "manifest line 3: gather range '3:4' of weight 'w' selects [3, 7) "
            "along axis 0, outside the source extent [0, 6)");
  EXPECT_EQ(recordErr("weight w f32 1x3 gather 0 6 6:1"),
            "manifest line 3: gather range '6:1' of weight 'w' selects [6, 7) "
            "along axis 0, outside the source extent [0, 6)");
  EXPECT_EQ(recordErr("weight w f32 1x3 gather 0 6 1:9223372036854775807"),
            "manifest line 3: gather range '1:9223372036854775807' of weight "
            "'w' selects [1, 9223372036854775808) along axis 0, outside the "
            "source extent [0, 6)");
  // Lengths must sum to dims[axis].
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 0 6 0:2,3:1"),
            "manifest line 3: gather ranges '0:2,3:1' of weight 'w' select 3 "
            "along axis 0 but its shape [4, 3] has 4");
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 1 6 0:6"),
            "manifest line 3: gather ranges '0:6' of weight 'w' select 6 "
            "along axis 1 but its shape [4, 3] has 3");
  // Zero length.
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 0 6 0:0,0:4"),
            "manifest line 3: gather range '0:0' of weight 'w' has zero "
            "length");
  // Malformed ranges.
  for (const char *bad :
       {"a:b", "1", "1:2:3", ":2", "1:", "-1:2", "1:+2", "0x1:2"}) {
    std::string list = std::string(bad) + ",0:1";
    EXPECT_EQ(recordErr("weight w f32 4x3 gather 0 6 " + list),
              "manifest line 3: invalid gather range '" + std::string(bad) +
                  "' in '" + list +
                  "' of weight 'w' (expected <start>:<length> with "
                  "non-negative integers, ranges separated by ',')")
        << bad;
  }
  EXPECT_EQ(recordErr("weight w f32 4x3 gather 0 6 0:2,,2:2"),
            "manifest line 3: invalid gather range '' in '0:2,,2:2' of weight "
            "'w' (expected <start>:<length> with non-negative integers, "
            "ranges separated by ',')");
  EXPECT_NE(recordErr("weight w f32 4x3 gather 0 6 0:4,")
                .find("invalid gather "
                      "range ''"),
            std::string::npos);
  // Wrong arity, and gather on a non-weight.
  EXPECT_NE(
      recordErr("weight w f32 4x3 gather 0 0:4").find("expected 'weight "),
      std::string::npos);
  EXPECT_NE(recordErr("weight w f32 4x3 gather 0 6 0:2 2:2")
                .find("expected "
                      "'weight "),
            std::string::npos);
  EXPECT_EQ(
      recordErr("input w f32 4x3 gather 0 6 0:4"),
      "manifest line 3: expected 'input <name> <dtype> <dims> [ids <rows> "
      "[encoder] | positions <bound>]'");
}

TEST(Manifest, RepeatedWeightNames) {
  // Weight records may share a name; inputs and outputs may not share one
  // with anything.
  Manifest m = cpuManifestOk("weight w f32 4\nweight w f32 4\n"
                             "weight w f32 2 gather 0 4 0:2\n"
                             "weight w f32 2 concat 0 a,b\n");
  EXPECT_EQ(m.weights.size(), 4u);
  EXPECT_EQ(cpuManifestErr("weight w f32 4\ninput w f32 4\n"),
            "manifest line 4: duplicate name 'w'");
  EXPECT_EQ(cpuManifestErr("output w f32 4\nweight w f32 2 gather 0 4 0:2\n"),
            "manifest line 4: duplicate name 'w'");
}

} // namespace
