//===- Index.cpp - ONNX slicing and indexing ops --------------------------===//
//
// Slice, Split, Gather (a table lookup becomes attn.embedding) and Concat:
// host constants are sliced on the host, run-time values by
// tensor.extract_slice and tensor.concat.
//
//===----------------------------------------------------------------------===//

#include "../Importer.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

Error Importer::importSlice(StringRef op, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset >= 10) {
    auto s = constantInts(1, "starts"), e = constantInts(2, "ends");
    if (!s)
      return s.takeError();
    if (!e)
      return e.takeError();
    starts = *s;
    ends = *e;
    if (hasInput(3)) {
      auto a = constantInts(3, "axes");
      if (!a)
        return a.takeError();
      axes = *a;
    }
    if (hasInput(4)) {
      auto st = constantInts(4, "steps");
      if (!st)
        return st.takeError();
      steps = *st;
    }
  }
  if (starts.size() != ends.size())
    return fail("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return fail("axes and steps must match starts in length");
  if (llvm::any_of(axes, isSymbolic) || llvm::any_of(steps, isSymbolic))
    return failSymbolic("axes and steps must not be symbolic");
  SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes[i];
    if (Error err = normalizeAxis(axis, rank))
      return err;
    int64_t dim = shape[axis], step = steps[i];
    if (step <= 0)
      return fail("steps must be positive (negative steps are not supported)");
    auto start = clampIndex(starts[i], dim);
    if (!start)
      return start.takeError();
    auto end = clampIndex(ends[i], dim);
    if (!end)
      return end.takeError();
    offsets[axis] = *start;
    strides[axis] = step;
    if (!isSymbolic(*start) && !isSymbolic(*end)) {
      sizes[axis] = *end > *start ? (*end - *start + step - 1) / step : 0;
      continue;
    }
    auto len = syms.sub(*end, *start);
    if (auto c = syms.compare(*end, *start); c && *c <= 0)
      len = 0;
    else if (len && step != 1)
      len = syms.divExact(*len, step);
    if (!len)
      return failSymbolic("cannot size the slice " + syms.str(*start) + ":" +
                          syms.str(*end) + ":" + Twine(step).str() +
                          " of dimension " + Twine(axis).str() + " (" +
                          syms.str(dim) + ")");
    sizes[axis] = *len;
  }
  return setSliceOutput(0, offsets, sizes, strides);
}

Error Importer::importSplit(StringRef op, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  int64_t outputs = current->output_size(), dim = shape[*axis];
  std::vector<int64_t> parts;
  if (opset >= 13 && hasInput(1)) {
    auto s = constantInts(1, "split");
    if (!s)
      return s.takeError();
    parts = *s;
  } else if (auto s = getIntsAttr(*current, "split")) {
    parts = *s;
  } else {
    if (isSymbolic(dim))
      return failSymbolic("cannot split the symbolic extent " + syms.str(dim) +
                          " into equal parts");
    int64_t count = getIntAttr(*current, "num_outputs", outputs);
    if (count <= 0)
      return fail("num_outputs must be positive");
    int64_t chunk = (dim + count - 1) / count;
    for (int64_t i = 0; i < count; ++i)
      parts.push_back(std::min(chunk, dim - i * chunk));
  }
  if (static_cast<int64_t>(parts.size()) != outputs)
    return fail("split has " + Twine(parts.size()) + " parts for " +
                Twine(outputs) + " outputs");
  int64_t sum = 0;
  for (int64_t p : parts) {
    if (p < 0 && !isSymbolic(p))
      return fail("split sizes must not be negative");
    auto s = syms.add(sum, p);
    if (!s)
      return fail("split sizes overflow");
    sum = *s;
  }
  if (sum != dim) {
    if (isSymbolic(sum) || isSymbolic(dim))
      return failSymbolic("split sizes add up to " + syms.str(sum) +
                          ", not the axis extent " + syms.str(dim));
    return fail("split sizes add up to " + Twine(sum) +
                ", not the axis extent " + Twine(dim));
  }
  int64_t offset = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
    offsets[*axis] = offset;
    sizes[*axis] = parts[i];
    offset = *syms.add(offset, parts[i]);
    if (Error err = setSliceOutput(i, offsets, sizes, strides))
      return err;
  }
  return Error::success();
}

