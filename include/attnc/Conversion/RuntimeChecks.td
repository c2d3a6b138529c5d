//===- RuntimeChecks.td - passes that insert run-time checks -*- tablegen -*-===//
//
// Passes whose code checks, at run time, what no compile-time verifier can:
// the values of the model's inputs. Failures are reported to libattnrt,
// which fails the run with the message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_RUNTIMECHECKS_TD
#define ATTNC_CONVERSION_RUNTIMECHECKS_TD

include "mlir/Pass/PassBase.td"

def AttnCheckTokenIds : Pass<"attn-check-token-ids", "::mlir::ModuleOp"> {
  let summary = "Report token ids outside the embedding table at run time";
  let description = [{
    Before each `attn.embedding`, inserts a loop over its ids that calls the
    runtime's `attnrt_report_token_id(batch, position, id, rows)` for an id
    outside `[0, rows)`. The runtime then fails the run with a message
    naming the batch, the position and the id (the lookup itself still
    clamps, so nothing is read out of bounds). `batch` is the row-major
    index over all id dimensions but the last, `position` the index in the
    last. The loop reads the ids on the host: for host targets (CPU) only.
    Its cost is one compare per id.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTNC_CONVERSION_RUNTIMECHECKS_TD
