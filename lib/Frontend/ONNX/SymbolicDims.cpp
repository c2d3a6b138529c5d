//===- SymbolicDims.cpp - integer polynomials over symbolic dims ----------===//

#include "SymbolicDims.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace attnc::onnx_frontend;

int64_t SymbolicDims::newSymbol(llvm::StringRef name) {
  unsigned id = names.size();
  names.push_back(name.str());
  bindings.emplace_back();
  return *intern(Poly{{Monomial{id}, 1}});
}

/// The product of two polynomials; nullopt on overflow.
static std::optional<SymbolicDims::Poly> multiply(const SymbolicDims::Poly &a,
                                                  const SymbolicDims::Poly &b) {
  SymbolicDims::Poly p;
  for (const auto &[ma, ca] : a)
    for (const auto &[mb, cb] : b) {
      SymbolicDims::Monomial m(ma);
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      int64_t c;
      if (llvm::MulOverflow(ca, cb, c) || llvm::AddOverflow(p[m], c, p[m]))
        return std::nullopt;
    }
  return p;
}

std::optional<SymbolicDims::Poly>
SymbolicDims::substitute(const Poly &p) const {
  Poly out;
  for (const auto &[m, c] : p) {
    // The term as a polynomial: the coefficient times each factor, a bound
    // factor replaced by its (substituted) binding.
    Poly term{{Monomial{}, c}};
    for (unsigned id : m) {
      Poly factor{{Monomial{id}, 1}};
      if (bindings[id]) {
        std::optional<Poly> bound = substitute(*bindings[id]);
        if (!bound)
          return std::nullopt;
        factor = std::move(*bound);
      }
      std::optional<Poly> product = multiply(term, factor);
      if (!product)
        return std::nullopt;
      term = std::move(*product);
    }
    for (const auto &[mt, ct] : term)
      if (llvm::AddOverflow(out[mt], ct, out[mt]))
        return std::nullopt;
  }
  return out;
}

std::optional<int64_t> SymbolicDims::canonical(int64_t v) {
  if (!isSymbolic(v) || !anyBinding)
    return v;
  return intern(poly(v));
}

bool SymbolicDims::unify(
    int64_t a, int64_t b,
    llvm::function_ref<bool(unsigned, unsigned)> preferred) {
  std::optional<int64_t> d = sub(a, b);
  if (!d || !isSymbolic(*d))
    return false;
  Poly diff = poly(*d);
  // Symbols alone in a term with coefficient +-1 and in no other term.
  std::optional<unsigned> chosen;
  for (const auto &[m, c] : diff) {
    if (m.size() != 1 || (c != 1 && c != -1))
      continue;
    unsigned id = m[0];
    bool elsewhere = llvm::any_of(diff, [&](const auto &term) {
      return term.first != m && std::find(term.first.begin(), term.first.end(),
                                          id) != term.first.end();
    });
    if (!elsewhere && (!chosen || preferred(id, *chosen)))
      chosen = id;
  }
  if (!chosen)
    return false;
  // diff = c * x + rest = 0, so x = -rest / c.
  int64_t c = diff[Monomial{*chosen}];
  Poly solution;
  for (const auto &[m, k] : diff)
    if (m != Monomial{*chosen})
      solution[m] = c == 1 ? -k : k;
  bindings[*chosen] = std::move(solution);
  anyBinding = true;
  return true;
}

SymbolicDims::Poly SymbolicDims::poly(int64_t v) const {
  if (isSymbolic(v))
    return polys[v - kSymBase];
  if (v == 0)
    return {};
  return Poly{{Monomial{}, v}};
}

std::optional<int64_t> SymbolicDims::intern(Poly p) {
  if (anyBinding) {
    std::optional<Poly> substituted = substitute(p);
    if (!substituted)
      return std::nullopt;
    p = std::move(*substituted);
  }
  for (auto it = p.begin(); it != p.end();)
    it = it->second == 0 ? p.erase(it) : std::next(it);
  if (p.empty())
    return 0;
  if (p.size() == 1 && p.begin()->first.empty()) {
    int64_t c = p.begin()->second;
    if (isSymbolic(c))
      return std::nullopt;
    return c;
  }
  auto it = handles.find(p);
  if (it != handles.end())
    return it->second;
  if (polys.size() >= (uint64_t(1) << 32))
    return std::nullopt;
  int64_t h = kSymBase + static_cast<int64_t>(polys.size());
  polys.push_back(p);
  handles.emplace(std::move(p), h);
  return h;
}

std::optional<int64_t> SymbolicDims::add(int64_t a, int64_t b) {
  if (!isSymbolic(a) && !isSymbolic(b)) {
    int64_t r;
    if (llvm::AddOverflow(a, b, r) || isSymbolic(r))
      return std::nullopt;
    return r;
  }
  Poly p = poly(a);
  for (const auto &[m, c] : poly(b))
    if (llvm::AddOverflow(p[m], c, p[m]))
      return std::nullopt;
  return intern(std::move(p));
}

