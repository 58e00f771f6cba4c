#include "backend/emu/Npy.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace tyl::emu {

int64_t NpyArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<std::string> npyDescr(tir::Type type) {
  switch (type) {
    case tir::Type::F32: return "<f4";
    case tir::Type::F16: return "<f2";
    case tir::Type::BF16: return "<u2";
    case tir::Type::I32: return "<i4";
    case tir::Type::U32: return "<u4";
    case tir::Type::I64: return "<i8";
    case tir::Type::Pred: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<tir::Type> npyType(std::string_view descr) {
  for (tir::Type t :
       {tir::Type::F32, tir::Type::F16, tir::Type::BF16, tir::Type::I32, tir::Type::U32, tir::Type::I64})
    if (npyDescr(t) == descr) return t;
  return std::nullopt;
}

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

std::string shapeText(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + ")";
}

void putLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

uint64_t getLittleEndian(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

// Reads the header dictionary, a Python literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  void parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    expect('{');
    while (!peek('}')) {
      std::string key = string();
      expect(':');
      if (key == "descr")
        *descr = string(), haveDescr = true;
      else if (key == "fortran_order")
        *fortran = boolean(), haveFortran = true;
      else if (key == "shape")
        *shape = tuple(), haveShape = true;
      else
        throw NpyError("unexpected key '" + key + "' in the .npy header");
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!haveDescr || !haveFortran || !haveShape)
      throw NpyError("the .npy header lacks descr, fortran_order or shape");
  }

 private:
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) throw NpyError(fmt::format("malformed .npy header: expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string string() {
    skipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      throw NpyError("malformed .npy header: expected a string");
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) throw NpyError("malformed .npy header: unterminated string");
    std::string value(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    throw NpyError("malformed .npy header: expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (!peek(')')) {
      skipSpace();
      size_t start = pos_;
      int64_t d = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (d > (int64_t{1} << 50)) throw NpyError("a .npy dimension is too large");
        d = d * 10 + (s_[pos_++] - '0');
      }
      if (pos_ == start) throw NpyError("malformed .npy header: expected a dimension");
      dims.push_back(d);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

int64_t dataBytes(tir::Type type, const std::vector<int64_t>& shape) {
  int64_t n = tir::typeBytes(type);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 48))
      throw NpyError("the .npy array is too large");
  return n;
}

}  // namespace

std::string encodeNpy(const NpyArray& array) {
  std::optional<std::string> descr = npyDescr(array.type);
  if (!descr) throw NpyError(std::string("no .npy form for ") + tir::typeName(array.type));
  if (dataBytes(array.type, array.shape) != static_cast<int64_t>(array.data.size()))
    throw NpyError("the data size does not match the shape");
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", *descr, shapeText(array.shape));
  // The data starts at a multiple of 64 bytes; the header ends with a newline.
  // Version 1.0 stores the header length in 2 bytes; longer headers need version 2.0.
  int lengthBytes = header.size() > 65000 ? 4 : 2;
  size_t prefix = kMagic.size() + 2 + lengthBytes;
  size_t padded = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(padded - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic);
  out += static_cast<char>(lengthBytes == 2 ? 1 : 2);
  out += '\0';
  putLittleEndian(out, header.size(), lengthBytes);
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return out;
}

NpyArray decodeNpy(std::string_view file) {
  if (file.size() < kMagic.size() + 4 || file.substr(0, kMagic.size()) != kMagic)
    throw NpyError("not a .npy file");
  int major = static_cast<unsigned char>(file[kMagic.size()]);
  if (major < 1 || major > 3) throw NpyError(fmt::format("unsupported .npy format version {}", major));
  int lengthBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagic.size() + 2 + lengthBytes;
  if (file.size() < prefix) throw NpyError("truncated .npy header");
  uint64_t headerBytes = getLittleEndian(file, kMagic.size() + 2, lengthBytes);
  if (headerBytes > file.size() - prefix) throw NpyError("truncated .npy header");
  std::string descr;
  bool fortran = false;
  NpyArray array;
  HeaderParser(file.substr(prefix, headerBytes)).parse(&descr, &fortran, &array.shape);
  std::optional<tir::Type> type = npyType(descr);
  if (!type)
    throw NpyError("unsupported .npy element type '" + descr + "' (expected <f4, <f2, <u2, <i4, <u4 or <i8)");
  if (fortran) throw NpyError("Fortran-order .npy arrays are not supported (save in C order)");
  array.type = *type;
  int64_t n = dataBytes(array.type, array.shape);
  std::string_view data = file.substr(prefix + headerBytes);
  if (static_cast<int64_t>(data.size()) < n) throw NpyError("truncated .npy data");
  const std::byte* begin = reinterpret_cast<const std::byte*>(data.data());
  array.data.assign(begin, begin + n);
  return array;
}

void writeNpy(const std::filesystem::path& path, const NpyArray& array) {
  std::string bytes = encodeNpy(array);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw NpyError("cannot write " + path.string());
}

NpyArray readNpy(const std::filesystem::path& path) {
  // Directories and devices (/dev/zero never ends) are not arrays.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw NpyError("not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError("cannot open it");
  std::string bytes;
  try {
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    throw NpyError("cannot read it");
  }
  return decodeNpy(bytes);
}

}  // namespace tyl::emu
