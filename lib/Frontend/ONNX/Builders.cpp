//===- Builders.cpp - IR helpers of the ONNX importer ---------------------===//
//
// Building blocks the op importers share: splats, numpy broadcasting,
// reshapes through collapse/expand, transposes, slices (folded on host
// constants) and run-time checks of positions that depend on the symbols.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

Value Importer::splat(ArrayRef<int64_t> shape, Type elem, double value) {
  auto type = tensorType(shape, elem);
  TypedAttr scalar =
      isa<FloatType>(elem)
          ? TypedAttr(b.getFloatAttr(elem, value))
          : TypedAttr(b.getIntegerAttr(elem, static_cast<int64_t>(value)));
  if (!type.hasStaticShape())
    return fill(shape, arith::ConstantOp::create(b, loc, scalar));
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, scalar));
}

bool Importer::unifyDims(int64_t a, int64_t c) {
  if (a == c)
    return true;
  std::optional<int64_t> ca = syms.canonical(a), cc = syms.canonical(c);
  if (!ca || !cc)
    return false;
  if (*ca == *cc)
    return true;
  // Only two symbolic sizes are taken as one: a symbol against a constant
  // stays a broadcast error, as the exporter's intent is then unclear.
  if (!isSymbolic(*ca) || !isSymbolic(*cc))
    return false;
  // The run-time sizes before the binding makes them one.
  Value va = indexValue(a), vc = indexValue(c);
  std::string what = "dimension " + syms.str(a) + " must equal " + syms.str(c) +
                     " (attnc takes them as one size: it does not broadcast "
                     "a run-time size of 1 against another)";
  // The least used symbol goes; of equally used ones the later input's.
  auto preferred = [&](unsigned x, unsigned y) {
    unsigned ux = x < symbolInputUses.size() ? symbolInputUses[x] : 0;
    unsigned uy = y < symbolInputUses.size() ? symbolInputUses[y] : 0;
    return ux != uy ? ux < uy : x > y;
  };
  if (!syms.unify(a, c, preferred))
    return false;
  Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, va, vc);
  cf::AssertOp::create(b, loc, ok, ("^ " + nodeName(*current) + ": " + what));
  return true;
}

std::optional<SmallVector<int64_t>>
Importer::broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> c) {
  size_t rank = std::max(a.size(), c.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t dc = i < rank - c.size() ? 1 : c[i - (rank - c.size())];
    if (da == 1 || dc == 1) {
      out[i] = da == 1 ? dc : da;
      continue;
    }
    if (!unifyDims(da, dc))
      return std::nullopt;
    std::optional<int64_t> d = syms.canonical(da);
    if (!d)
      return std::nullopt;
    out[i] = *d;
  }
  return out;
}

Value Importer::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> in = dimsOf(v);
  // Dims equal up to a symbol binding count as equal.
  auto same = [&](int64_t x, int64_t y) {
    return x == y || syms.canonical(x) == syms.canonical(y);
  };
  if (in.size() == shape.size() &&
      llvm::all_of(llvm::seq<size_t>(0, in.size()),
                   [&](size_t d) { return same(in[d], shape[d]); }))
    return v;
  // Dims of `v` that already have the output's extent stay; its unit dims
  // that broadcast (and missing leading dims) are added by linalg.broadcast.
  size_t lead = shape.size() - in.size();
  SmallVector<int64_t> keptShape, addedDims;
  SmallVector<ReassociationIndices> groups;
  SmallVector<bool> kept(shape.size(), false);
  for (size_t d = 0; d < in.size(); ++d)
    if (same(in[d], shape[d + lead])) {
      kept[d + lead] = true;
      keptShape.push_back(shape[d + lead]);
    }
  for (size_t d = 0; d < shape.size(); ++d)
    if (!kept[d])
      addedDims.push_back(static_cast<int64_t>(d));
  Value collapsed = v;
  if (keptShape.size() != in.size()) {
    // Each kept dim absorbs the dropped unit dims before it; trailing
    // dropped dims join the last group.
    ReassociationIndices group;
    for (size_t d = 0; d < in.size(); ++d) {
      group.push_back(static_cast<int64_t>(d));
      if (kept[d + lead]) {
        groups.push_back(group);
        group.clear();
      }
    }
    if (!group.empty() && !groups.empty())
      groups.back().append(group.begin(), group.end());
    collapsed =
        record(tensor::CollapseShapeOp::create(
                   b, loc, tensorType(keptShape, typeOf(v).getElementType()), v,
                   groups),
               keptShape);
  }
  Value init = empty(shape, typeOf(v).getElementType());
  return linalg::BroadcastOp::create(b, loc, collapsed, init, addedDims)
      .getResult()[0];
}