Error Importer::importGather(StringRef op, ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  Entry *data = lookup(current->input(0));
  const HostTensor *indices = constantInput(1);
  // A table lookup: an initializer (or constant) table indexed by ids; with
  // constant ids, still a lookup of the weight.
  if (data && data->constant && rank == 2 && *axis == 0 &&
      data->constant->isFloat()) {
    auto table = input(0), ids = input(1);
    if (!table)
      return table.takeError();
    if (!ids)
      return ids.takeError();
    auto idsType = typeOf(*ids);
    SmallVector<int64_t> outShape;
    if (indices) {
      for (int64_t i : indices->toInts())
        if (i < 0 || i >= shape[0])
          return fail("index " + Twine(i) + " is out of range for a table of " +
                      Twine(shape[0]) + " rows");
      outShape.assign(indices->shape.begin(), indices->shape.end());
    } else {
      if (!idsType.getElementType().isInteger(64) &&
          !idsType.getElementType().isInteger(32))
        return fail("indices must be int32 or int64");
      outShape = dimsOf(*ids);
    }
    // Scalar ids look up one row.
    Value ids2 = outShape.empty() ? reshapeTo(*ids, {1}) : *ids;
    outShape.push_back(shape[1]);
    SmallVector<int64_t> embShape = dimsOf(ids2);
    embShape.push_back(shape[1]);
    Value emb = record(
        attn::EmbeddingOp::create(
            b, loc, tensorType(embShape, typeOf(*table).getElementType()), ids2,
            *table),
        embShape);
    setOutput(0, reshapeTo(emb, outShape));
    return Error::success();
  }
  if (!indices)
    return importRuntimeGather(*axis, shape);
  auto x = input(0);
  if (!x)
    return x.takeError();
  std::vector<int64_t> idx = indices->toInts();
  int64_t extent = shape[*axis];
  for (int64_t &i : idx) {
    if (isSymbolic(i) || isSymbolic(extent)) {
      // x[:, s - 1]: a symbolic index, or a constant one into a symbolic
      // extent; negative constants count from the end.
      if (!isSymbolic(i) && i < 0)
        i = *syms.add(i, extent);
      auto lo = syms.compare(i, 0), hi = syms.compare(i, extent);
      if ((lo && *lo < 0) || (hi && *hi >= 0))
        return fail("index " + syms.str(i) + " is out of range for extent " +
                    syms.str(extent));
      checkInside(i, 0, extent, /*inclusive=*/false,
                  "index " + syms.str(i) + " lies outside [0, " +
                      syms.str(extent) + ") at this size");
      continue;
    }
    if (i < -extent || i >= extent)
      return fail("index " + Twine(i) + " is out of range for extent " +
                  Twine(extent));
    if (i < 0)
      i += extent;
  }
  // One slice per index along the axis, concatenated (a single slice for a
  // scalar index or a run of consecutive ones).
  auto sliceAt = [&](int64_t start, int64_t len) -> Value {
    SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
    offsets[*axis] = start;
    sizes[*axis] = len;
    return staticSlice(*x, offsets, sizes, strides);
  };
  bool consecutive = true;
  for (size_t i = 1; i < idx.size(); ++i)
    consecutive &= syms.sub(idx[i], idx[i - 1]) == std::optional<int64_t>(1);
  Value gathered;
  if (idx.empty())
    return fail("empty indices are not supported");
  SmallVector<int64_t> gatheredShape(shape);
  if (consecutive) {
    gathered = sliceAt(idx[0], static_cast<int64_t>(idx.size()));
    gatheredShape[*axis] = static_cast<int64_t>(idx.size());
  } else {
    SmallVector<Value> parts;
    for (int64_t i : idx)
      parts.push_back(sliceAt(i, 1));
    gathered = tensor::ConcatOp::create(b, loc, *axis, parts);
    gatheredShape[*axis] = static_cast<int64_t>(idx.size());
    record(gathered, gatheredShape);
  }
  SmallVector<int64_t> outShape(shape.begin(), shape.begin() + *axis);
  outShape.append(indices->shape.begin(), indices->shape.end());
  outShape.append(shape.begin() + *axis + 1, shape.end());
  setOutput(0, reshapeTo(gathered, outShape));
  return Error::success();
}

