//===- CodegenOptions.h - target, precision and chip as types ---*- C++ -*-===//
//
// The choices that select generated code (the target, the compute
// precision, the CUDA chip) as enums, each spelled from one table. The tools
// parse them once, at their command line (attn-compile's flags, attn-opt's
// pass and pipeline options, through the llvm::cl parsers below), with one
// message per enum for a value it does not know; the pipelines and passes
// receive them typed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_CODEGENOPTIONS_H
#define ATTNC_SUPPORT_CODEGENOPTIONS_H

#include "attnc/Runtime/ManifestSchema.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <optional>
#include <string>

namespace attnc {

/// The code attnc generates: host CPU code, or host code plus CUDA kernels.
/// The manifest records it, so its spellings are the manifest's
/// (attnrt::kTargetNames), which the runtime reads back.
using Target = attnrt::Target;

/// The compute type of a model's f32 tensors (attn-convert-precision), and
/// the type of its float inputs and outputs.
enum class Precision { F32, F16, BF16 };

/// The CUDA architectures attnc generates kernels for.
enum class CudaChip { SM80, SM86, SM87, SM89, SM90, SM90a };

namespace detail {
/// Per enum: what it is called in messages and its spellings, indexed by
/// the enum's values.
template <typename EnumT> struct OptionSpellings;

template <> struct OptionSpellings<Target> {
  static constexpr llvm::StringLiteral what = "target";
  static llvm::ArrayRef<const char *> names() { return attnrt::kTargetNames; }
};
template <> struct OptionSpellings<Precision> {
  static constexpr llvm::StringLiteral what = "precision";
  static llvm::ArrayRef<const char *> names() {
    static constexpr const char *kNames[] = {"f32", "f16", "bf16"};
    return kNames;
  }
};
template <> struct OptionSpellings<CudaChip> {
  static constexpr llvm::StringLiteral what = "CUDA chip";
  static llvm::ArrayRef<const char *> names() {
    static constexpr const char *kNames[] = {"sm_80", "sm_86", "sm_87",
                                             "sm_89", "sm_90", "sm_90a"};
    return kNames;
  }
};
} // namespace detail

/// The spelling of `value`: "cuda", "bf16", "sm_90a".
template <typename EnumT> llvm::StringRef stringifyOption(EnumT value) {
  return detail::OptionSpellings<EnumT>::names()[static_cast<size_t>(value)];
}

/// The value spelled `name`, if any.
template <typename EnumT>
std::optional<EnumT> parseOption(llvm::StringRef name) {
  llvm::ArrayRef<const char *> names = detail::OptionSpellings<EnumT>::names();
  for (size_t i = 0; i < names.size(); ++i)
    if (name == names[i])
      return static_cast<EnumT>(i);
  return std::nullopt;
}

/// The one message for a value no enumerator spells, e.g. "unknown target
/// 'tpu' (expected cpu or cuda)".
template <typename EnumT>
std::string unknownOptionMessage(llvm::StringRef name) {
  llvm::ArrayRef<const char *> names = detail::OptionSpellings<EnumT>::names();
  std::string message = "unknown " +
                        detail::OptionSpellings<EnumT>::what.str() + " '" +
                        name.str() + "' (expected ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      message += i + 1 == names.size() ? " or " : ", ";
    message += names[i];
  }
  return message + ")";
}

/// The message refusing `io` as the type of the float inputs and outputs of
/// a model computed in `precision`, or none: they are f32 or of the compute
/// type.
inline std::optional<std::string> checkIOPrecision(Precision precision,
                                                   Precision io) {
  if (io == Precision::F32 || io == precision)
    return std::nullopt;
  return "io-precision must be f32 or the precision (" +
         stringifyOption(precision).str() + "), got '" +
         stringifyOption(io).str() + "'";
}

/// The SM version of `chip`: 80 for sm_80, 90 for sm_90 and sm_90a.
inline unsigned smVersion(CudaChip chip) {
  static constexpr unsigned kVersions[] = {80, 86, 87, 89, 90, 90};
  return kVersions[static_cast<size_t>(chip)];
}

namespace detail {
/// llvm::cl parser of one of the enums above: the spellings of the table,
/// the message of unknownOptionMessage. Used by command-line flags and by
/// pass and pipeline options alike.
template <typename EnumT>
class OptionEnumParser : public llvm::cl::basic_parser<EnumT> {
public:
  using OptVal = typename llvm::cl::basic_parser<EnumT>::OptVal;
  explicit OptionEnumParser(llvm::cl::Option &o)
      : llvm::cl::basic_parser<EnumT>(o) {}

  bool parse(llvm::cl::Option &o, llvm::StringRef, llvm::StringRef arg,
             EnumT &value) {
    if (std::optional<EnumT> parsed = parseOption<EnumT>(arg)) {
      value = *parsed;
      return false;
    }
    return o.error(unknownOptionMessage<EnumT>(arg));
  }

  /// The spellings, as the value in --help: `--target=<cpu|cuda>`.
  llvm::StringRef getValueName() const override {
    static const std::string name = [] {
      std::string joined;
      for (const char *n : OptionSpellings<EnumT>::names())
        joined += (joined.empty() ? "" : "|") + std::string(n);
      return joined;
    }();
    return name;
  }

  void printOptionDiff(const llvm::cl::Option &o, EnumT value,
                       const OptVal &defaultValue, size_t globalWidth) const {
    this->printOptionName(o, globalWidth);
    llvm::outs() << "= " << stringifyOption(value);
    if (defaultValue.hasValue())
      llvm::outs() << " (default: " << stringifyOption(defaultValue.getValue())
                   << ")";
    llvm::outs() << "\n";
  }

  /// How pass options print the value (--dump-pass-pipeline).
  static void print(llvm::raw_ostream &os, EnumT value) {
    os << stringifyOption(value);
  }
};
} // namespace detail

} // namespace attnc

namespace llvm::cl {
template <>
class parser<attnc::Target>
    : public attnc::detail::OptionEnumParser<attnc::Target> {
public:
  using OptionEnumParser::OptionEnumParser;
};
template <>
class parser<attnc::Precision>
    : public attnc::detail::OptionEnumParser<attnc::Precision> {
public:
  using OptionEnumParser::OptionEnumParser;
};
template <>
class parser<attnc::CudaChip>
    : public attnc::detail::OptionEnumParser<attnc::CudaChip> {
public:
  using OptionEnumParser::OptionEnumParser;
};
} // namespace llvm::cl

#endif // ATTNC_SUPPORT_CODEGENOPTIONS_H
