//===- Attention.cpp - ONNX Attention (opset 23) --------------------------===//
//
// Attention-23 (torch.onnx writes it for scaled_dot_product_attention from
// opset 23) maps to attn.sdpa: queries, keys and values as [B, H, S, D]
// (the 3-D form [B, S, H * D] is split into heads by q_num_heads and
// kv_num_heads and merged back after), grouped heads, the mask as an
// additive bias (a bool mask keeps where true), the scale, is_causal where
// the query and key lengths are one size (ONNX aligns the causal mask
// top-left, attn.sdpa bottom-right: they agree there), past keys and values
// concatenated before the new ones (the presents). What it cannot express
// (the QK output, softcap) is a located error. RotaryEmbedding-23 reads its
// cos/sin caches per element (by position id), halves or interleaved pairs, on
// a part of each head.
//
//===----------------------------------------------------------------------===//

#include "../Importer.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

Error Importer::importAttention() {
  if (current->output_size() > 3 && !current->output(3).empty())
    return fail("the QK output (qk_matmul_output) is not supported");
  if (hasInput(4) != hasInput(5))
    return fail("past_key and past_value must be given together");
  bool hasPast = hasInput(4);
  bool wantsPresent = false;
  for (int i = 1; i < std::min(current->output_size(), 3); ++i)
    wantsPresent |= !current->output(i).empty();
  if (wantsPresent && !hasPast)
    return fail("present_key/present_value without past_key/past_value are "
                "not supported");
  if (getFloatAttr(*current, "softcap", 0.0f) != 0.0f)
    return fail("softcap is not supported");
  if (int64_t p = getIntAttr(*current, "softmax_precision", 1);
      p != onnx::TensorProto::FLOAT)
    return fail("softmax_precision " + Twine(p) + " (" +
                dataTypeName(static_cast<int32_t>(p)) +
                ") is not supported (only 1, float)");
  SmallVector<Value> qkv;
  for (size_t i = 0; i < 3; ++i) {
    auto v = input(i);
    if (!v)
      return v.takeError();
    if (!isa<FloatType>(typeOf(*v).getElementType()) ||
        typeOf(*v).getElementType() !=
            typeOf(qkv.empty() ? *v : qkv[0]).getElementType())
      return fail("query, key and value must be floats of one type");
    qkv.push_back(*v);
  }
  int64_t rank = typeOf(qkv[0]).getRank();
  if (rank != 3 && rank != 4)
    return fail("query must have rank 3 or 4");
  for (Value v : qkv)
    if (typeOf(v).getRank() != rank)
      return fail("query, key and value must have one rank");
  // [B, S, H * D] -> [B, H, S, D].
  auto splitHeads = [&](Value v, StringRef attr) -> Expected<Value> {
    int64_t heads = getIntAttr(*current, attr, 0);
    SmallVector<int64_t> d = dimsOf(v);
    if (heads <= 0 || isSymbolic(d[2]) || d[2] % heads != 0)
      return fail(Twine(attr) +
                  " must be a positive divisor of the hidden "
                  "size " +
                  syms.str(d[2]) + " for 3-D inputs");
    return transpose(reshapeTo(v, {d[0], d[1], heads, d[2] / heads}),
                     {0, 2, 1, 3});
  };
  if (rank == 3) {
    StringRef attrs[] = {"q_num_heads", "kv_num_heads", "kv_num_heads"};
    for (size_t i = 0; i < 3; ++i) {
      auto v = splitHeads(qkv[i], attrs[i]);
      if (!v)
        return v.takeError();
      qkv[i] = *v;
    }
  }
  // The past keys and values [B, Hkv, P, D] come before the new ones; the
  // presents are the concatenations (what attn-bind-kv-cache binds to a
  // cache).
  if (hasPast) {
    for (size_t i = 1; i < 3; ++i) {
      auto past = input(i + 3);
      if (!past)
        return past.takeError();
      SmallVector<int64_t> pd = dimsOf(*past), nd = dimsOf(qkv[i]);
      if (typeOf(*past).getElementType() != typeOf(qkv[i]).getElementType() ||
          pd.size() != 4 || !unifyDims(pd[0], nd[0]) ||
          !unifyDims(pd[1], nd[1]) || !unifyDims(pd[3], nd[3]))
        return fail(Twine(i == 1 ? "past_key " : "past_value ") +
                    shapeText(pd) + " does not fit the new " +
                    (i == 1 ? "keys " : "values ") + shapeText(nd));
      auto length = syms.add(pd[2], nd[2]);
      if (!length)
        return fail("the key length overflows");
      SmallVector<int64_t> cd = dimsOf(qkv[i]);
      cd[2] = *length;
      qkv[i] = record(
          tensor::ConcatOp::create(b, loc, 2, ValueRange{*past, qkv[i]}), cd);
      setOutput(i, qkv[i]);
    }
  }
  SmallVector<int64_t> q = dimsOf(qkv[0]), k = dimsOf(qkv[1]),
                       v = dimsOf(qkv[2]);
  if (q[0] != k[0] || k[0] != v[0] || k[1] != v[1] || k[2] != v[2] ||
      q[3] != k[3])
    return fail("query " + shapeText(q) + ", key " + shapeText(k) +
                " and value " + shapeText(v) + " do not fit together");
  if (isSymbolic(q[1]) || isSymbolic(k[1]) || q[1] % k[1] != 0)
    return fail("the query heads must be a multiple of the key/value heads");
  Type elem = typeOf(qkv[0]).getElementType();
  Value bias;
  if (hasInput(3)) {
    auto m = input(3);
    if (!m)
      return m.takeError();
    Value mask = *m;
    SmallVector<int64_t> md = dimsOf(mask);
    if (md.size() > 4)
      return fail("attn_mask has rank " + Twine(md.size()) + " (at most 4)");
    SmallVector<int64_t> full{q[0], q[1], q[2], k[2]}, m4(4 - md.size(), 1);
    m4.append(md.begin(), md.end());
    for (int64_t d = 0; d < 4; ++d)
      if (m4[d] != 1 && m4[d] != full[d])
        return fail("attn_mask " + shapeText(md) +
                    " does not broadcast to the scores " + shapeText(full));
    mask = reshapeTo(mask, m4);
    Type mElem = typeOf(mask).getElementType();
    if (mElem.isInteger(1)) {
      // Keys where the mask is false are not attended to.
      const auto &sem = cast<FloatType>(elem).getFloatSemantics();
      mask = generic(
          ValueRange{mask}, m4, elem,
          [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            Value zero =
                arith::ConstantOp::create(nb, nl, nb.getFloatAttr(elem, 0.0));
            Value ninf = arith::ConstantOp::create(
                nb, nl, nb.getFloatAttr(elem, APFloat::getInf(sem, true)));
            return arith::SelectOp::create(nb, nl, a[0], zero, ninf);
          });
    } else if (mElem != elem) {
      return fail("attn_mask must be bool or of the query's type");
    }
    bias = mask;
  }
  bool causal = getIntAttr(*current, "is_causal", 0) != 0;
  if (causal && q[2] != k[2])
    return fail("is_causal with query length " + syms.str(q[2]) +
                " and key length " + syms.str(k[2]) +
                " is not supported (ONNX aligns the mask top-left; only "
                "equal lengths are)");
  FloatAttr scale;
  if (findAttribute(*current, "scale"))
    scale = b.getF64FloatAttr(getFloatAttr(*current, "scale", 1.0f));
  SmallVector<int64_t> outShape{q[0], q[1], q[2], v[3]};
  Value out = record(
      attn::SdpaOp::create(
          b, loc, tensorType(outShape, elem), qkv[0], qkv[1], qkv[2], bias,
          /*kv_lengths=*/Value(), /*query_positions=*/Value(), ValueRange{},
          attn::ScoreFunction::scaled_dot, scale, causal, IntegerAttr()),
      outShape);
  if (rank == 3) {
    // Heads merged back: [B, H, S, Dv] -> [B, S, H * Dv].
    out = transpose(out, {0, 2, 1, 3});
    auto merged = syms.mul(q[1], v[3]);
    if (!merged)
      return fail("the merged head size overflows");
    out = reshapeTo(out, {q[0], q[2], *merged});
  }
  setOutput(0, out);
  return Error::success();
}

