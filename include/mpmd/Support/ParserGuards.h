//===- ParserGuards.h - Inputs MLIR's parser crashes on ---------*- C++ -*-===//
//
// Fuzzing found text on which MLIR 22's own parser crashes instead of
// reporting an error. Every entry point that parses user text (mpmd-opt,
// the Python binding, mpmd-fuzz) checks for it first and reports a
// diagnostic instead. Known cases:
//   - `array<index: ...>`: a dense array of index type; the parser asks
//     the index type for a bit width (Parser::parseDenseArrayAttr).
//
//===----------------------------------------------------------------------===//

#ifndef MPMD_SUPPORT_PARSERGUARDS_H
#define MPMD_SUPPORT_PARSERGUARDS_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace mlir::mpmd {

/// Where `text` holds a construct the parser would crash on, with a
/// message for the user; `offset` is StringRef::npos when there is none.
struct ParserHazard {
  size_t offset = llvm::StringRef::npos;
  std::string message;

  explicit operator bool() const { return offset != llvm::StringRef::npos; }
  /// 1-based line and column of `offset` in `text`.
  std::pair<unsigned, unsigned> lineAndColumn(llvm::StringRef text) const {
    llvm::StringRef before = text.take_front(offset);
    unsigned line = 1 + before.count('\n');
    size_t lastNewline = before.rfind('\n');
    unsigned column =
        offset - (lastNewline == llvm::StringRef::npos ? 0 : lastNewline + 1) +
        1;
    return {line, column};
  }
};

/// Whether `text[at]` is code: not in a string literal, not in a `//`
/// comment (both end at the line's end in MLIR).
inline bool isCode(llvm::StringRef text, size_t at) {
  size_t lineStart = text.rfind('\n', at);
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  bool inString = false;
  for (size_t i = lineStart; i < at; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < at && text[i + 1] == '/') {
      return false;
    }
  }
  return !inString;
}

inline ParserHazard findParserHazard(llvm::StringRef text) {
  ParserHazard hazard;
  for (size_t at = text.find("array<"); at != llvm::StringRef::npos;
       at = text.find("array<", at + 1)) {
    // A preceding identifier character means another word (`my_array<`).
    if (at > 0 && (llvm::isAlnum(text[at - 1]) || text[at - 1] == '_'))
      continue;
    llvm::StringRef rest = text.drop_front(at + 6).ltrim();
    // `array<index` at the end of the text crashes too.
    if (!rest.consume_front("index") ||
        (!rest.empty() && (llvm::isAlnum(rest.front()) || rest.front() == '_')) ||
        !isCode(text, at))
      continue;
    hazard.offset = at;
    hazard.message = "a dense array of index type (array<index ...>) is "
                     "not supported: MLIR's parser crashes on it; use "
                     "array<i64 ...>";
    return hazard;
  }
  return hazard;
}

} // namespace mlir::mpmd

#endif // MPMD_SUPPORT_PARSERGUARDS_H
