#include "base/Source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tyl {

SourceRange SourceRange::cover(SourceRange a, SourceRange b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  SourceRange r;
  r.begin = a.begin.offset <= b.begin.offset ? a.begin : b.begin;
  r.end = a.end.offset >= b.end.offset ? a.end : b.end;
  return r;
}

FileId SourceManager::add(std::string name, std::string text) {
  SourceFile f;
  f.name = std::move(name);
  f.text = std::move(text);
  f.lineStarts.push_back(0);
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<FileId>(files_.size() - 1);
}

LineCol SourceManager::lineCol(SourceLoc loc) const {
  const SourceFile& f = file(loc.file);
  uint32_t offset = std::min<uint32_t>(loc.offset, static_cast<uint32_t>(f.text.size()));
  auto it = std::upper_bound(f.lineStarts.begin(), f.lineStarts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - f.lineStarts.begin());
  return LineCol{line, offset - f.lineStarts[line - 1] + 1};
}

std::string_view SourceManager::lineText(FileId id, uint32_t line) const {
  const SourceFile& f = file(id);
  if (line == 0 || line > f.lineStarts.size()) return {};
  uint32_t begin = f.lineStarts[line - 1];
  uint32_t end = line < f.lineStarts.size() ? f.lineStarts[line] : static_cast<uint32_t>(f.text.size());
  std::string_view text(f.text.data() + begin, end - begin);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::optional<std::string> readSourceText(const std::string& path, std::string& error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  // Read in chunks, stopping one byte past the limit (the parser reports the size), so that
  // a small file costs no more than its size and a huge one no more than the limit.
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxSourceBytes) {
    size_t want = std::min(sizeof chunk, kMaxSourceBytes + 1 - text.size());
    in.read(chunk, static_cast<std::streamsize>(want));
    if (in.bad()) {
      error = "read error";
      return std::nullopt;
    }
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  return text;
}

}  // namespace tyl
