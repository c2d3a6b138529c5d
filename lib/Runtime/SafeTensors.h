//===- SafeTensors.h - manifest weights from safetensors --------*- C++ -*-===//
//
// The runtime's side of the safetensors reader (attnc/Runtime/SafeTensors.h):
// resolving a manifest weight to the tensors of a file or of the shards of
// an index (the parts of a concat weight may sit in different shards) and
// assembling it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_SAFETENSORS_H
#define ATTNC_LIB_RUNTIME_SAFETENSORS_H

#include "Manifest.h"

#include "attnc/Runtime/SafeTensors.h"

#include <string>
#include <vector>

namespace attnrt {

/// Checks that the tensor(s) a manifest weight refers to exist in the file(s)
/// with the manifest's dtype and shape (for concat weights: compatible parts
/// whose concatenation has the manifest's shape; for gather weights: the
/// tensor `weight.name` with weight.gatherSourceDims()); for `transpose`
/// weights all of this for weight.untransposed(). On success `parts`
/// holds the source tensors in order (one for plain and gather weights).
bool resolveWeight(const SafeTensorsWeights &file, const ManifestEntry &weight,
                   std::vector<const StTensor *> &parts, std::string &err);

/// Whether weight `w`, resolved to `parts`, is its file tensor byte for byte
/// (a plain weight stored in its own dtype), so that it can be bound in
/// place; otherwise gatherWeight assembles (and converts) it.
bool bindsAsStored(const ManifestEntry &w,
                   const std::vector<const StTensor *> &parts);

/// Writes the weight's bytes (the concatenation of `parts` along the
/// manifest's axis, the gathered slices of the single source tensor, or the
/// single tensor) into dst, which holds weight.bytes bytes. Only the bytes
/// that end up in dst are read from the file. A `transpose` weight is
/// assembled first (directly from the file when plain, else in a temporary
/// buffer) and written transposed. False only when that temporary buffer
/// cannot be allocated.
bool gatherWeight(const SafeTensorsWeights &file, const ManifestEntry &weight,
                  const std::vector<const StTensor *> &parts, void *dst);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_SAFETENSORS_H