Error Importer::importRuntimeGather(int64_t axis, ArrayRef<int64_t> shape) {
  // Indices known only at run time (the TorchScript exporter's
  // `mask[batch_idx, kv_idx]` gathers from the flattened mask at
  // `batch * S + kv`): an element-wise read at each index. ONNX makes an
  // index outside [-extent, extent) an error: the run stops with one, and
  // reads are clamped into the axis so none touches memory out of bounds.
  auto x = input(0), ids = input(1);
  if (!x)
    return x.takeError();
  if (!ids)
    return ids.takeError();
  Type idElem = typeOf(*ids).getElementType();
  if (!idElem.isInteger(64) && !idElem.isInteger(32))
    return fail("indices must be int32 or int64");
  SmallVector<int64_t> idShape = dimsOf(*ids);
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t q = static_cast<int64_t>(idShape.size());
  SmallVector<int64_t> outShape(shape.begin(), shape.begin() + axis);
  outShape.append(idShape.begin(), idShape.end());
  outShape.append(shape.begin() + axis + 1, shape.end());
  int64_t outRank = static_cast<int64_t>(outShape.size());
  Value extent = indexValue(shape[axis]);
  // The index counted from the start, and whether it lies in range.
  auto normalize = [&](OpBuilder &nb, Location nl,
                       Value raw) -> std::pair<Value, Value> {
    Value i = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), raw);
    Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
    Value neg =
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, zero);
    i = arith::SelectOp::create(nb, nl, neg,
                                arith::AddIOp::create(nb, nl, i, extent), i);
    Value ok = arith::AndIOp::create(
        nb, nl,
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, i, zero),
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, extent));
    return {i, ok};
  };
  // All indices in range: an and-reduction to one flag, asserted.
  Type i1 = b.getI1Type();
  Value allTrue =
      fill({}, arith::ConstantOp::create(b, loc, i1, b.getBoolAttr(true)));
  SmallVector<AffineMap> checkMaps{
      b.getMultiDimIdentityMap(q),
      AffineMap::get(q, 0, ArrayRef<AffineExpr>{}, b.getContext())};
  SmallVector<utils::IteratorType> checkIters(q,
                                              utils::IteratorType::reduction);
  Value inRange =
      linalg::GenericOp::create(
          b, loc, TypeRange{tensorType({}, i1)}, ValueRange{*ids},
          ValueRange{allTrue}, checkMaps, checkIters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value ok = normalize(nb, nl, a[0]).second;
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AndIOp::create(nb, nl, ok, a[1])});
          })
          .getResult(0);
  cf::AssertOp::create(
      b, loc, tensor::ExtractOp::create(b, loc, inRange, ValueRange{}),
      "^ " + nodeName(*current) + ": an index lies outside [-" +
          syms.str(shape[axis]) + ", " + syms.str(shape[axis]) + ")");
  // The gather: output position (pre, j, post) reads x[pre, ids[j], post].
  SmallVector<AffineExpr> idExprs;
  for (int64_t d = 0; d < q; ++d)
    idExprs.push_back(b.getAffineDimExpr(axis + d));
  SmallVector<AffineMap> maps{
      AffineMap::get(outRank, 0, idExprs, b.getContext()),
      b.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iters(outRank,
                                         utils::IteratorType::parallel);
  Type elem = typeOf(*x).getElementType();
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{tensorType(outShape, elem)}, ValueRange{*ids},
          ValueRange{empty(outShape, elem)}, maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            auto [i, ok] = normalize(nb, nl, a[0]);
            i = arith::SelectOp::create(
                nb, nl, ok, i, arith::ConstantIndexOp::create(nb, nl, 0));
            SmallVector<Value> at;
            for (int64_t d = 0; d < rank; ++d) {
              if (d == axis)
                at.push_back(i);
              else
                at.push_back(
                    linalg::IndexOp::create(nb, nl, d < axis ? d : d + q - 1));
            }
            linalg::YieldOp::create(
                nb, nl, ValueRange{tensor::ExtractOp::create(nb, nl, *x, at)});
          })
          .getResult(0);
  setOutput(0, record(out, outShape));
  return Error::success();
}

