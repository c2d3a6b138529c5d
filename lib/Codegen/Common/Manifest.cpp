//===- Manifest.cpp - the model manifest on the compiler side -------------===//

#include "attnc/Codegen/Common/Manifest.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

std::optional<attnrt::DType> mlir::attn::getManifestDType(Type elementType) {
  // The manifest spells dtypes as MLIR prints element types, so the dtype
  // table itself is the mapping.
  std::string spelling;
  llvm::raw_string_ostream os(spelling);
  elementType.print(os);
  if (const attnrt::DTypeInfo *info = attnrt::lookupDType(spelling))
    return info->dtype;
  return std::nullopt;
}

FailureOr<DictionaryAttr>
mlir::attn::buildManifestRecord(attnrt::EntryKind kind, StringRef name,
                                Type type, WeightOp weight, IntegerAttr idBound,
                                bool causal, IntegerAttr positionBound,
                                ArrayRef<std::pair<int, int>> dimsFrom,
                                bool encoder, IntegerAttr recomputePast) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !getManifestDType(tensor.getElementType()))
    return failure();
  // Inputs and outputs may have dynamic sizes, one dimsFrom each.
  bool io =
      kind == attnrt::EntryKind::Input || kind == attnrt::EntryKind::Output;
  if (!tensor.hasStaticShape() &&
      (!io ||
       static_cast<int64_t>(dimsFrom.size()) != tensor.getNumDynamicDims()))
    return failure();
  Builder b(type.getContext());
  NamedAttrList fields;
  fields.append(kManifestKindKey, b.getStringAttr(attnrt::entryKindName(kind)));
  fields.append(kManifestNameKey, b.getStringAttr(name));
  fields.append(kManifestTypeKey, TypeAttr::get(tensor));
  if (!tensor.hasStaticShape()) {
    SmallVector<int64_t> pairs;
    for (auto [input, axis] : dimsFrom)
      pairs.append({input, axis});
    fields.append(kManifestDimsFromKey, b.getDenseI64ArrayAttr(pairs));
  }
  if (weight) {
    // The op's own spelling of concat, gather, transpose and panels.
    for (StringAttr key :
         {weight.getConcatAxisAttrName(), weight.getConcatNamesAttrName(),
          weight.getGatherAxisAttrName(), weight.getGatherExtentAttrName(),
          weight.getGatherRangesAttrName(), weight.getTransposeAttrName(),
          weight.getPanelsAttrName(), weight.getPairsAttrName(),
          weight.getConvertAttrName()})
      if (Attribute value = weight->getAttr(key))
        fields.append(key, value);
  }
  if (idBound)
    fields.append(kManifestIdBoundKey, idBound);
  if (causal)
    fields.append(kManifestCausalKey, b.getUnitAttr());
  if (positionBound)
    fields.append(kManifestPositionBoundKey, positionBound);
  if (encoder)
    fields.append(kManifestEncoderKey, b.getUnitAttr());
  if (recomputePast)
    fields.append(kManifestRecomputePastKey, recomputePast);
  return fields.getDictionary(type.getContext());
}

