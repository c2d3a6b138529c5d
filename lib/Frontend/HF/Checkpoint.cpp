//===- Checkpoint.cpp - config.json and safetensors headers ---------------===//

#include "Checkpoint.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::hf;

namespace {
/// config.json files are flat; anything nested deeper than this is not a
/// model config and would only risk the recursive parser's stack.
constexpr int kMaxJsonDepth = 64;
/// Far larger than any real config.json.
constexpr uint64_t kMaxJsonBytes = 64ull << 20;
} // namespace

/// The deepest nesting of arrays/objects in `text` (strings skipped).
static int jsonDepth(StringRef text) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if (c == ']' || c == '}')
      --depth;
  }
  return deepest;
}

/// Reads a JSON file into `text` and parses it as an object; errors are
/// emitted at `loc`.
static FailureOr<llvm::json::Object>
readJsonObject(StringRef path, Location loc, std::string &text) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return emitError(loc) << "cannot read " << path << ": " << ec.message();
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return emitError(loc) << path << " is not a regular file";
  if (status.getSize() > kMaxJsonBytes)
    return emitError(loc) << path << " is " << status.getSize()
                          << " bytes, more than the " << kMaxJsonBytes
                          << " a JSON file of a checkpoint may have";
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(loc) << "cannot read " << path << ": "
                          << buffer.getError().message();
  text = (*buffer)->getBuffer().str();
  if (jsonDepth(text) > kMaxJsonDepth)
    return emitError(loc) << path << " nests arrays/objects deeper than "
                          << kMaxJsonDepth << " levels";
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return emitError(loc) << "invalid JSON in " << path << ": "
                          << llvm::toString(json.takeError());
  llvm::json::Object *object = json->getAsObject();
  if (!object)
    return emitError(loc) << path << " must hold a JSON object";
  return std::move(*object);
}

std::unique_ptr<Checkpoint> Checkpoint::open(StringRef dir,
                                             MLIRContext *context) {
  std::unique_ptr<Checkpoint> ckpt(new Checkpoint(context));
  ckpt->dir = dir.str();
  SmallString<256> path(dir);
  llvm::sys::path::append(path, "config.json");
  ckpt->configPath = std::string(path);
  if (!llvm::sys::fs::is_directory(dir)) {
    emitError(FileLineColLoc::get(context, dir, 0, 0))
        << "not a checkpoint directory (expected a directory holding "
           "config.json and model.safetensors)";
    return nullptr;
  }
  if (failed(ckpt->readConfig()) || failed(ckpt->readWeights()))
    return nullptr;
  return ckpt;
}

Location Checkpoint::fileLoc(StringRef path) const {
  // Line 1 of a JSON file is a place in it; a safetensors file is binary, so
  // its errors name the file alone (line 0) rather than quote its header.
  // Only a regular file is quoted: a diagnostic printer that shows the line
  // must not open a FIFO or a device.
  bool text = path.ends_with(".json") && llvm::sys::fs::is_regular_file(path);
  return FileLineColLoc::get(context, path, text ? 1 : 0, text ? 1 : 0);
}

Location Checkpoint::configLoc() const { return fileLoc(configPath); }

InFlightDiagnostic Checkpoint::flagError(StringRef key, bool value) const {
  return emitError(keyLoc(key)) << "config.json key \"" << key << "\" is "
                                << (value ? "true" : "false") << "; ";
}

Location Checkpoint::keyLoc(StringRef key) const {
  std::string quoted = ("\"" + key + "\"").str();
  StringRef text(configText);
  for (size_t pos = text.find(quoted); pos != StringRef::npos;
       pos = text.find(quoted, pos + 1)) {
    // A key is followed by a colon; the same text as a value is not.
    StringRef rest = text.drop_front(pos + quoted.size()).ltrim();
    if (!rest.starts_with(":"))
      continue;
    StringRef before = text.take_front(pos);
    unsigned line = 1 + before.count('\n');
    size_t lineStart = before.rfind('\n');
    unsigned col = static_cast<unsigned>(
        lineStart == StringRef::npos ? pos + 1 : pos - lineStart);
    return FileLineColLoc::get(context, configPath, line, col);
  }
  return configLoc();
}

LogicalResult Checkpoint::readConfig() {
  FailureOr<llvm::json::Object> object =
      readJsonObject(configPath, configLoc(), configText);
  if (failed(object))
    return failure();
  config = std::move(*object);
  return success();
}

