//===- ShapeText.h - shapes in diagnostics ----------------------*- C++ -*-===//
//
// The frontends name tensor shapes in their errors the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_SHAPETEXT_H
#define ATTNC_SUPPORT_SHAPETEXT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace attnc {

/// `shape` as "[2, 3]".
inline std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

} // namespace attnc

#endif // ATTNC_SUPPORT_SHAPETEXT_H
