//===- DerivedWeights.h - weights that a compile-time pass writes -*- C++
//-*-===//
//
// The quantizing passes replace a projection's weight by tensors they
// compute at compile time (quantized words, scales, column sums), which
// attn-compile writes into the weights file under derived names. A module
// attribute records, per derived name, the binding it was computed from
// (the attn.weight's name, gather, concat, transpose) and the pass's
// parameters, so that the same tensor bound two ways gets two derived forms
// and a second run of the pass reuses the names.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CODEGEN_CPU_DERIVEDWEIGHTS_H
#define ATTNC_LIB_CODEGEN_CPU_DERIVEDWEIGHTS_H

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::attn {

class DerivedWeights {
public:
  /// Reads the record `attrName` of `module`; derived names are the
  /// source's name followed by `suffix` (and a number after the first).
  DerivedWeights(ModuleOp module, StringRef attrName, StringRef suffix)
      : module(module), attrName(attrName.str()), suffix(suffix.str()) {
    if (auto old = module->getAttrOfType<DictionaryAttr>(attrName))
      llvm::append_range(recorded, old.getValue());
    for (NamedAttribute entry : recorded)
      byRecipe[entry.getName()] = cast<DictionaryAttr>(
          cast<DictionaryAttr>(entry.getValue()).get("weight"));
  }

  /// The derived name for `weight`'s binding: an existing one computed from
  /// the same binding, or a new one recorded with its shape and `params`.
  std::string nameFor(WeightOp weight, ArrayRef<NamedAttribute> params = {}) {
    DictionaryAttr recipe = weight->getAttrDictionary();
    std::string base = weight.getName().str() + suffix;
    for (int i = 1;; ++i) {
      std::string candidate = i == 1 ? base : base + std::to_string(i);
      auto it = byRecipe.find(candidate);
      if (it != byRecipe.end()) {
        if (it->second == recipe)
          return candidate;
        continue;
      }
      Builder b(module.getContext());
      SmallVector<NamedAttribute> entry = {
          b.getNamedAttr("weight", recipe),
          b.getNamedAttr(
              "shape",
              b.getDenseI64ArrayAttr(weight.getResult().getType().getShape()))};
      llvm::append_range(entry, params);
      recorded.push_back(b.getNamedAttr(candidate, b.getDictionaryAttr(entry)));
      byRecipe[candidate] = recipe;
      return candidate;
    }
  }

  /// An attn.weight bound by name alone (no gather, concat or transpose).
  static Value create(OpBuilder &b, Location loc, StringRef name,
                      RankedTensorType type) {
    return WeightOp::create(b, loc, type, b.getStringAttr(name), nullptr,
                            nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr)
        .getResult();
  }

  /// Writes the record back to the module.
  void save() {
    module->setAttr(attrName,
                    DictionaryAttr::get(module.getContext(), recorded));
  }

private:
  ModuleOp module;
  std::string attrName, suffix;
  SmallVector<NamedAttribute> recorded;
  llvm::StringMap<DictionaryAttr> byRecipe;
};

} // namespace mlir::attn

#endif // ATTNC_LIB_CODEGEN_CPU_DERIVEDWEIGHTS_H
