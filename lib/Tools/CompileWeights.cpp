//===- CompileWeights.cpp - The weights files of quantized builds ---------===//
//
// attn-compile --quantize writes the quantized forms of the weights into
// the weights file at compile time, in the layouts that the lowered model
// binds by name; the model never quantizes a weight per run.
//
//===----------------------------------------------------------------------===//

#include "Compilation.h"

#include "attnc/Codegen/CPU/WeightOnlyLayout.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Runtime/SafeTensors.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace llvm;

namespace attnc {

/// The [N, K] matrix that the `attn.weight` with attributes `recipe` and
/// type shape `shape` binds, from the row-major [rows, cols] matrix
/// `stored` it reads: `stored`, or its transpose with `transpose`. An error
/// (prefixed by `option`) when that is not `shape`.
static Expected<std::vector<float>> boundMatrix(mlir::DictionaryAttr recipe,
                                                ArrayRef<int64_t> shape,
                                                std::vector<float> stored,
                                                int64_t rows, int64_t cols,
                                                StringRef option) {
  bool transpose = static_cast<bool>(recipe.get("transpose"));
  int64_t n = transpose ? cols : rows, k = transpose ? rows : cols;
  if (shape.size() != 2 || shape[0] != n || shape[1] != k)
    return createStringError(option + ": the binding of '" +
                             recipe.getAs<mlir::StringAttr>("name").getValue() +
                             "' is not the recorded shape");
  if (!transpose)
    return stored;
  std::vector<float> bound(stored.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      bound[j * rows + i] = stored[i * cols + j];
  return bound;
}

/// A 2-D f32 tensor that a binding reads: its shape and row-major data.
struct MatrixPart {
  int64_t rows, cols;
  const float *data;
};

/// The tensors a binding's `recipe` reads: the names of `concat_names`, or
/// its `name`; `axis` is set to `concat_axis` (0 without it).
static SmallVector<StringRef> recipeParts(mlir::DictionaryAttr recipe,
                                          int64_t &axis) {
  SmallVector<StringRef> parts;
  if (auto concat = recipe.getAs<mlir::ArrayAttr>("concat_names"))
    for (mlir::Attribute part : concat)
      parts.push_back(cast<mlir::StringAttr>(part).getValue());
  else
    parts.push_back(recipe.getAs<mlir::StringAttr>("name").getValue());
  auto axisAttr = recipe.getAs<mlir::IntegerAttr>("concat_axis");
  axis = axisAttr ? axisAttr.getInt() : 0;
  return parts;
}

/// The `parts` side by side along `axis` as one row-major [rows, cols]
/// matrix (rows and cols are set).
static std::vector<float> concatParts(ArrayRef<MatrixPart> parts, int64_t axis,
                                      int64_t &rows, int64_t &cols) {
  rows = cols = 0;
  for (const MatrixPart &p : parts) {
    rows = axis == 0 ? rows + p.rows : p.rows;
    cols = axis == 0 ? p.cols : cols + p.cols;
  }
  std::vector<float> stored(rows * cols);
  int64_t offset = 0;
  for (const MatrixPart &p : parts) {
    for (int64_t i = 0; i < p.rows; ++i)
      for (int64_t j = 0; j < p.cols; ++j)
        stored[axis == 0 ? (offset + i) * cols + j : i * cols + offset + j] =
            p.data[i * p.cols + j];
    offset += axis == 0 ? p.rows : p.cols;
  }
  return stored;
}

/// The f32 matrix [N, K] that the `attn.weight` with attributes `recipe`
/// binds (a plain, transposed and/or concatenated tensor), from `byName`.
static Expected<std::vector<float>>
assembleBinding(mlir::DictionaryAttr recipe, ArrayRef<int64_t> shape,
                const StringMap<const onnx_frontend::WeightTensor *> &byName) {
  int64_t axis;
  SmallVector<MatrixPart> parts;
  for (StringRef part : recipeParts(recipe, axis)) {
    auto it = byName.find(part);
    if (it == byName.end() || it->second->shape.size() != 2)
      return createStringError("--quantize=int8: no 2-D f32 weight '" + part +
                               "' among the model's initializers");
    const onnx_frontend::WeightTensor *t = it->second;
    parts.push_back({t->shape[0], t->shape[1],
                     reinterpret_cast<const float *>(t->bytes.data())});
  }
  int64_t rows, cols;
  std::vector<float> stored = concatParts(parts, axis, rows, cols);
  return boundMatrix(recipe, shape, std::move(stored), rows, cols,
                     "--quantize=int8");
}

mlir::LogicalResult Compilation::prepareWeightsOutput(const Twine &path) {
  std::string weightsPath = path.str();
  auto prepared = SafeOutputFile::prepare(weightsPath, inputs);
  if (!prepared)
    return fail(toString(prepared.takeError()));
  // After the check against the inputs, which says more.
  if (Error err = checkSideFileReplaceable(weightsPath, options.force))
    return fail(toString(std::move(err)));
  weightsOutput.emplace(std::move(*prepared));
  return mlir::success();
}

mlir::LogicalResult Compilation::writeQuantizedWeights() {
  auto recorded =
      (*module)->getAttrOfType<mlir::DictionaryAttr>("attn.int8_weights");
  if (recorded)
    (*module)->removeAttr("attn.int8_weights");
  if (!weightsOutput)
    return mlir::success(); // A text stage: nothing is bound.
  StringMap<const onnx_frontend::WeightTensor *> byName;
  for (const onnx_frontend::WeightTensor &w : pendingWeights)
    byName[w.name] = &w;
  std::vector<onnx_frontend::WeightTensor> derived;
  for (mlir::NamedAttribute entry :
       recorded ? recorded.getValue() : ArrayRef<mlir::NamedAttribute>()) {
    auto info = cast<mlir::DictionaryAttr>(entry.getValue());
    ArrayRef<int64_t> shape =
        info.getAs<mlir::DenseI64ArrayAttr>("shape").asArrayRef();
    Expected<std::vector<float>> bound = assembleBinding(
        info.getAs<mlir::DictionaryAttr>("weight"), shape, byName);
    if (!bound)
      return fail(toString(bound.takeError()));
    // Per output column n: symmetric s8 with scale max|W[n, :]| / 127,
    // rounded half to even as the generated code does; stored K-major as
    // little-endian i32 words [K/4, N] of 4 consecutive k bytes, what one
    // vpdpbusd lane multiplies.
    int64_t n = shape[0], k = shape[1];
    std::string name = entry.getName().str();
    onnx_frontend::WeightTensor q{
        name, {k / 4, n}, std::string(n * k, '\0'), "I32"};
    onnx_frontend::WeightTensor scale{
        name + "_scale", {n}, std::string(n * 4, '\0'), "F32"};
    onnx_frontend::WeightTensor colsum{
        name + "_colsum", {n}, std::string(n * 4, '\0'), "F32"};
    for (int64_t i = 0; i < n; ++i) {
      const float *row = bound->data() + i * k;
      float amax = 0.0f;
      for (int64_t j = 0; j < k; ++j)
        amax = std::max(amax, std::fabs(row[j]));
      float s = amax / 127.0f;
      if (s == 0.0f)
        s = 1.0f;
      int64_t sum = 0;
      for (int64_t j = 0; j < k; ++j) {
        float v = std::nearbyint(row[j] / s);
        auto b = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        q.bytes[(j / 4) * n * 4 + i * 4 + j % 4] = static_cast<char>(b);
        sum += b;
      }
      float sumF = static_cast<float>(sum);
      std::memcpy(&scale.bytes[i * 4], &s, 4);
      std::memcpy(&colsum.bytes[i * 4], &sumF, 4);
    }
    derived.push_back(std::move(q));
    derived.push_back(std::move(scale));
    derived.push_back(std::move(colsum));
  }
  for (onnx_frontend::WeightTensor &w : derived) {
    if (byName.count(w.name))
      return fail("--quantize=int8: the model already has a weight named '" +
                  w.name + "'");
    pendingWeights.push_back(std::move(w));
  }
  if (Error err = onnx_frontend::writeSafeTensors(weightsOutput->tempPath(),
                                                  pendingWeights))
    return fail(toString(std::move(err)));
  return mlir::success();
}

/// The f32 matrix [N, K] that the `attn.weight` with attributes `recipe`
/// binds, read from the checkpoint: the named tensor (or the
/// concatenation of `concat_names` along `concat_axis`), sliced by
/// `gather_ranges` along `gather_axis`, then transposed with `transpose`.
static Expected<std::vector<float>>
assembleCheckpointBinding(mlir::DictionaryAttr recipe, ArrayRef<int64_t> shape,
                          const attnrt::SafeTensorsWeights &weights) {
  int64_t axis;
  SmallVector<MatrixPart> parts;
  for (StringRef part : recipeParts(recipe, axis)) {
    const attnrt::StTensor *t = weights.find(part.str());
    if (!t || t->shape.size() != 2 || t->dtype != "F32")
      return createStringError(
          "--quantize: '" + part +
          "' is not a 2-D F32 tensor of the checkpoint (weight-only "
          "quantization reads f32 checkpoints)");
    parts.push_back({t->shape[0], t->shape[1],
                     reinterpret_cast<const float *>(weights.tensorData(*t))});
  }
  int64_t rows, cols;
  std::vector<float> stored = concatParts(parts, axis, rows, cols);
  if (auto ranges = recipe.getAs<mlir::DenseI64ArrayAttr>("gather_ranges")) {
    int64_t gAxis = recipe.getAs<mlir::IntegerAttr>("gather_axis").getInt();
    std::vector<int64_t> keep;
    ArrayRef<int64_t> pairs = ranges.asArrayRef();
    for (size_t i = 0; i + 1 < pairs.size(); i += 2)
      for (int64_t j = 0; j < pairs[i + 1]; ++j)
        keep.push_back(pairs[i] + j);
    int64_t newRows = gAxis == 0 ? keep.size() : rows;
    int64_t newCols = gAxis == 0 ? cols : keep.size();
    std::vector<float> gathered(newRows * newCols);
    for (int64_t i = 0; i < newRows; ++i)
      for (int64_t j = 0; j < newCols; ++j)
        gathered[i * newCols + j] = gAxis == 0 ? stored[keep[i] * cols + j]
                                               : stored[i * cols + keep[j]];
    stored = std::move(gathered);
    rows = newRows;
    cols = newCols;
  }
  return boundMatrix(recipe, shape, std::move(stored), rows, cols,
                     "--quantize");
}

mlir::LogicalResult Compilation::writeWeightOnlyWeights() {
  auto recorded =
      (*module)->getAttrOfType<mlir::DictionaryAttr>("attn.woq_weights");
  auto replaced =
      (*module)->getAttrOfType<mlir::ArrayAttr>("attn.woq_replaced");
  (*module)->removeAttr("attn.woq_weights");
  (*module)->removeAttr("attn.woq_replaced");
  if (!weightsOutput)
    return mlir::success(); // A text stage: nothing is bound.
  SmallString<256> path(options.inputPath);
  sys::path::append(path, "model.safetensors");
  if (!sys::fs::exists(path)) {
    path = options.inputPath;
    sys::path::append(path, "model.safetensors.index.json");
  }
  attnrt::SafeTensorsWeights weights;
  std::string err;
  if (!weights.open(std::string(path), err))
    return fail(err);
  llvm::StringSet<> dropped;
  if (replaced)
    for (mlir::Attribute name : replaced)
      dropped.insert(cast<mlir::StringAttr>(name).getValue());
  std::vector<onnx_frontend::WeightTensor> out;
  StringSet<> names;
  // The checkpoint's tensors that some binding still reads, as stored.
  for (const auto &file : weights.files())
    for (const attnrt::StTensor &t : file->tensors()) {
      if (dropped.contains(t.name) || !weights.find(t.name))
        continue;
      const unsigned char *data = file->tensorData(t);
      onnx_frontend::WeightTensor copy;
      copy.name = t.name;
      copy.shape.assign(t.shape.begin(), t.shape.end());
      copy.bytes.assign(reinterpret_cast<const char *>(data), t.bytes());
      copy.dtype = t.dtype;
      out.push_back(std::move(copy));
      names.insert(t.name);
    }
  for (mlir::NamedAttribute entry :
       recorded ? recorded.getValue() : ArrayRef<mlir::NamedAttribute>()) {
    auto info = cast<mlir::DictionaryAttr>(entry.getValue());
    ArrayRef<int64_t> shape =
        info.getAs<mlir::DenseI64ArrayAttr>("shape").asArrayRef();
    int64_t bits = info.getAs<mlir::IntegerAttr>("bits").getInt();
    int64_t group = info.getAs<mlir::IntegerAttr>("group").getInt();
    Expected<std::vector<float>> bound = assembleCheckpointBinding(
        info.getAs<mlir::DictionaryAttr>("weight"), shape, weights);
    if (!bound)
      return fail(toString(bound.takeError()));
    // Symmetric per group of `group` k of a row: scale = max|w| / qmax,
    // q = clamp(roundeven(w / scale), -qmax, qmax), packed into rows of
    // i32 words as WeightOnlyLayout.h lays them out, or into blocks of
    // interleaved rows (zero past N).
    int64_t n = shape[0], k = shape[1];
    bool interleave = info.get("interleave") != nullptr;
    constexpr int64_t lanes = mlir::attn::kInterleavedColumns;
    int64_t rowWords = interleave ? mlir::attn::interleavedWeightWords(k, bits)
                                  : mlir::attn::packedWeightWords(k, bits);
    int64_t groups = k / group, rows = n;
    SmallVector<int64_t> qShape = {n, rowWords}, sShape = {n, groups};
    if (interleave) {
      int64_t blocks = llvm::divideCeil(n, lanes);
      rows = blocks * lanes;
      qShape = {blocks, rowWords, lanes};
      sShape = {blocks, groups, lanes};
    }
    // Where row i's word w and scale g are in the tensors.
    auto wordAt = [&](int64_t i, int64_t w) {
      return interleave ? (i / lanes * rowWords + w) * lanes + i % lanes
                        : i * rowWords + w;
    };
    auto scaleAt = [&](int64_t i, int64_t g) {
      return interleave ? (i / lanes * groups + g) * lanes + i % lanes
                        : i * groups + g;
    };
    float qmax = bits == 8 ? 127.0f : 7.0f;
    std::string name = entry.getName().str();
    onnx_frontend::WeightTensor q{
        name, qShape, std::string(rows * rowWords * 4, '\0'), "I32"};
    onnx_frontend::WeightTensor scale{
        name + "_scale", sShape, std::string(rows * groups * 4, '\0'), "F32"};
    std::vector<uint32_t> words(rows * rowWords, 0);
    std::vector<float> scales(rows * groups, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t g = 0; g < k / group; ++g) {
        const float *w = bound->data() + i * k + g * group;
        float amax = 0.0f;
        for (int64_t j = 0; j < group; ++j)
          amax = std::max(amax, std::fabs(w[j]));
        float s = amax / qmax;
        if (s == 0.0f)
          s = 1.0f;
        scales[scaleAt(i, g)] = s;
        for (int64_t j = 0; j < group; ++j) {
          int64_t kk = g * group + j;
          float v = std::clamp(std::nearbyint(w[j] / s), -qmax, qmax);
          uint32_t field = static_cast<uint32_t>(static_cast<int32_t>(v)) &
                           ((1u << bits) - 1);
          mlir::attn::PackedWeightField at =
              interleave ? mlir::attn::interleavedWeightField(kk, bits)
                         : mlir::attn::packedWeightField(kk, bits);
          words[wordAt(i, at.word)] |= field << at.shift;
        }
      }
    std::memcpy(q.bytes.data(), words.data(), words.size() * 4);
    std::memcpy(scale.bytes.data(), scales.data(), scales.size() * 4);
    for (onnx_frontend::WeightTensor *t : {&q, &scale}) {
      if (names.contains(t->name))
        return fail("--quantize: the checkpoint already has a tensor named '" +
                    t->name + "'");
      names.insert(t->name);
      out.push_back(std::move(*t));
    }
  }
  if (Error e = onnx_frontend::writeSafeTensors(weightsOutput->tempPath(), out))
    return fail(toString(std::move(e)));
  return mlir::success();
}

} // namespace attnc