Error Importer::importConcat() {
  SmallVector<Value> parts;
  for (int i = 0; i < current->input_size(); ++i) {
    auto shape = shapeOf(i);
    if (!shape)
      return shape.takeError();
    // Empty parts (zero along the axis) add nothing.
    bool emptyPart = llvm::is_contained(*shape, 0);
    if (emptyPart)
      continue;
    auto v = input(i);
    if (!v)
      return v.takeError();
    parts.push_back(*v);
  }
  if (parts.empty())
    return fail("all inputs are empty");
  int64_t rank = typeOf(parts[0]).getRank();
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  SmallVector<int64_t> first = dimsOf(parts[0]), outShape = first;
  outShape[*axis] = 0;
  for (Value p : parts) {
    auto t = typeOf(p);
    SmallVector<int64_t> dims = dimsOf(p);
    if (t.getRank() != rank ||
        t.getElementType() != typeOf(parts[0]).getElementType())
      return fail("inputs differ in rank or element type");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && dims[d] != first[d])
        return fail("inputs differ outside the concatenation axis: " +
                    shapeText(first) + " and " + shapeText(dims));
    auto sum = syms.add(outShape[*axis], dims[*axis]);
    if (!sum)
      return fail("the concatenated extent overflows");
    outShape[*axis] = *sum;
  }
  setOutput(0, parts.size() == 1
                   ? parts[0]
                   : record(tensor::ConcatOp::create(b, loc, *axis, parts),
                            outShape));
  return Error::success();
}

/// `v` (an integer index of a dimension of extent `dim`) as an index,
/// negative ones counting from the end.
static Value wrapIndex(OpBuilder &nb, Location nl, Value v, Value dim) {
  Value i = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v);
  Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
  Value neg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, zero);
  return arith::SelectOp::create(nb, nl, neg,
                                 arith::AddIOp::create(nb, nl, i, dim), i);
}

Expected<Value> Importer::importGatherElements(StringRef op,
                                               ArrayRef<Value> in) {
  Value data = in[0], indices = in[1];
  int64_t rank = typeOf(data).getRank();
  if (typeOf(indices).getRank() != rank)
    return fail("indices must have the rank of data");
  if (!isa<IntegerType>(typeOf(indices).getElementType()) ||
      typeOf(indices).getElementType().isInteger(1))
    return fail("indices must be int32 or int64");
  auto axis = axisAttr("axis", 0, rank);
  if (!axis)
    return axis.takeError();
  if (const HostTensor *c = constantInput(1))
    for (int64_t i : c->toInts())
      if (!isSymbolic(dimsOf(data)[*axis]) &&
          (i < -dimsOf(data)[*axis] || i >= dimsOf(data)[*axis]))
        return fail("index " + Twine(i) + " is out of range for extent " +
                    Twine(dimsOf(data)[*axis]));
  Value extent = indexValue(dimsOf(data)[*axis]);
  return generic(
      ValueRange{indices}, dimsOf(indices), typeOf(data).getElementType(),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d)
          coords.push_back(
              d == *axis ? wrapIndex(nb, nl, a[0], extent)
                         : linalg::IndexOp::create(nb, nl, d).getResult());
        return tensor::ExtractOp::create(nb, nl, data, coords);
      });
}

Expected<Value> Importer::importGatherND(StringRef op, ArrayRef<Value> in) {
  Value data = in[0], indices = in[1];
  SmallVector<int64_t> dataDims = dimsOf(data), idxDims = dimsOf(indices);
  int64_t r = dataDims.size(), q = idxDims.size();
  int64_t batchDims = getIntAttr(*current, "batch_dims", 0);
  if (q < 1 || isSymbolic(idxDims.back()))
    return fail("the last dimension of indices must be a constant");
  int64_t k = idxDims.back();
  if (batchDims < 0 || batchDims >= std::min(q, r) || batchDims + k > r)
    return fail("batch_dims " + Twine(batchDims) + " and index length " +
                Twine(k) + " do not fit data of rank " + Twine(r) +
                " and indices of rank " + Twine(q));
  for (int64_t d = 0; d < batchDims; ++d)
    if (dataDims[d] != idxDims[d])
      return fail("the batch dimensions of data and indices differ");
  if (!isa<IntegerType>(typeOf(indices).getElementType()) ||
      typeOf(indices).getElementType().isInteger(1))
    return fail("indices must be int32 or int64");
  SmallVector<int64_t> outShape(idxDims.begin(), idxDims.end() - 1);
  outShape.append(dataDims.begin() + batchDims + k, dataDims.end());
  SmallVector<Value> extents;
  for (int64_t j = 0; j < k; ++j)
    extents.push_back(indexValue(dataDims[batchDims + j]));
  return generic(ValueRange{}, outShape, typeOf(data).getElementType(),
                 [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
                   SmallVector<Value> outer, coords;
                   for (int64_t d = 0; d < q - 1; ++d)
                     outer.push_back(linalg::IndexOp::create(nb, nl, d));
                   coords.append(outer.begin(), outer.begin() + batchDims);
                   for (int64_t j = 0; j < k; ++j) {
                     SmallVector<Value> at(outer);
                     at.push_back(arith::ConstantIndexOp::create(nb, nl, j));
                     Value v = tensor::ExtractOp::create(nb, nl, indices, at);
                     coords.push_back(wrapIndex(nb, nl, v, extents[j]));
                   }
                   for (int64_t d = q - 1;
                        d < static_cast<int64_t>(outShape.size()); ++d)
                     coords.push_back(linalg::IndexOp::create(nb, nl, d));
                   return tensor::ExtractOp::create(nb, nl, data, coords);
                 });
}