/// Groups the dims of `big` into runs whose products are the dims of
/// `small` (symbolically; unit dims left over join the last run), as
/// getReassociationIndicesForReshape does for static shapes.
static std::optional<SmallVector<ReassociationIndices>>
groupDims(ArrayRef<int64_t> big, ArrayRef<int64_t> small, SymbolicDims &syms) {
  SmallVector<ReassociationIndices> groups;
  size_t i = 0;
  for (int64_t want : small) {
    ReassociationIndices group;
    int64_t prod = 1;
    while (i < big.size()) {
      auto p = syms.mul(prod, big[i]);
      if (!p)
        return std::nullopt;
      prod = *p;
      group.push_back(static_cast<int64_t>(i++));
      if (prod == want)
        break;
    }
    if (prod != want)
      return std::nullopt;
    groups.push_back(group);
  }
  for (; i < big.size(); ++i) {
    if (big[i] != 1 || groups.empty())
      return std::nullopt;
    groups.back().push_back(static_cast<int64_t>(i));
  }
  return groups;
}

Value Importer::reshapeTo(Value v, ArrayRef<int64_t> shape) {
  auto srcType = typeOf(v);
  SmallVector<int64_t> src = dimsOf(v);
  if (ArrayRef<int64_t>(src) == shape)
    return v;
  Type elem = srcType.getElementType();
  auto dstType = tensorType(shape, elem);
  auto expand = [&](Value from, ArrayRef<ReassociationIndices> groups) {
    return record(tensor::ExpandShapeOp::create(b, loc, dstType, from, groups,
                                                foldResults(shape)),
                  shape);
  };
  // To or from a scalar (rank 0): all dims are units, no groups.
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, dstType, v,
                                           ArrayRef<ReassociationIndices>{});
  if (src.empty())
    return expand(v, {});
  if (src.size() > shape.size()) {
    if (auto groups = groupDims(src, shape, syms))
      return record(
          tensor::CollapseShapeOp::create(b, loc, dstType, v, *groups), shape);
  } else if (src.size() < shape.size()) {
    if (auto groups = groupDims(shape, src, syms))
      return expand(v, *groups);
  }
  // Not a pure collapse or expand: through the flat vector (both are
  // plain views of the row-major data). The caller checked that the
  // element counts agree.
  int64_t n = *syms.product(src);
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < srcType.getRank(); ++d)
    all[0].push_back(d);
  Value flat = srcType.getRank() == 1
                   ? v
                   : record(tensor::CollapseShapeOp::create(
                                b, loc, tensorType({n}, elem), v, all),
                            {n});
  SmallVector<ReassociationIndices> out(1);
  for (int64_t d = 0; d < dstType.getRank(); ++d)
    out[0].push_back(d);
  if (dstType.getRank() == 1)
    return flat;
  return expand(flat, out);
}

Value Importer::transpose(Value v, ArrayRef<int64_t> perm) {
  auto type = typeOf(v);
  SmallVector<int64_t> dims = dimsOf(v), shape;
  for (int64_t p : perm)
    shape.push_back(dims[p]);
  return linalg::TransposeOp::create(b, loc, v,
                                     empty(shape, type.getElementType()), perm)
      .getResult()[0];
}

Value Importer::matmul2d(Value a, Value bm) {
  Value init = zeros({dimsOf(a)[0], dimsOf(bm)[1]}, typeOf(a).getElementType());
  return linalg::MatmulOp::create(b, loc, ValueRange{a, bm}, ValueRange{init})
      .getResult(0);
}

