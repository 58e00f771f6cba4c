// .npy reading and writing, and the digest.
#include "backend/emu/Npy.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "backend/emu/Digest.h"
#include "backend/emu/HostData.h"

using namespace tyl;
using namespace tyl::emu;

TEST_CASE("npy round trips every supported type", "[npy]") {
  for (tir::Type type :
       {tir::Type::F32, tir::Type::F16, tir::Type::BF16, tir::Type::I32, tir::Type::U32, tir::Type::I64}) {
    Buffer b = makeBuffer(type, 12);
    fillRandom(b, type, 9);
    NpyArray a{type, {3, 4}, b.bytes};
    std::string file = encodeNpy(a);
    CHECK(file.size() % 64 == a.data.size() % 64);  // the data starts at a multiple of 64
    NpyArray back = decodeNpy(file);
    CHECK(back.type == type);
    CHECK(back.shape == std::vector<int64_t>{3, 4});
    CHECK(back.data == a.data);
  }
}

TEST_CASE("npy headers look like numpy's", "[npy]") {
  NpyArray a{tir::Type::F32, {5}, std::vector<std::byte>(20)};
  std::string file = encodeNpy(a);
  CHECK(file.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(file.find("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }") != std::string::npos);
  CHECK(file[file.size() - 21] == '\n');
  NpyArray scalar{tir::Type::I64, {}, std::vector<std::byte>(8)};
  CHECK(encodeNpy(scalar).find("'shape': ()") != std::string::npos);
  CHECK(decodeNpy(encodeNpy(scalar)).shape.empty());
}

TEST_CASE("npy reads version 2 headers and double quotes", "[npy]") {
  std::string header = "{\"descr\": \"<i4\", \"shape\": (2, 1), \"fortran_order\": False}";
  header.append(64 - (12 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) file += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  file += header;
  file += std::string("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  NpyArray a = decodeNpy(file);
  CHECK(a.type == tir::Type::I32);
  CHECK(a.shape == std::vector<int64_t>{2, 1});
  CHECK(a.elements() == 2);
  CHECK(a.data[4] == std::byte{2});
}

TEST_CASE("npy rejects what it cannot read", "[npy]") {
  NpyArray a{tir::Type::F32, {2}, std::vector<std::byte>(8)};
  std::string good = encodeNpy(a);
  CHECK_THROWS_AS(decodeNpy("not numpy"), NpyError);
  CHECK_THROWS_AS(decodeNpy(good.substr(0, good.size() - 1)), NpyError);  // truncated data
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  CHECK_THROWS_AS(decodeNpy(fortran), NpyError);
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  CHECK_THROWS_AS(decodeNpy(bigEndian), NpyError);
  NpyArray wrong{tir::Type::F32, {3}, std::vector<std::byte>(8)};
  CHECK_THROWS_AS(encodeNpy(wrong), NpyError);
}

TEST_CASE("npy files are written and read back", "[npy]") {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "tyloc_emu_npy_test.npy";
  NpyArray a{tir::Type::F16, {2, 2}, std::vector<std::byte>(8, std::byte{0x3c})};
  writeNpy(path, a);
  NpyArray back = readNpy(path);
  std::filesystem::remove(path);
  CHECK(back.data == a.data);
  CHECK_THROWS_AS(readNpy(path), NpyError);
  // Not regular files: a directory would fail inside the read, a device never ends.
  CHECK_THROWS_AS(readNpy(std::filesystem::temp_directory_path()), NpyError);
  CHECK_THROWS_AS(readNpy("/dev/zero"), NpyError);
}

TEST_CASE("the digest is FNV-1a 64", "[npy]") {
  CHECK(digest({}) == 0xcbf29ce484222325ull);
  std::byte a[] = {std::byte{'a'}};
  CHECK(digest(a) == 0xaf63dc4c8601ec8cull);
  CHECK(digestHex(0xaf63dc4c8601ec8cull) == "af63dc4c8601ec8c");
}
