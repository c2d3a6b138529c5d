//===- Json.h - minimal JSON parser -----------------------------*- C++ -*-===//
//
// A small strict JSON (RFC 8259) parser for safetensors headers: objects,
// arrays, strings with escapes (\uXXXX incl. surrogate pairs -> UTF-8),
// numbers, true/false/null. Numbers keep their literal text so integers up to
// 2^64-1 convert exactly.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_JSON_H
#define ATTNC_LIB_RUNTIME_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnrt {

struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Null;
  bool boolean = false;
  /// String contents (decoded), or a number's literal text.
  std::string text;
  /// Array elements, or object values (parallel to keys).
  std::vector<JsonValue> items;
  /// Object keys, in file order.
  std::vector<std::string> keys;

  /// Object member lookup (nullptr if absent or not an object).
  const JsonValue *get(const std::string &key) const;
  /// True for a non-negative integer literal that fits in uint64_t.
  bool asU64(uint64_t &out) const;
  /// The number's value as a double (0 for non-numbers).
  double asDouble() const;
};

const char *jsonKindName(JsonValue::Kind k);

/// Parses exactly one JSON value from [data, data+len), allowing surrounding
/// whitespace. Duplicate object keys are an error. On failure err says what
/// was expected and at which byte offset.
bool parseJson(const char *data, size_t len, JsonValue &out, std::string &err);

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_JSON_H