/// More writes than this in one Scatter node are refused (each is an op).
constexpr int64_t kMaxScatterWrites = 4096;

Value Importer::combine(OpBuilder &nb, Location nl, StringRef reduction,
                        Value old, Value v) {
  bool isFloat = isa<FloatType>(v.getType());
  if (reduction == "add")
    return isFloat ? arith::AddFOp::create(nb, nl, old, v).getResult()
                   : arith::AddIOp::create(nb, nl, old, v).getResult();
  if (reduction == "mul")
    return isFloat ? arith::MulFOp::create(nb, nl, old, v).getResult()
                   : arith::MulIOp::create(nb, nl, old, v).getResult();
  if (reduction == "max")
    return isFloat ? arith::MaximumFOp::create(nb, nl, old, v).getResult()
                   : arith::MaxSIOp::create(nb, nl, old, v).getResult();
  return isFloat ? arith::MinimumFOp::create(nb, nl, old, v).getResult()
                 : arith::MinSIOp::create(nb, nl, old, v).getResult();
}

Expected<Value> Importer::importScatter(StringRef op, ArrayRef<Value> in) {
  Value data = in[0];
  bool nd = op == "ScatterND";
  const onnx::AttributeProto *redAttr = findAttribute(*current, "reduction");
  std::string reduction = redAttr ? redAttr->s() : "none";
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min")
    return fail("reduction '" + reduction + "' is not supported");
  auto updates = input(2);
  if (!updates)
    return updates.takeError();
  Type elem = typeOf(data).getElementType();
  if (typeOf(*updates).getElementType() != elem)
    return fail("updates and data have different element types");
  // Run-time indices, and ScatterND's reductions (the slice writes below
  // only overwrite), read the indices in the IR.
  const HostTensor *indices = constantInput(1);
  if (!indices || (nd && reduction != "none")) {
    auto runtimeIndices = input(1);
    if (!runtimeIndices)
      return runtimeIndices.takeError();
    return importScatterRuntime(nd, reduction, data, *runtimeIndices, *updates);
  }
  SmallVector<int64_t> dataDims = dimsOf(data), updDims = dimsOf(*updates);
  int64_t r = dataDims.size();
  std::vector<int64_t> idx = indices->toInts();
  if (llvm::any_of(idx, isSymbolic))
    return failSymbolic("symbolic indices are not supported");
  auto checkIndex = [&](int64_t &i, int64_t d) -> Error {
    int64_t dim = dataDims[d];
    if (isSymbolic(dim))
      return failSymbolic("scatters into a symbolic dimension");
    if (i < -dim || i >= dim)
      return fail("index " + Twine(i) + " is out of range for extent " +
                  Twine(dim));
    if (i < 0)
      i += dim;
    return Error::success();
  };
  Value result = data;
  if (nd) {
    if (indices->shape.empty())
      return fail("indices must have rank >= 1");
    int64_t k = indices->shape.back();
    if (k > r)
      return fail("index tuples are longer than data's rank");
    int64_t count = k ? static_cast<int64_t>(idx.size()) / k : 0;
    if (count > kMaxScatterWrites)
      return fail("writes " + Twine(count) + " slices; at most " +
                  Twine(kMaxScatterWrites) + " are supported");
    // updates: indices.shape[:-1] + data.shape[k:].
    SmallVector<int64_t> want(indices->shape.begin(), indices->shape.end() - 1);
    want.append(dataDims.begin() + k, dataDims.end());
    if (want != updDims)
      return fail("updates have shape " + shapeText(updDims) + ", not " +
                  shapeText(want));
    SmallVector<int64_t> tail(dataDims.begin() + k, dataDims.end());
    SmallVector<int64_t> flatShape{count};
    flatShape.append(tail);
    Value flat = reshapeTo(*updates, flatShape);
    SmallVector<int64_t> sliceShape(k, 1);
    sliceShape.append(tail);
    for (int64_t w = 0; w < count; ++w) {
      SmallVector<int64_t> offsets(r, 0), one(r, 1),
          flatOff(tail.size() + 1, 0);
      for (int64_t j = 0; j < k; ++j) {
        offsets[j] = idx[w * k + j];
        if (Error err = checkIndex(offsets[j], j))
          return std::move(err);
      }
      flatOff[0] = w;
      SmallVector<int64_t> flatSizes{1};
      flatSizes.append(tail);
      Value piece =
          reshapeTo(staticSlice(flat, flatOff, flatSizes,
                                SmallVector<int64_t>(flatSizes.size(), 1)),
                    sliceShape);
      result = record(tensor::InsertSliceOp::create(
                          b, loc, piece, result, foldResults(offsets),
                          foldResults(sliceShape), foldResults(one)),
                      dataDims);
    }
    return result;
  }
  // ScatterElements: updates[p] goes to data[p with axis -> indices[p]].
  auto axis = axisAttr("axis", 0, r);
  if (!axis)
    return axis.takeError();
  if (indices->shape.size() != static_cast<size_t>(r) ||
      ArrayRef<int64_t>(indices->shape) != ArrayRef<int64_t>(updDims))
    return fail("indices and updates must have one shape of data's rank");
  if (static_cast<int64_t>(idx.size()) > kMaxScatterWrites)
    return fail("writes " + Twine(idx.size()) + " elements; at most " +
                Twine(kMaxScatterWrites) + " are supported");
  SmallVector<int64_t> pos(r, 0);
  for (size_t flat = 0; flat < idx.size(); ++flat) {
    SmallVector<Value> src, dst;
    for (int64_t d = 0; d < r; ++d) {
      src.push_back(arith::ConstantIndexOp::create(b, loc, pos[d]));
      int64_t t = pos[d];
      if (d == *axis) {
        t = idx[flat];
        if (Error err = checkIndex(t, d))
          return std::move(err);
      }
      dst.push_back(arith::ConstantIndexOp::create(b, loc, t));
    }
    Value v = tensor::ExtractOp::create(b, loc, *updates, src);
    if (reduction != "none") {
      Value old = tensor::ExtractOp::create(b, loc, result, dst);
      v = combine(b, loc, reduction, old, v);
    }
    result = record(tensor::InsertOp::create(b, loc, v, result, dst), dataDims);
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++pos[d] < indices->shape[d])
        break;
      pos[d] = 0;
    }
  }
  return result;
}

