//===- Json.cpp - minimal JSON parser -------------------------------------===//

#include "Json.h"
#include "Support.h"

#include <cstdlib>
#include <set>

namespace attnrt {

const JsonValue *JsonValue::get(const std::string &key) const {
  if (kind != Object)
    return nullptr;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key)
      return &items[i];
  return nullptr;
}

bool JsonValue::asU64(uint64_t &out) const {
  return kind == Number && parseDecimal(text, UINT64_MAX, out);
}

double JsonValue::asDouble() const {
  return kind == Number ? std::strtod(text.c_str(), nullptr) : 0.0;
}

const char *jsonKindName(JsonValue::Kind k) {
  // In the order of JsonValue::Kind.
  static const char *const kNames[] = {"null",     "a boolean", "a number",
                                       "a string", "an array",  "an object"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == JsonValue::Object + 1,
                "one name per JsonValue::Kind");
  unsigned i = static_cast<unsigned>(k);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";
}

namespace {

class Parser {
public:
  Parser(const char *data, size_t len) : p(data), n(len) {}

  bool parseDocument(JsonValue &out, std::string &err) {
    skipWs();
    if (!parseValue(out, 0))
      return report(err);
    skipWs();
    if (i != n) {
      fail("unexpected trailing characters");
      return report(err);
    }
    return true;
  }

private:
  static constexpr int kMaxDepth = 128;
  const char *p;
  size_t n;
  size_t i = 0;
  std::string msg;
  size_t errPos = 0;

  bool report(std::string &err) {
    err = msg + " at byte " + std::to_string(errPos);
    return false;
  }
  bool fail(const std::string &m) {
    if (msg.empty()) {
      msg = m;
      errPos = i;
    }
    return false;
  }
  void skipWs() {
    while (i < n &&
           (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
      ++i;
  }
  bool literal(const char *word) {
    size_t k = 0;
    for (; word[k]; ++k)
      if (i + k >= n || p[i + k] != word[k])
        return fail(std::string("invalid literal (expected '") + word + "')");
    i += k;
    return true;
  }

  bool parseValue(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    if (i >= n)
      return fail("unexpected end of input (expected a value)");
    char c = p[i];
    switch (c) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"':
      out.kind = JsonValue::String;
      return parseString(out.text);
    case 't':
      out.kind = JsonValue::Bool;
      out.boolean = true;
      return literal("true");
    case 'f':
      out.kind = JsonValue::Bool;
      out.boolean = false;
      return literal("false");
    case 'n':
      out.kind = JsonValue::Null;
      return literal("null");
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      return fail(std::string("unexpected character '") + printable(c) +
                  "' (expected a value)");
    }
  }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
      return std::string(1, c);
    static const char *hex = "0123456789abcdef";
    return std::string("\\x") + hex[u >> 4] + hex[u & 15];
  }

  bool digits() {
    size_t start = i;
    while (i < n && p[i] >= '0' && p[i] <= '9')
      ++i;
    return i > start;
  }

  bool parseNumber(JsonValue &out) {
    size_t start = i;
    if (p[i] == '-')
      ++i;
    if (i < n && p[i] == '0') {
      ++i;
    } else if (!digits()) {
      return fail("invalid number");
    }
    if (i < n && p[i] == '.') {
      ++i;
      if (!digits())
        return fail("invalid number (expected digits after '.')");
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
      ++i;
      if (i < n && (p[i] == '+' || p[i] == '-'))
        ++i;
      if (!digits())
        return fail("invalid number (expected exponent digits)");
    }
    out.kind = JsonValue::Number;
    out.text.assign(p + start, i - start);
    return true;
  }

  static void appendUtf8(std::string &s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xc0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xe0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  bool hex4(uint32_t &out) {
    if (n - i < 4)
      return fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = p[i + k];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        return fail("invalid \\u escape");
    }
    i += 4;
    out = v;
    return true;
  }

  bool parseString(std::string &out) {
    ++i; // opening quote
    out.clear();
    while (true) {
      if (i >= n)
        return fail("unterminated string");
      char c = p[i];
      if (c == '"') {
        ++i;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      ++i;
      if (i >= n)
        return fail("unterminated string");
      char e = p[i++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xd800 && cp <= 0xdbff) {
          uint32_t lo;
          if (n - i < 2 || p[i] != '\\' || p[i + 1] != 'u')
            return fail("unpaired surrogate in \\u escape");
          i += 2;
          if (!hex4(lo))
            return false;
          if (lo < 0xdc00 || lo > 0xdfff)
            return fail("invalid low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
          return fail("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --i;
        return fail(std::string("invalid escape '\\") + printable(e) + "'");
      }
    }
  }

  /// The elements of an array or the members of an object after its opening
  /// bracket: parseElement (at the start of each, whitespace skipped) until
  /// `close`, with ',' in between.
  template <typename ParseElement>
  bool parseSequence(char close, ParseElement parseElement) {
    ++i; // '[' or '{'
    skipWs();
    if (i < n && p[i] == close) {
      ++i;
      return true;
    }
    const std::string expected = std::string("',' or '") + close + "'";
    while (true) {
      skipWs();
      if (!parseElement())
        return false;
      skipWs();
      if (i >= n)
        return fail("unexpected end of input (expected " + expected + ")");
      if (p[i] == ',') {
        ++i;
        continue;
      }
      if (p[i] == close) {
        ++i;
        return true;
      }
      return fail("expected " + expected);
    }
  }

  bool parseArray(JsonValue &out, int depth) {
    out.kind = JsonValue::Array;
    return parseSequence(']', [&] {
      out.items.emplace_back();
      return parseValue(out.items.back(), depth + 1);
    });
  }

  bool parseObject(JsonValue &out, int depth) {
    out.kind = JsonValue::Object;
    std::set<std::string> seen;
    return parseSequence('}', [&] {
      if (i >= n || p[i] != '"')
        return fail(i >= n ? "unexpected end of input (expected a key)"
                           : "expected a string key");
      size_t keyPos = i;
      std::string key;
      if (!parseString(key))
        return false;
      if (!seen.insert(key).second) {
        i = keyPos;
        return fail("duplicate key \"" + key + "\"");
      }
      skipWs();
      if (i >= n || p[i] != ':')
        return fail("expected ':' after key");
      ++i;
      skipWs();
      out.keys.push_back(std::move(key));
      out.items.emplace_back();
      return parseValue(out.items.back(), depth + 1);
    });
  }
};

} // namespace

bool parseJson(const char *data, size_t len, JsonValue &out, std::string &err) {
  out = JsonValue();
  Parser parser(data, len);
  return parser.parseDocument(out, err);
}

} // namespace attnrt
