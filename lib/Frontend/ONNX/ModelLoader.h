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
#include <vector>

namespace attnc::onnx_frontend {

/// The highest default-domain opset the importer reads. Each op's versions
/// in that range are rows of the importer's registry (Importer.h); what a
/// version adds that the importer does not read is a located error.
constexpr int kMaxOpset = 23;
constexpr int kMinOpset = 13;

/// Parses the model at `path`, loads external data into every initializer
/// (relative to the model's directory, never outside it) and runs ONNX's
/// checker where libonnx can judge the model (it knows the model's IR
/// version, opsets and domains). On failure returns false and sets `error`
/// (without the file name prefix). `notes` receives what was not checked,
/// and why.
bool loadONNXModel(const std::string &path, onnx::ModelProto &model,
                   std::string &error, std::vector<std::string> &notes);

} // namespace attnc::onnx_frontend

#endif // ATTNC_LIB_FRONTEND_ONNX_MODELLOADER_H