Error Importer::importRotaryEmbedding() {
  // X: [B, H, S, D], or [B, S, H * D] split by num_heads; the caches hold
  // cos/sin of each position and frequency: [positions, R / 2] indexed by
  // position_ids [B, S], or [B, S, R / 2] without ids (B and S may be 1 and
  // broadcast). The first R (the
  // rotary_embedding_dim, all of D by default) elements of each head rotate,
  // as halves or interleaved pairs; the rest pass through.
  auto xOr = input(0), cosOr = input(1), sinOr = input(2);
  if (!xOr)
    return xOr.takeError();
  if (!cosOr)
    return cosOr.takeError();
  if (!sinOr)
    return sinOr.takeError();
  Value x = *xOr, cosCache = *cosOr, sinCache = *sinOr;
  Type elem = typeOf(x).getElementType();
  if (!isa<FloatType>(elem) || typeOf(cosCache).getElementType() != elem ||
      typeOf(sinCache).getElementType() != elem)
    return fail("the input and the caches must be floats of one type");
  SmallVector<int64_t> xd = dimsOf(x);
  int64_t rank = xd.size();
  if (rank != 3 && rank != 4)
    return fail("the input must have rank 3 or 4");
  int64_t seqAxis = 2;
  SmallVector<int64_t> shape4 = xd;
  if (rank == 3) {
    int64_t heads = getIntAttr(*current, "num_heads", 0);
    if (heads <= 0 || isSymbolic(xd[2]) || xd[2] % heads != 0)
      return fail("num_heads must be a positive divisor of the hidden size " +
                  syms.str(xd[2]) + " for a 3-D input");
    shape4 = {xd[0], xd[1], heads, xd[2] / heads};
    x = reshapeTo(x, shape4);
    seqAxis = 1;
  }
  int64_t d = shape4[3];
  if (isSymbolic(d))
    return failSymbolic("the head size is symbolic");
  int64_t r = getIntAttr(*current, "rotary_embedding_dim", 0);
  if (r == 0)
    r = d;
  if (r < 2 || r > d || r % 2)
    return fail("rotary_embedding_dim " + Twine(r) +
                " must be even and at most the head size " + Twine(d));
  bool interleaved = getIntAttr(*current, "interleaved", 0) != 0;
  SmallVector<int64_t> cd = dimsOf(cosCache);
  bool hasIds = hasInput(3);
  Value ids;
  if (hasIds) {
    auto idsOr = input(3);
    if (!idsOr)
      return idsOr.takeError();
    ids = *idsOr;
    if (!isa<IntegerType>(typeOf(ids).getElementType()) ||
        dimsOf(ids) != SmallVector<int64_t>{shape4[0], shape4[seqAxis]})
      return fail("position_ids must be integers of shape [batch, sequence]");
    if (cd.size() != 2 || cd[1] != r / 2)
      return fail("with position_ids the caches must be [positions, " +
                  Twine(r / 2) + "]");
  } else if (cd.size() != 3 || (cd[0] != 1 && cd[0] != shape4[0]) ||
             (cd[1] != 1 && cd[1] != shape4[seqAxis]) || cd[2] != r / 2) {
    // The caches broadcast over batch and sequence as in numpy (torch.onnx
    // computes them once for the batch: [1, sequence, R / 2]).
    return fail("without position_ids the caches must be [batch, sequence, " +
                Twine(r / 2) + "] (batch and sequence may be 1), not " +
                shapeText(cd));
  }
  if (dimsOf(sinCache) != cd)
    return fail("the cos and sin caches differ in shape");
  if (rank == 4 && !interleaved && !hasIds) {
    // The rotate-half form in named ops, `x * cos + rotate_half(x) * sin`
    // with the caches' halves repeated and broadcast over the heads:
    // attn-raise-positions makes it attn.rotary where the caches are the
    // rotary tables of positions 0..S-1 (as torch.onnx computes them).
    SmallVector<int64_t> rotatedShape = shape4, halfShape = shape4;
    rotatedShape[3] = r;
    halfShape[3] = r / 2;
    SmallVector<int64_t> zeros4(4, 0), ones4(4, 1);
    Value xr = r == d ? x : staticSlice(x, zeros4, rotatedShape, ones4);
    Value low = staticSlice(xr, zeros4, halfShape, ones4);
    Value high = staticSlice(xr, {0, 0, 0, r / 2}, halfShape, ones4);
    Value negHigh = linalg::NegFOp::create(b, loc, ValueRange{high},
                                           ValueRange{empty(halfShape, elem)})
                        .getResult(0);
    Value rotated =
        record(tensor::ConcatOp::create(b, loc, 3, ValueRange{negHigh, low}),
               rotatedShape);
    auto table = [&](Value cache) {
      Value both =
          record(tensor::ConcatOp::create(b, loc, 2, ValueRange{cache, cache}),
                 {cd[0], cd[1], r});
      return broadcastTo(reshapeTo(both, {cd[0], 1, cd[1], r}), rotatedShape);
    };
    auto binary = [&](auto tag, Value lhs, Value rhs) {
      using OpT = decltype(tag);
      return OpT::create(b, loc, ValueRange{lhs, rhs},
                         ValueRange{empty(rotatedShape, elem)})
          .getResult(0);
    };
    Value out =
        binary(linalg::AddOp(), binary(linalg::MulOp(), xr, table(cosCache)),
               binary(linalg::MulOp(), rotated, table(sinCache)));
    if (r < d) {
      SmallVector<int64_t> passShape = shape4;
      passShape[3] = d - r;
      Value pass = staticSlice(x, {0, 0, 0, r}, passShape, ones4);
      out = record(tensor::ConcatOp::create(b, loc, 3, ValueRange{out, pass}),
                   shape4);
    }
    setOutput(0, out);
    return Error::success();
  }
  Value out = generic(
      ValueRange{x}, shape4, elem,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        auto idx = [&](int64_t dim) -> Value {
          return linalg::IndexOp::create(nb, nl, dim);
        };
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nl, v);
        };
        Value bi = idx(0), si = idx(seqAxis), di = idx(3);
        Value half = cst(r / 2);
        // The frequency, the partner element and whether this is the first
        // of the pair.
        Value freq, partner, first;
        if (interleaved) {
          freq = arith::DivUIOp::create(nb, nl, di, cst(2));
          Value odd = arith::RemUIOp::create(nb, nl, di, cst(2));
          first = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, odd,
                                        cst(0));
          partner = arith::SelectOp::create(
              nb, nl, first, arith::AddIOp::create(nb, nl, di, cst(1)),
              arith::SubIOp::create(nb, nl, di, cst(1)));
        } else {
          first = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, di,
                                        half);
          freq = arith::SelectOp::create(
              nb, nl, first, di, arith::SubIOp::create(nb, nl, di, half));
          partner = arith::SelectOp::create(
              nb, nl, first, arith::AddIOp::create(nb, nl, di, half),
              arith::SubIOp::create(nb, nl, di, half));
        }
        Value rotates = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                              di, cst(r));
        // Elements past R read frequency 0 and themselves (unused).
        freq = arith::SelectOp::create(nb, nl, rotates, freq, cst(0));
        partner = arith::SelectOp::create(nb, nl, rotates, partner, di);
        SmallVector<Value> at;
        if (hasIds) {
          Value pos =
              tensor::ExtractOp::create(nb, nl, ids, ValueRange{bi, si});
          at = {arith::IndexCastOp::create(nb, nl, nb.getIndexType(), pos),
                freq};
        } else {
          // A cache axis of size 1 broadcasts (when the input's is not 1).
          at = {cd[0] == 1 ? cst(0) : bi, cd[1] == 1 ? cst(0) : si, freq};
        }
        Value c = tensor::ExtractOp::create(nb, nl, cosCache, at);
        Value s = tensor::ExtractOp::create(nb, nl, sinCache, at);
        SmallVector<Value> pat{idx(0), idx(1), idx(2), partner};
        Value p = tensor::ExtractOp::create(nb, nl, x, pat);
        Value xc = arith::MulFOp::create(nb, nl, a[0], c);
        Value ps = arith::MulFOp::create(nb, nl, p, s);
        Value rotated = arith::SelectOp::create(
            nb, nl, first, arith::SubFOp::create(nb, nl, xc, ps),
            arith::AddFOp::create(nb, nl, xc, ps));
        return arith::SelectOp::create(nb, nl, rotates, rotated, a[0]);
      });
  setOutput(0, rank == 3 ? reshapeTo(out, xd) : out);
  return Error::success();
}

void attnc::onnx_frontend::registerAttentionOps(OpRegistry &r) {
  r.add("Attention", 23, kLatestOpset,
        "is_causal kv_num_heads q_num_heads qk_matmul_output_mode scale "
        "softcap softmax_precision",
        plainImporter<&Importer::importAttention>);
  r.add("RotaryEmbedding", 23, kLatestOpset,
        "interleaved num_heads rotary_embedding_dim",
        plainImporter<&Importer::importRotaryEmbedding>);
}
