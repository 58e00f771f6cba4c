// Source buffers and locations. Every diagnostic points into a SourceManager buffer:
// a .tyl file, or the expression given to `tyloc layout` (named "<layout>").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tyl {

using FileId = uint32_t;
inline constexpr FileId kNoFile = ~FileId{0};

// A byte offset into one source buffer.
struct SourceLoc {
  FileId file = kNoFile;
  uint32_t offset = 0;

  bool valid() const { return file != kNoFile; }
};

// [begin, end) in one buffer; an empty range marks a single position.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;

  bool valid() const { return begin.valid(); }
  static SourceRange at(SourceLoc loc) { return {loc, loc}; }
  // The smallest range covering both (they must be in the same file).
  static SourceRange cover(SourceRange a, SourceRange b);
};

struct LineCol {
  uint32_t line = 0;    // 1-based
  uint32_t column = 0;  // 1-based, in bytes
};

struct SourceFile {
  std::string name;
  std::string text;
  std::vector<uint32_t> lineStarts;  // byte offset of each line's first character
};

class SourceManager {
 public:
  FileId add(std::string name, std::string text);
  const SourceFile& file(FileId id) const { return files_.at(id); }
  LineCol lineCol(SourceLoc loc) const;
  // The text of a 1-based line, without its line break.
  std::string_view lineText(FileId id, uint32_t line) const;

 private:
  std::vector<SourceFile> files_;
};

// The largest source file tyloc reads; the parser reports a larger one.
inline constexpr size_t kMaxSourceBytes = size_t{8} << 20;

// The text of a source file, at most one byte past kMaxSourceBytes (enough for the parser to
// report the file as too large, and what keeps an endless input such as /dev/zero from filling
// memory); nullopt with `error` saying why when it cannot be read.
std::optional<std::string> readSourceText(const std::string& path, std::string& error);

}  // namespace tyl
