//===- Mask.cpp - ONNX mask ops -------------------------------------------===//
//
// Trilu on run-time tensors: a select on the row and column indices (on
// host constants it folds in ConstantFolding.cpp).
//
//===----------------------------------------------------------------------===//

#include "../Importer.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace attnc::onnx_frontend;
using llvm::Error;
using llvm::Expected;

Expected<Value> Importer::importTrilu(StringRef op, ArrayRef<Value> in) {
  Value x = in[0];
  auto type = typeOf(x);
  if (type.getRank() < 2)
    return fail("input must have rank >= 2");
  int64_t k = 0;
  if (hasInput(1)) {
    auto kk = constantInts(1, "k");
    if (!kk)
      return kk.takeError();
    k = kk->empty() ? 0 : (*kk)[0];
  }
  bool upper = getIntAttr(*current, "upper", 1) != 0;
  int64_t rank = type.getRank();
  Type elem = type.getElementType();
  return generic(ValueRange{x}, dimsOf(x), elem,
                 [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                   Value r = linalg::IndexOp::create(nb, nl, rank - 2);
                   Value c = linalg::IndexOp::create(nb, nl, rank - 1);
                   Value diff = arith::SubIOp::create(nb, nl, c, r);
                   Value kv = arith::ConstantIndexOp::create(nb, nl, k);
                   Value keep =
                       arith::CmpIOp::create(nb, nl,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diff, kv);
                   Value zero =
                       arith::ConstantOp::create(nb, nl, nb.getZeroAttr(elem));
                   return arith::SelectOp::create(nb, nl, keep, a[0], zero);
                 });
}

void attnc::onnx_frontend::registerMaskOps(OpRegistry &r) {
  constexpr int kMin = kMinOpset, kMax = kLatestOpset;
  r.add("Trilu", kMin, kMax, "upper", valueImporter<&Importer::importTrilu, 1>);
}
