//===- ModelLoader.cpp - reading and checking ONNX protobufs --------------===//
//
// Compiled with exceptions: libonnx's checker reports by throwing.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnc::onnx_frontend;

namespace {
std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// Replaces an initializer's external data by its bytes in raw_data.
bool loadExternalData(const std::string &modelDir, onnx::TensorProto &tensor,
                      std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    const std::string &key = entry.key();
    try {
      if (key == "location")
        location = entry.value();
      else if (key == "offset")
        offset = std::stoll(entry.value());
      else if (key == "length")
        length = std::stoll(entry.value());
    } catch (const std::exception &) {
      error = "initializer '" + tensor.name() + "': external data " + key +
              " '" + entry.value() + "' is not a number";
      return false;
    }
  }
  if (location.empty()) {
    error = "initializer '" + tensor.name() +
            "' has external data without a location";
    return false;
  }
  // The ONNX spec: locations are relative to the model and stay inside its
  // directory.
  if (location[0] == '/' || location.find("..") != std::string::npos) {
    error = "initializer '" + tensor.name() + "': external data location '" +
            location + "' is not a path inside the model's directory";
    return false;
  }
  std::string file = modelDir + "/" + location;
  int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) {
    error = "initializer '" + tensor.name() + "': cannot open external data '" +
            file + "': " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "initializer '" + tensor.name() + "': external data '" + file +
            "' is not a regular file";
    return false;
  }
  int64_t size = st.st_size;
  if (length < 0)
    length = size - offset;
  if (offset < 0 || length < 0 || offset > size || length > size - offset) {
    ::close(fd);
    error = "initializer '" + tensor.name() + "': external data '" + file +
            "' holds " + std::to_string(size) + " bytes, but the tensor's " +
            "data is at offset " + std::to_string(offset) + ", length " +
            std::to_string(length);
    return false;
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  int64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, bytes.data() + done, length - done, offset + done);
    if (n <= 0) {
      ::close(fd);
      error = "initializer '" + tensor.name() + "': cannot read '" + file + "'";
      return false;
    }
    done += n;
  }
  ::close(fd);
  tensor.set_raw_data(std::move(bytes));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return true;
}
} // namespace

bool attnc::onnx_frontend::loadONNXModel(const std::string &path,
                                         onnx::ModelProto &model,
                                         std::string &error,
                                         std::vector<std::string> &notes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) {
    error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "not a regular file";
    return false;
  }
  bool parsed;
  {
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    // Protobuf's default cap is 64 MiB; models with inline weights are
    // larger, and the format itself is limited to 2 GiB.
    coded.SetTotalBytesLimit(INT32_MAX);
    parsed =
        model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!parsed) {
    error = "not a valid ONNX model (the protobuf does not parse; truncated "
            "or not an ONNX file?)";
    return false;
  }
  if (!model.has_graph()) {
    error = "not a valid ONNX model (no graph)";
    return false;
  }
  std::string dir = directoryOf(path);
  for (onnx::TensorProto &tensor :
       *model.mutable_graph()->mutable_initializer())
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL &&
        !loadExternalData(dir, tensor, error))
      return false;

  // The schema the protobuf is read with is forward compatible (fields and
  // data types added since libonnx was built parse; the importer refuses
  // what it does not read), but libonnx's checker judges a model only by
  // the schemas it knows: a newer IR version, a newer opset of a domain or
  // an unknown domain (Debian's libonnx 1.12 knows ai.onnx up to opset 17)
  // is checked by the importer's own validation alone.
  const auto &ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  std::string skip;
  if (model.ir_version() > onnx::IR_VERSION)
    skip = "IR version " + std::to_string(model.ir_version()) +
           " is newer than libonnx's " + std::to_string(onnx::IR_VERSION);
  for (const auto &import : model.opset_import()) {
    if (!skip.empty())
      break;
    std::string domain =
        import.domain() == "ai.onnx" ? std::string() : import.domain();
    auto known = ranges.Map().find(domain);
    if (known == ranges.Map().end())
      skip = "domain '" + import.domain() + "' is unknown to libonnx";
    else if (import.version() > known->second.second)
      skip = "opset " + std::to_string(import.version()) + " of domain '" +
             (domain.empty() ? std::string("ai.onnx") : domain) +
             "' is newer than libonnx's " +
             std::to_string(known->second.second);
  }
  if (!skip.empty())
    notes.push_back("ONNX checker skipped: the model's " + skip +
                    "; the importer validates each node itself (no ONNX "
                    "shape inference is used)");
  if (skip.empty()) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception &e) {
      // One line: the checker separates its context ("==> Context: Bad
      // node spec for node. Name: ... OpType: ...") with blank lines.
      std::string what = e.what(), line;
      for (char c : what) {
        if (c == '\n') {
          if (!line.empty() && line.back() != ' ')
            line += "; ";
          continue;
        }
        line.push_back(c);
      }
      while (!line.empty() && (line.back() == ' ' || line.back() == ';'))
        line.pop_back();
      error = "ONNX checker: " + line;
      return false;
    }
  }
  return true;
}