/// Index `raw` of an axis of extent `extent` counted from the start, and
/// whether it lies in [-extent, extent).
static std::pair<Value, Value> normalizeIndex(OpBuilder &nb, Location nl,
                                              Value raw, Value extent) {
  Value i = wrapIndex(nb, nl, raw, extent);
  Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
  Value ok = arith::AndIOp::create(
      nb, nl, arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, extent));
  return {i, ok};
}

Expected<Value> Importer::importScatterRuntime(bool nd, StringRef reduction,
                                               Value data, Value indices,
                                               Value updates) {
  // Each data element looks for the updates that land on it (a reduction
  // over the index tuples): "none" takes the last one in order, as a
  // sequential scatter leaves it; add/mul/max/min combine them all. The
  // cost is data elements times index tuples, fine for the masks exporters
  // scatter into.
  SmallVector<int64_t> dataDims = dimsOf(data), idxDims = dimsOf(indices),
                       updDims = dimsOf(updates);
  int64_t r = dataDims.size(), q = idxDims.size();
  Type elem = typeOf(data).getElementType();
  if (!isa<IntegerType>(typeOf(indices).getElementType()) ||
      typeOf(indices).getElementType().isInteger(1))
    return fail("indices must be int32 or int64");
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type(), i1 = b.getI1Type();

  // The index tuples as [count, k] (ScatterND) or the axis's indices
  // (ScatterElements: tuple j of position p is p with the axis -> j).
  int64_t k = 0, axis = 0;
  Value tuples = indices;
  SmallVector<Value> extents;
  for (int64_t d = 0; d < r; ++d)
    extents.push_back(indexValue(dataDims[d]));
  if (nd) {
    if (q < 1 || isSymbolic(idxDims.back()) || idxDims.back() > r)
      return fail("the last dimension of indices must be a constant of at "
                  "most data's rank");
    k = idxDims.back();
    SmallVector<int64_t> want(idxDims.begin(), idxDims.end() - 1);
    want.append(dataDims.begin() + k, dataDims.end());
    if (!llvm::equal(want, updDims,
                     [&](int64_t x, int64_t y) { return unifyDims(x, y); }))
      return fail("updates have shape " + shapeText(updDims) + ", not " +
                  shapeText(want));
    auto count = syms.product(ArrayRef<int64_t>(idxDims).drop_back());
    if (!count)
      return fail("the number of index tuples overflows");
    tuples = reshapeTo(indices, {*count, k});
    SmallVector<int64_t> flat{*count};
    flat.append(dataDims.begin() + k, dataDims.end());
    updates = reshapeTo(updates, flat);
  } else {
    auto a = axisAttr("axis", 0, r);
    if (!a)
      return a.takeError();
    axis = *a;
    if (q != r || !llvm::equal(idxDims, updDims, [&](int64_t x, int64_t y) {
          return unifyDims(x, y);
        }))
      return fail("indices and updates must have one shape of data's rank");
  }

  // Every index in range, asserted at run time.
  {
    int64_t rank = dimsOf(tuples).size();
    Value allTrue =
        fill({}, arith::ConstantOp::create(b, loc, i1, b.getBoolAttr(true)));
    SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                                AffineMap::get(rank, 0, {}, ctx)};
    Value inRange =
        linalg::GenericOp::create(
            b, loc, TypeRange{tensorType({}, i1)}, ValueRange{tuples},
            ValueRange{allTrue}, maps,
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::reduction),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              // The axis the index addresses: the tuple's component j.
              Value extent = extents[axis];
              if (nd) {
                Value j = linalg::IndexOp::create(nb, nl, 1);
                extent = extents[0];
                for (int64_t c = 1; c < k; ++c) {
                  Value is = arith::CmpIOp::create(
                      nb, nl, arith::CmpIPredicate::eq, j,
                      arith::ConstantIndexOp::create(nb, nl, c));
                  extent =
                      arith::SelectOp::create(nb, nl, is, extents[c], extent);
                }
              }
              Value ok = normalizeIndex(nb, nl, a[0], extent).second;
              linalg::YieldOp::create(
                  nb, nl, ValueRange{arith::AndIOp::create(nb, nl, ok, a[1])});
            })
            .getResult(0);
    cf::AssertOp::create(
        b, loc, tensor::ExtractOp::create(b, loc, inRange, ValueRange{}),
        "^ " + nodeName(*current) + ": an index lies outside its axis");
  }

  // The loops: data's dimensions (parallel), then the tuples (reduction).
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  int64_t tupleCount = nd ? dimsOf(tuples)[0] : idxDims[axis];
  SmallVector<Value> idxExtents;
  if (!nd)
    for (int64_t d = 0; d < r; ++d)
      idxExtents.push_back(indexValue(idxDims[d]));
  // Whether tuple w lands on data position p (the loop indices), and where
  // its update is.
  auto landing = [&](OpBuilder &nb,
                     Location nl) -> std::pair<Value, SmallVector<Value>> {
    SmallVector<Value> p;
    for (int64_t d = 0; d < r; ++d)
      p.push_back(linalg::IndexOp::create(nb, nl, d));
    Value w = linalg::IndexOp::create(nb, nl, r);
    Value match = arith::ConstantOp::create(nb, nl, i1, nb.getBoolAttr(true));
    SmallVector<Value> at;
    if (nd) {
      at.push_back(w);
      for (int64_t j = 0; j < k; ++j) {
        Value raw = tensor::ExtractOp::create(
            nb, nl, tuples,
            ValueRange{w, arith::ConstantIndexOp::create(nb, nl, j)});
        Value i = normalizeIndex(nb, nl, raw, extents[j]).first;
        match = arith::AndIOp::create(
            nb, nl, match,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, i, p[j]));
      }
      at.append(p.begin() + k, p.end());
      return {match, at};
    }
    // ScatterElements: the update at p with the axis -> w, if p lies
    // inside the indices' shape off the axis.
    for (int64_t d = 0; d < r; ++d)
      if (d != axis)
        match = arith::AndIOp::create(
            nb, nl, match,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, p[d],
                                  idxExtents[d]));
    // Read the index only where it exists (clamped otherwise).
    SmallVector<Value> safe;
    Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
    for (int64_t d = 0; d < r; ++d)
      safe.push_back(
          d == axis
              ? w
              : arith::SelectOp::create(nb, nl, match, p[d], zero).getResult());
    Value raw = tensor::ExtractOp::create(nb, nl, indices, safe);
    Value i = normalizeIndex(nb, nl, raw, extents[axis]).first;
    match = arith::AndIOp::create(
        nb, nl, match,
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, i, p[axis]));
    return {match, safe};
  };
  SmallVector<AffineExpr> dataExprs;
  for (int64_t d = 0; d < r; ++d)
    dataExprs.push_back(b.getAffineDimExpr(d));
  AffineMap toData = AffineMap::get(r + 1, 0, dataExprs, ctx);
  // The reduction's extent comes from a tensor it reads: a tuple-sized
  // input indexed by w alone.
  Value tupleDomain = empty({tupleCount}, i1);
  AffineMap toTuple = AffineMap::get(r + 1, 0, {b.getAffineDimExpr(r)}, ctx);

  if (reduction != "none") {
    Value init =
        record(linalg::CopyOp::create(b, loc, data, empty(dataDims, elem))
                   .getResult(0),
               dataDims);
    return record(
        linalg::GenericOp::create(
            b, loc, TypeRange{typeOf(init)}, ValueRange{tupleDomain},
            ValueRange{init}, SmallVector<AffineMap>{toTuple, toData}, iters,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              auto [match, at] = landing(nb, nl);
              Value v = tensor::ExtractOp::create(nb, nl, updates, at);
              Value old = a[1];
              Value combined = combine(nb, nl, reduction, old, v);
              linalg::YieldOp::create(nb, nl,
                                      ValueRange{arith::SelectOp::create(
                                          nb, nl, match, combined, old)});
            })
            .getResult(0),
        dataDims);
  }

  // "none": the last tuple that lands on each position, carried with its
  // update (the data where none lands), so that updates are read only for
  // tuples that exist.
  Value none =
      fill(dataDims,
           arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(-1)));
  Value init = record(
      linalg::CopyOp::create(b, loc, data, empty(dataDims, elem)).getResult(0),
      dataDims);
  auto scatter = linalg::GenericOp::create(
      b, loc, TypeRange{typeOf(none), typeOf(init)}, ValueRange{tupleDomain},
      ValueRange{none, init}, SmallVector<AffineMap>{toTuple, toData, toData},
      iters, [&](OpBuilder &nb, Location nl, ValueRange a) {
        auto [match, at] = landing(nb, nl);
        Value w = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, r));
        Value take = arith::AndIOp::create(
            nb, nl, match,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sgt, w, a[1]));
        Value v = tensor::ExtractOp::create(nb, nl, updates, at);
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, take, w, a[1]),
                       arith::SelectOp::create(nb, nl, take, v, a[2])});
      });
  return record(scatter.getResult(1), dataDims);
}

