//===- Npy.h - .npy input checks --------------------------------*- C++ -*-===//
//
// Checking .npy files against a model's inputs. Reading and writing them is
// public (attnc/Runtime/TensorIO.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_NPY_H
#define ATTNC_LIB_RUNTIME_NPY_H

#include "Manifest.h"

#include "attnc/Runtime/TensorIO.h"

#include <string>
#include <vector>

namespace attnrt {

/// Checks that an array read from `path` matches the model's input `index`:
/// "x.npy: shape (1, 16) but the model's input 0 'arg0' expects (1, 32)".
bool checkNpyForInput(const std::string &path, const NpyArray &a, int index,
                      const ManifestEntry &input, std::string &err);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_NPY_H