std::optional<int64_t> SymbolicDims::sub(int64_t a, int64_t b) {
  if (b == INT64_MIN)
    return std::nullopt;
  if (!isSymbolic(b))
    return add(a, -b);
  Poly p = poly(a);
  for (const auto &[m, c] : poly(b))
    if (llvm::SubOverflow(p[m], c, p[m]))
      return std::nullopt;
  return intern(std::move(p));
}

std::optional<int64_t> SymbolicDims::mul(int64_t a, int64_t b) {
  if (!isSymbolic(a) && !isSymbolic(b)) {
    int64_t r;
    if (llvm::MulOverflow(a, b, r) || isSymbolic(r))
      return std::nullopt;
    return r;
  }
  std::optional<Poly> p = multiply(poly(a), poly(b));
  if (!p)
    return std::nullopt;
  return intern(std::move(*p));
}

/// `a` without the factors of `b` (both sorted), if `b` divides it.
static std::optional<SymbolicDims::Monomial>
divideMonomial(const SymbolicDims::Monomial &a,
               const SymbolicDims::Monomial &b) {
  SymbolicDims::Monomial rest;
  size_t j = 0;
  for (unsigned s : a) {
    if (j < b.size() && b[j] == s)
      ++j;
    else
      rest.push_back(s);
  }
  if (j != b.size())
    return std::nullopt;
  return rest;
}

std::optional<int64_t> SymbolicDims::divExact(int64_t a, int64_t b) {
  Poly pb = poly(b);
  if (pb.size() != 1) {
    // A sum: try each single-term quotient that divides a's first term by
    // one of b's, kept when it multiplies back to a exactly
    // ((S + P) * 64 / ((S + P) * 8) = 8).
    Poly pa = poly(a);
    if (pa.empty())
      return std::nullopt;
    const auto &[ma, ca] = *pa.begin();
    for (const auto &[mb, cb] : pb) {
      if (cb == 0 || ca % cb != 0 || (cb == -1 && ca == INT64_MIN))
        continue;
      std::optional<Monomial> rest = divideMonomial(ma, mb);
      if (!rest)
        continue;
      std::optional<int64_t> q = intern(Poly{{*rest, ca / cb}});
      if (!q)
        continue;
      std::optional<int64_t> back = mul(*q, b);
      if (back && poly(*back) == pa)
        return q;
    }
    return std::nullopt;
  }
  const auto &[mb, cb] = *pb.begin();
  if (cb == 0 || (cb == -1 && a == INT64_MIN))
    return std::nullopt;
  Poly p;
  for (const auto &[ma, ca] : poly(a)) {
    if (ca % cb != 0)
      return std::nullopt;
    std::optional<Monomial> rest = divideMonomial(ma, mb);
    if (!rest)
      return std::nullopt;
    p[*rest] += ca / cb;
  }
  return intern(std::move(p));
}

std::optional<int> SymbolicDims::compare(int64_t a, int64_t b) {
  if (a == b)
    return 0;
  auto d = sub(a, b);
  if (!d)
    return std::nullopt;
  if (!isSymbolic(*d))
    return *d < 0 ? -1 : 1;
  // With every symbol >= 1, a polynomial whose coefficients all have one
  // sign is at least (at most) the sum of its coefficients.
  int64_t lo = 0;
  bool allPos = true, allNeg = true;
  for (const auto &[m, c] : polys[*d - kSymBase]) {
    allPos &= c >= 0;
    allNeg &= c <= 0;
    lo += c;
  }
  if (allPos && lo > 0)
    return 1;
  if (allNeg && lo < 0)
    return -1;
  return std::nullopt;
}

std::optional<int64_t> SymbolicDims::product(llvm::ArrayRef<int64_t> dims) {
  int64_t r = 1;
  for (int64_t d : dims) {
    auto m = mul(r, d);
    if (!m)
      return std::nullopt;
    r = *m;
  }
  return r;
}

std::string SymbolicDims::str(int64_t v) const {
  if (!isSymbolic(v))
    return std::to_string(v);
  std::string out;
  // Highest degree first: `batch*sequence + 1`.
  const Poly &p = polys[v - kSymBase];
  std::vector<std::pair<Monomial, int64_t>> terms(p.begin(), p.end());
  std::stable_sort(terms.begin(), terms.end(), [](auto &x, auto &y) {
    return x.first.size() > y.first.size();
  });
  for (const auto &[m, c] : terms) {
    int64_t mag = c < 0 ? -c : c;
    if (out.empty())
      out += c < 0 ? "-" : "";
    else
      out += c < 0 ? " - " : " + ";
    std::string term;
    if (mag != 1 || m.empty())
      term = std::to_string(mag);
    for (unsigned s : m)
      term += (term.empty() ? "" : "*") + names[s];
    out += term;
  }
  return out;
}

std::string SymbolicDims::shapeStr(llvm::ArrayRef<int64_t> dims) const {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? ", " : "") + str(dims[i]);
  return out + "]";
}
