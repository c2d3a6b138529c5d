//===- BytecodeNesting.h - bounded nesting for MLIR bytecode ----*- C++ -*-===//
//
// Textual MLIR is scanned for nesting before it is parsed
// (findExcessiveMlirNesting); bytecode cannot be scanned that way, and
// MLIR's bytecode reader, verifier and printer recurse once per level of
// nested regions, attributes and types: a small hostile file overflows the
// stack. checkBytecodeNesting parses the bytecode once in a child process
// (so that a crash there costs nothing) and measures the nesting without
// recursion; the tool parses it for real only when that succeeded.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_BYTECODENESTING_H
#define ATTNC_SUPPORT_BYTECODENESTING_H

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace attnc {

/// Succeeds for input that is not MLIR bytecode and for bytecode whose
/// region, attribute and type nesting stays within `maxDepth` (or that the
/// reader rejects cleanly: the real parse reports that). Otherwise the error
/// says what was found ("<file>: MLIR bytecode nests deeper than ...").
llvm::Error checkBytecodeNesting(llvm::MemoryBufferRef buffer,
                                 const mlir::DialectRegistry &registry,
                                 bool allowUnregisteredDialects,
                                 unsigned maxDepth);

} // namespace attnc

#endif // ATTNC_SUPPORT_BYTECODENESTING_H