LogicalResult Checkpoint::readWeights() {
  SmallString<256> index(dir), single(dir);
  llvm::sys::path::append(index, "model.safetensors.index.json");
  llvm::sys::path::append(single, "model.safetensors");
  if (llvm::sys::fs::exists(index))
    weightsFile = std::string(index);
  else if (llvm::sys::fs::exists(single))
    weightsFile = std::string(single);
  else
    return emitError(FileLineColLoc::get(context, dir, 0, 0))
           << "the checkpoint directory has neither model.safetensors nor "
              "model.safetensors.index.json";
  Location loc = fileLoc(weightsFile);
  if (!llvm::sys::fs::is_regular_file(weightsFile))
    return emitError(loc) << weightsFile << " is not a regular file";
  // The runtime's reader: the importer accepts exactly the checkpoints that
  // compiled models can run from.
  std::string err;
  if (!weights.open(weightsFile, err)) {
    // The location names the index already; a shard's errors name the shard.
    StringRef message(err);
    if (weightsFile == index)
      message.consume_front(weightsFile + ": ");
    return emitError(loc) << message;
  }
  // The model computes in the checkpoint's precision: the first float
  // tensor's dtype (every bound tensor is checked against it).
  Builder b(context);
  for (const auto &shard : weights.files())
    for (const attnrt::StTensor &t : shard->tensors()) {
      if (elementType)
        break;
      if (t.dtype == "F32")
        elementType = b.getF32Type();
      else if (t.dtype == "F16")
        elementType = b.getF16Type();
      else if (t.dtype == "BF16")
        elementType = b.getBF16Type();
    }
  if (!elementType)
    return emitError(fileLoc(weightsFile))
           << "the checkpoint has no F32, F16 or BF16 tensor";
  return success();
}

const attnrt::StTensor *Checkpoint::findTensor(StringRef name) const {
  return weights.find(name.str());
}

Location Checkpoint::tensorLoc(StringRef name) const {
  const attnrt::SafeTensorsFile *file = weights.fileOf(name.str());
  return fileLoc(file ? StringRef(file->path()) : StringRef(weightsFile));
}

bool Checkpoint::has(StringRef key) const {
  const llvm::json::Value *v = config.get(key);
  return v && v->kind() != llvm::json::Value::Null;
}

InFlightDiagnostic Checkpoint::keyError(StringRef key) const {
  return emitError(keyLoc(key)) << "config.json key \"" << key << "\" ";
}

FailureOr<const llvm::json::Value *>
Checkpoint::getRequired(StringRef key) const {
  const llvm::json::Value *v = config.get(key);
  if (!v || v->kind() == llvm::json::Value::Null)
    return emitError(configLoc()) << "config.json has no key \"" << key
                                  << "\", which this architecture needs";
  return v;
}

template <typename T>
FailureOr<T> Checkpoint::getConverted(
    StringRef key,
    function_ref<std::optional<T>(const llvm::json::Value &)> convert,
    StringRef what) const {
  FailureOr<const llvm::json::Value *> v = getRequired(key);
  if (failed(v))
    return failure();
  std::optional<T> converted = convert(**v);
  if (!converted)
    return keyError(key) << "must be " << what;
  return *converted;
}

FailureOr<int64_t> Checkpoint::getInt(StringRef key) const {
  return getConverted<int64_t>(
      key, [](const llvm::json::Value &v) { return v.getAsInteger(); },
      "an integer");
}

FailureOr<int64_t> Checkpoint::getPositiveInt(StringRef key) const {
  FailureOr<int64_t> i = getInt(key);
  if (failed(i))
    return failure();
  // Bounds keep shape arithmetic (products of a few such values) far from
  // int64 overflow.
  if (*i <= 0 || *i > (int64_t(1) << 24))
    return keyError(key) << "must be in [1, 16777216], got " << *i;
  return *i;
}

FailureOr<int64_t> Checkpoint::getPositiveInt(StringRef key,
                                              int64_t fallback) const {
  return has(key) ? getPositiveInt(key) : FailureOr<int64_t>(fallback);
}

FailureOr<double> Checkpoint::getFloat(StringRef key) const {
  return getConverted<double>(
      key,
      [](const llvm::json::Value &v) -> std::optional<double> {
        std::optional<double> d = v.getAsNumber();
        return d && std::isfinite(*d) ? d : std::nullopt;
      },
      "a finite number");
}

FailureOr<double> Checkpoint::getFloat(StringRef key, double fallback) const {
  return has(key) ? getFloat(key) : FailureOr<double>(fallback);
}

FailureOr<std::string> Checkpoint::getString(StringRef key) const {
  return getConverted<std::string>(
      key,
      [](const llvm::json::Value &v) -> std::optional<std::string> {
        if (std::optional<StringRef> s = v.getAsString())
          return s->str();
        return std::nullopt;
      },
      "a string");
}

FailureOr<std::string> Checkpoint::getString(StringRef key,
                                             StringRef fallback) const {
  return has(key) ? getString(key) : FailureOr<std::string>(fallback.str());
}

FailureOr<bool> Checkpoint::getBool(StringRef key, bool fallback) const {
  if (!has(key))
    return fallback;
  return getConverted<bool>(
      key, [](const llvm::json::Value &v) { return v.getAsBoolean(); },
      "true or false");
}

FailureOr<std::string> Checkpoint::getArchitecture() const {
  if (!has("architectures"))
    return emitError(configLoc())
           << "config.json has no key \"architectures\" naming the model "
              "class (e.g. BertModel or LlamaForCausalLM)";
  const llvm::json::Array *list = config.getArray("architectures");
  if (!list || list->size() != 1 || !(*list)[0].getAsString())
    return keyError("architectures")
           << "must be a list of one class name, e.g. [\"BertModel\"]";
  return (*list)[0].getAsString()->str();
}