Value Importer::generic(
    ValueRange ins, ArrayRef<int64_t> shape, Type outElem,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto map = b.getMultiDimIdentityMap(shape.size());
  SmallVector<AffineMap> maps(ins.size() + 1, map);
  SmallVector<utils::IteratorType> iters(shape.size(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{tensorType(shape, outElem)}, ins,
             ValueRange{empty(shape, outElem)}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value r = body(nb, nl, args.drop_back());
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// Host slicing for constants (e.g. a causal buffer cut to the sequence).
static HostTensor sliceHost(const HostTensor &in, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes,
                            ArrayRef<int64_t> strides) {
  HostTensor out = HostTensor::zeros(in.dtype, sizes);
  int64_t rank = static_cast<int64_t>(sizes.size());
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * in.shape[d + 1];
  SmallVector<int64_t> idx(rank, 0);
  for (int64_t flat = 0, e = out.numElements(); flat < e; ++flat) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (offsets[d] + idx[d] * strides[d]) * inStrides[d];
    out.copyFrom(flat, in, src);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
    }
  }
  out.symbolic = in.symbolic;
  out.settleSymbolic();
  return out;
}

Value Importer::staticSlice(Value v, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes,
                            ArrayRef<int64_t> strides) {
  auto type = tensorType(sizes, typeOf(v).getElementType());
  return record(
      tensor::ExtractSliceOp::create(b, loc, type, v, foldResults(offsets),
                                     foldResults(sizes), foldResults(strides)),
      sizes);
}

Error Importer::setSliceOutput(size_t i, ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> strides) {
  // A constant cut to a symbolic size (a causal buffer sliced to the
  // sequence) stays a run-time slice of the materialized constant.
  bool symbolicBounds =
      llvm::any_of(offsets, isSymbolic) || llvm::any_of(sizes, isSymbolic);
  if (const HostTensor *c = constantInput(0); c && !symbolicBounds) {
    setConstantOutput(i, sliceHost(*c, offsets, sizes, strides));
    return Error::success();
  }
  auto x = input(0);
  if (!x)
    return x.takeError();
  setOutput(i, staticSlice(*x, offsets, sizes, strides));
  return Error::success();
}

void Importer::checkInside(int64_t v, int64_t lo, int64_t hi, bool inclusive,
                           const Twine &what) {
  auto loOk = syms.compare(v, lo);
  auto hiOk = syms.compare(v, hi);
  bool needLo = !loOk, needHi = !hiOk;
  if (!needLo && !needHi)
    return;
  Value iv = indexValue(v);
  Value ok;
  if (needLo)
    ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, iv,
                               indexValue(lo));
  if (needHi) {
    Value c = arith::CmpIOp::create(b, loc,
                                    inclusive ? arith::CmpIPredicate::sle
                                              : arith::CmpIPredicate::slt,
                                    iv, indexValue(hi));
    ok = ok ? arith::AndIOp::create(b, loc, ok, c).getResult() : c;
  }
  // The reason on a `^ ` line, as upstream's runtime verification writes.
  cf::AssertOp::create(b, loc, ok,
                       ("^ " + nodeName(*current) + ": " + what).str());
}

Expected<int64_t> Importer::clampIndex(int64_t v, int64_t dim) {
  // Negative positions count from the end.
  if (!isSymbolic(v) && v < 0) {
    if (v < -(int64_t(1) << 40))
      return 0;
    v = *syms.add(v, dim);
  }
  if (!isSymbolic(v) && !isSymbolic(dim))
    return std::clamp<int64_t>(v, 0, dim);
  if (auto c = syms.compare(v, dim); c && *c >= 0)
    return dim;
  if (auto c = syms.compare(v, 0); c && *c <= 0)
    return 0;
  // A constant beyond any size a model takes means "to the end" (exporters
  // write INT64_MAX); otherwise the position is taken to lie within the
  // dimension, as the exporter's trace had it.
  if (!isSymbolic(v) && v >= (int64_t(1) << 31))
    return dim;
  checkInside(v, 0, dim, /*inclusive=*/true,
              "the slice bound " + syms.str(v) + " lies outside [0, " +
                  syms.str(dim) + "] at this size");
  return v;
}