/// Reads one record; `fail` reports what is wrong with it.
static LogicalResult readRecord(DictionaryAttr dict,
                                attnrt::ManifestRecord &record,
                                llvm::function_ref<InFlightDiagnostic()> fail) {
  auto kind = dict.getAs<StringAttr>(kManifestKindKey);
  auto name = dict.getAs<StringAttr>(kManifestNameKey);
  auto typeAttr = dict.getAs<TypeAttr>(kManifestTypeKey);
  if (!kind || !name || !typeAttr)
    return fail() << "needs string '" << kManifestKindKey << "', string '"
                  << kManifestNameKey << "' and type '" << kManifestTypeKey
                  << "'";
  std::optional<attnrt::EntryKind> entryKind =
      attnrt::lookupEntryKind(kind.getValue());
  if (!entryKind)
    return fail() << "has unknown kind '" << kind.getValue() << "'";
  record.kind = *entryKind;
  record.name = name.getValue().str();
  auto tensor = dyn_cast<RankedTensorType>(typeAttr.getValue());
  std::optional<attnrt::DType> dtype;
  if (tensor)
    dtype = getManifestDType(tensor.getElementType());
  if (!dtype)
    return fail() << "has type " << typeAttr.getValue()
                  << "; the runtime takes ranked tensors of "
                  << attnrt::dtypeNameList();
  record.dtype = *dtype;
  for (int64_t d : tensor.getShape())
    record.dims.push_back(ShapedType::isDynamic(d) ? attnrt::kDynamicDim : d);
  auto dimsFrom = dict.getAs<DenseI64ArrayAttr>(kManifestDimsFromKey);
  bool io = record.kind == attnrt::EntryKind::Input ||
            record.kind == attnrt::EntryKind::Output;
  if (!tensor.hasStaticShape() &&
      (!io || !dimsFrom ||
       static_cast<int64_t>(dimsFrom.size()) != 2 * tensor.getNumDynamicDims()))
    return fail() << "has dynamic type " << tensor
                  << "; only inputs and outputs may, with one "
                  << kManifestDimsFromKey << " (input, axis) pair per dynamic "
                  << "dimension";
  if (!tensor.hasStaticShape())
    for (size_t i = 0; i < dimsFrom.size(); i += 2)
      record.dimsFrom.push_back(
          {static_cast<int>(dimsFrom[i]), static_cast<int>(dimsFrom[i + 1])});

  auto concatAxis = dict.getAs<IntegerAttr>("concat_axis");
  auto concatNames = dict.getAs<ArrayAttr>("concat_names");
  if (!concatAxis != !concatNames)
    return fail() << "needs both or neither of concat_axis and concat_names";
  if (concatNames) {
    record.concatAxis = concatAxis.getInt();
    for (Attribute part : concatNames) {
      auto str = dyn_cast<StringAttr>(part);
      if (!str)
        return fail() << "has a non-string concat name";
      record.concatParts.push_back(str.getValue().str());
    }
  }
  auto gatherAxis = dict.getAs<IntegerAttr>("gather_axis");
  auto gatherExtent = dict.getAs<IntegerAttr>("gather_extent");
  auto gatherRanges = dict.getAs<DenseI64ArrayAttr>("gather_ranges");
  if (!gatherAxis != !gatherRanges || !gatherAxis != !gatherExtent ||
      (gatherRanges && gatherRanges.size() % 2))
    return fail() << "needs all or none of gather_axis, gather_extent and "
                     "gather_ranges (start, length pairs)";
  if (gatherRanges) {
    record.gatherAxis = gatherAxis.getInt();
    record.gatherSourceExtent = gatherExtent.getInt();
    ArrayRef<int64_t> ranges = gatherRanges.asArrayRef();
    for (size_t i = 0; i < ranges.size(); i += 2)
      record.gatherRanges.push_back({ranges[i], ranges[i + 1]});
  }
  record.transpose = static_cast<bool>(dict.get("transpose"));
  record.panels = static_cast<bool>(dict.get("panels"));
  record.pairs = static_cast<bool>(dict.get("pairs"));
  record.convert = static_cast<bool>(dict.get("convert"));
  if (auto idBound = dict.getAs<IntegerAttr>(kManifestIdBoundKey)) {
    if (record.kind != attnrt::EntryKind::Input || idBound.getInt() <= 0 ||
        (record.dtype != attnrt::DType::I32 &&
         record.dtype != attnrt::DType::I64))
      return fail() << "has " << kManifestIdBoundKey
                    << " but is not an i32/i64 input with a positive bound";
    record.idBound = idBound.getInt();
  }
  if (auto bound = dict.getAs<IntegerAttr>(kManifestPositionBoundKey)) {
    if (record.kind != attnrt::EntryKind::Input || bound.getInt() <= 0 ||
        record.idBound >= 0 ||
        (record.dtype != attnrt::DType::I32 &&
         record.dtype != attnrt::DType::I64))
      return fail() << "has " << kManifestPositionBoundKey
                    << " but is not an i32/i64 input with a positive bound "
                       "(and no id_bound)";
    record.idBound = bound.getInt();
    record.positions = true;
  }
  if (dict.get(kManifestCausalKey)) {
    if (record.kind != attnrt::EntryKind::Output ||
        !attnrt::isFloatDType(record.dtype) || record.dims.size() != 3)
      return fail() << "has " << kManifestCausalKey
                    << " but is not a float [batch, seq, vocab] output";
    record.causal = true;
  }
  if (auto length = dict.getAs<IntegerAttr>(kManifestRecomputePastKey)) {
    if (!record.causal || length.getInt() <= 0)
      return fail() << "has " << kManifestRecomputePastKey
                    << " but is not causal logits with a positive length";
    record.recomputePast = length.getInt();
  }
  if (dict.get(kManifestEncoderKey)) {
    bool ids = (record.dtype == attnrt::DType::I32 ||
                record.dtype == attnrt::DType::I64) &&
               record.dims.size() == 2;
    bool encoderOutput = attnrt::isFloatDType(record.dtype) &&
                         !record.dims.empty() && !record.isDynamic();
    if (record.kind != attnrt::EntryKind::Input || record.positions ||
        (!ids && !encoderOutput))
      return fail() << "has " << kManifestEncoderKey
                    << " but is neither an i32/i64 input [batch, seq] (token "
                       "ids or their mask) nor a static float input [batch, "
                       "...] (an encoder output)";
    record.encoder = true;
  }
  return success();
}

FailureOr<std::vector<attnrt::ManifestRecord>>
mlir::attn::getManifestRecords(ModuleOp module) {
  Attribute attr = module->getAttr(kManifestAttrName);
  if (!attr)
    return module.emitError("no model manifest; run attn-hoist-weights first");
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array)
    return module.emitError(kManifestAttrName)
           << " must be an array of records, got " << attr;
  std::vector<attnrt::ManifestRecord> records(array.size());
  for (auto [i, element] : llvm::enumerate(array)) {
    auto fail = [&, i = i] {
      return module.emitError(kManifestAttrName) << " record " << i << " ";
    };
    auto dict = dyn_cast<DictionaryAttr>(element);
    if (!dict)
      return fail() << "is not a dictionary";
    if (failed(readRecord(dict, records[i], fail)))
      return failure();
  }
  return records;
}

FailureOr<std::string> mlir::attn::serializeManifest(ModuleOp module,
                                                     attnrt::Target target) {
  FailureOr<std::vector<attnrt::ManifestRecord>> records =
      getManifestRecords(module);
  if (failed(records))
    return failure();
  return attnrt::writeManifest(target, *records);
}
