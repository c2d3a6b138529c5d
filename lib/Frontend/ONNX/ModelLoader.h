//===- ModelLoader.h - reading and checking ONNX protobufs ------*- C++ -*-===//
//
// Private to lib/Frontend/ONNX. The only part of the importer that calls
// into libonnx's checker, which reports by exception: ModelLoader.cpp is
// compiled with exceptions and turns them into messages here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_ONNX_MODELLOADER_H
#define ATTNC_LIB_FRONTEND_ONNX_MODELLOADER_H

#include "onnx/onnx_pb.h"

#include <string>

namespace attnc::onnx_frontend {

/// The highest default-domain opset the importer reads.
constexpr int kMaxOpset = 18;
constexpr int kMinOpset = 13;

/// Parses the model at `path`, loads external data into every initializer
/// (relative to the model's directory, never outside it) and runs ONNX's
/// checker where libonnx knows the model's opset. On failure returns false
/// and sets `error` (without the file name prefix).
bool loadONNXModel(const std::string &path, onnx::ModelProto &model,
                   std::string &error);

} // namespace attnc::onnx_frontend

#endif // ATTNC_LIB_FRONTEND_ONNX_MODELLOADER_H
