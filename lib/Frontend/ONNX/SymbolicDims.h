//===- SymbolicDims.h - symbolic dimensions of the ONNX importer -*- C++
//-*-===//
//
// Private to lib/Frontend/ONNX. A graph input's symbolic dimension (an ONNX
// dim_param, or an unnamed dim) that `--input-shape` does not fix stays
// dynamic. The importer tracks every dimension as an int64: a constant, or a
// *handle* that stands for an integer polynomial over the symbols (one symbol
// per distinct dim_param), e.g. `batch*sequence` or `sequence + 1`. Handles
// live in host integer tensors (what Shape produces) and in the importer's
// shapes, so that Gather/Concat/Slice/Unsqueeze of shape vectors fold as
// before; arithmetic on them goes through SymbolicDims, which keeps the
// polynomials canonical (equal expressions have equal handles).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_FRONTEND_ONNX_SYMBOLICDIMS_H
#define ATTNC_LIB_FRONTEND_ONNX_SYMBOLICDIMS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnc::onnx_frontend {

/// Handles occupy [kSymBase, kSymBase + 2^32), far from any size or index a
/// model computes with; a constant in that range is refused where it meets
/// symbolic values.
constexpr int64_t kSymBase = -(int64_t(1) << 62);
constexpr int64_t kSymEnd = kSymBase + (int64_t(1) << 32);
inline bool isSymbolic(int64_t v) { return v >= kSymBase && v < kSymEnd; }

class SymbolicDims {
public:
  /// A term: the sorted symbol ids of a product (with repetition).
  using Monomial = std::vector<unsigned>;
  /// Coefficients by term; the empty term is the constant.
  using Poly = std::map<Monomial, int64_t>;

  /// A new symbol named `name`; returns its handle.
  int64_t newSymbol(llvm::StringRef name);
  unsigned numSymbols() const { return names.size(); }
  llvm::StringRef symbolName(unsigned id) const { return names[id]; }

  /// Arithmetic on dims (constants or handles). The result is a constant
  /// when the polynomial is one. nullopt on overflow.
  std::optional<int64_t> add(int64_t a, int64_t b);
  std::optional<int64_t> sub(int64_t a, int64_t b);
  std::optional<int64_t> mul(int64_t a, int64_t b);
  /// a / b when every term of a is divisible by b (a constant or a single
  /// term), or b is a sum that a single term times b equals; nullopt
  /// otherwise.
  std::optional<int64_t> divExact(int64_t a, int64_t b);
  /// The sign of a - b where it holds for every value of the symbols
  /// (each symbol >= 1); nullopt when it depends on them.
  std::optional<int> compare(int64_t a, int64_t b);
  /// A product of dims.
  std::optional<int64_t> product(llvm::ArrayRef<int64_t> dims);

  /// The polynomial of a dim (a constant gives the constant term).
  Poly poly(int64_t v) const;

  /// `v` with every bound symbol replaced by what it is bound to. Every
  /// result of the arithmetic above is canonical; a handle made before a
  /// binding may not be.
  std::optional<int64_t> canonical(int64_t v);
  /// Makes dims `a` and `b` one: solves `a = b` for a symbol that occurs
  /// in it linearly (alone in its term, coefficient 1 or -1) and binds that
  /// symbol to the solution. Exporters name lengths that are equal at run
  /// time with different symbols (an attention mask's `mask_sequence` is
  /// `past + sequence`); the caller checks the equality at run time. Of
  /// several such symbols, the one `preferred(x, y)` orders first is bound.
  /// False when there is none.
  bool unify(int64_t a, int64_t b,
             llvm::function_ref<bool(unsigned, unsigned)> preferred);
  /// `batch*sequence`, `sequence + 1`, `32`.
  std::string str(int64_t v) const;
  /// `[batch, sequence, 32]`.
  std::string shapeStr(llvm::ArrayRef<int64_t> dims) const;

private:
  std::optional<int64_t> intern(Poly p);

  /// `p` with the bound symbols substituted (recursively); nullopt on
  /// overflow.
  std::optional<Poly> substitute(const Poly &p) const;

  std::vector<std::string> names;
  /// Per symbol, what it is bound to (bindSymbol), if anything.
  std::vector<std::optional<Poly>> bindings;
  bool anyBinding = false;
  std::vector<Poly> polys;
  std::map<Poly, int64_t> handles;
};

} // namespace attnc::onnx_frontend

#endif // ATTNC_LIB_FRONTEND_ONNX_SYMBOLICDIMS_H