void attnc::onnx_frontend::registerIndexOps(OpRegistry &r) {
  using R = OpRegistry;
  constexpr int kMin = kMinOpset, kMax = kLatestOpset;
  r.add("Slice", kMin, kMax, "", shapeImporter<&Importer::importSlice>,
        R::NoFold);
  // Split-18 adds num_outputs.
  r.add("Split", kMin, 17, "axis", shapeImporter<&Importer::importSplit>,
        R::NoFold);
  r.add("Split", 18, kMax, "axis num_outputs",
        shapeImporter<&Importer::importSplit>, R::NoFold);
  r.add("Gather", kMin, kMax, "axis", shapeImporter<&Importer::importGather>);
  r.add("Concat", kMin, kMax, "axis", plainImporter<&Importer::importConcat>);
  r.add("GatherElements", kMin, kMax, "axis",
        valueImporter<&Importer::importGatherElements, 2>);
  r.add("GatherND", kMin, kMax, "batch_dims",
        valueImporter<&Importer::importGatherND, 2>);
  // ScatterND-16 and ScatterElements-16 add reduction (add, mul), version
  // 18 max and min.
  r.add("ScatterND", kMin, 15, "", valueImporter<&Importer::importScatter, 1>);
  r.add("ScatterND", 16, kMax, "reduction",
        valueImporter<&Importer::importScatter, 1>);
  r.add("ScatterElements", kMin, 15, "axis",
        valueImporter<&Importer::importScatter, 1>);
  r.add("ScatterElements", 16, kMax, "axis reduction",
        valueImporter<&Importer::importScatter, 1>);
}
