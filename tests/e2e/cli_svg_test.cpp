// `tyloc layout --svg` as a process: the picture is written whole or not at all, errors
// have their exit codes, and what is written agrees with the layout algebra.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <set>
#include <string>
#include <vector>

#include "ir/layout/Analysis.h"
#include "tests/support/Process.h"

namespace fs = std::filesystem;
using tyl::test::readFile;

namespace {

tyl::test::ProcessResult tyloc(std::vector<std::string> args) {
  args.insert(args.begin(), TYLOC_PATH);
  return tyl::test::run(args);
}

// A fresh directory per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tyl-svg-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.insert(e.path().filename().string());
    return names;
  }
};

std::vector<pugi::xml_node> cellsOf(const pugi::xml_document& doc) {
  std::vector<pugi::xml_node> out;
  for (const pugi::xpath_node& n : doc.select_nodes("//g[@class='cell']")) out.push_back(n.node());
  return out;
}

void load(pugi::xml_document& doc, const std::string& path) {
  pugi::xml_parse_result r = doc.load_file(path.c_str());
  INFO(r.description());
  REQUIRE(r);
}

}  // namespace

TEST_CASE("svg writes a picture of the lane fragment and prints nothing else") {
  TempDir dir;
  auto r = tyloc({"layout", "S[(32, 4) : (1@laneid, 1)]", "--svg", dir.file("frag.svg")});
  REQUIRE(r.exitCode == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  pugi::xml_document doc;
  load(doc, dir.file("frag.svg"));
  auto cells = cellsOf(doc);
  REQUIRE(cells.size() == 128);
  for (int i = 0; i < 128; ++i) {
    CHECK(std::string(cells[i].attribute("data-coord").value()) == fmt::format("{},{}", i / 4, i % 4));
    CHECK(std::string(cells[i].attribute("data-owners").value()) == fmt::format("T{} r{}", i / 4, i % 4));
  }
  CHECK(dir.entries() == std::set<std::string>{"frag.svg"});
}

TEST_CASE("svg lists the replicas of the replicated fragment") {
  TempDir dir;
  auto r =
      tyloc({"layout", "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4", "--svg", dir.file("rep.svg")});
  REQUIRE(r.exitCode == 0);
  pugi::xml_document doc;
  load(doc, dir.file("rep.svg"));
  auto cells = cellsOf(doc);
  REQUIRE(cells.size() == 128);
  CHECK(std::string(cells[3 * 4 + 2].attribute("data-owners").value()) == "W0 L3 r6; W1 L3 r6");
  std::string caption = doc.select_node("//g[@class='caption']/text").node().child_value();
  CHECK(caption == "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4");
}

TEST_CASE("svg with json prints the document and writes the picture") {
  TempDir dir;
  auto r = tyloc({"layout", "S[(32, 4) : (1@laneid, 1)]", "--json", "--svg", dir.file("a.svg")});
  REQUIRE(r.exitCode == 0);
  CHECK(nlohmann::json::parse(r.out)["size"] == 128);
  CHECK(fs::exists(dir.file("a.svg")));
}

TEST_CASE(
    "svg bank colours of the swizzled tile follow the bank map and the caption states the conflict degree") {
  TempDir dir;
  const char* swizzle =
      "ComposeLayout(per_element=3, swizzle_len=3, atom_len=3, tile_layout=S[(8, 64) : (64, 1)])";
  auto r = tyloc(
      {"layout", swizzle, "--svg", dir.file("sw.svg"), "--dtype", "f16", "--highlight", "ldmatrix:0,0"});
  REQUIRE(r.exitCode == 0);
  pugi::xml_document doc;
  load(doc, dir.file("sw.svg"));
  auto cells = cellsOf(doc);
  REQUIRE(cells.size() == 512);
  using namespace tyl::layout;
  Layout l = Layout::compose(Swizzle::make(3, 3, 3), TileLayout::rowMajor(Shape{8, 64}));
  std::vector<int> banks = bankMap(l, Shape{8, 64}, 2);
  for (size_t k = 0; k < cells.size(); ++k) CHECK(cells[k].attribute("data-bank").as_int(-1) == banks[k]);
  CHECK(doc.document_element().attribute("data-conflict-degree").as_int() == 1);
  bool stated = false;
  for (const pugi::xpath_node& t : doc.select_nodes("//g[@class='caption']/text"))
    stated |=
        std::string(t.node().child_value()).find("conflict degree 1 (conflict-free)") != std::string::npos;
  CHECK(stated);

  r = tyloc({"layout", "S[(8, 64) : (64, 1)]", "--svg", dir.file("plain.svg"), "--dtype", "f16",
             "--highlight", "ldmatrix:0,0"});
  REQUIRE(r.exitCode == 0);
  pugi::xml_document plain;
  load(plain, dir.file("plain.svg"));
  CHECK(plain.document_element().attribute("data-conflict-degree").as_int() == 8);
}

TEST_CASE("svg refuses unwritable paths with exit 2 and leaves nothing behind") {
  TempDir dir;
  REQUIRE(tyloc({"layout", "S[4]", "--svg", dir.file("file.txt")}).exitCode == 0);
  fs::create_directory(dir.path / "sub");
  const std::set<std::string> before = dir.entries();
  for (const std::string& path :
       {dir.file("missing/pic.svg"), dir.file("sub"), dir.file("file.txt/pic.svg"), dir.file("sub/")}) {
    auto r = tyloc({"layout", "S[(32, 4) : (1@laneid, 1)]", "--svg", path});
    INFO(path << "\n" << r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err.rfind(fmt::format("tyloc: error: cannot write '{}': ", path), 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
    CHECK(dir.entries() == before);
    CHECK(fs::is_empty(dir.path / "sub"));
  }
}

TEST_CASE("svg leaves an existing file untouched when the request fails") {
  TempDir dir;
  const std::string path = dir.file("keep.svg");
  REQUIRE(tyloc({"layout", "S[4]", "--svg", path}).exitCode == 0);
  const std::string original = readFile(path);
  struct Case {
    std::vector<std::string> args;
    int exitCode;
    const char* id;
  };
  for (const Case& c : std::vector<Case>{
           {{"S[(32, 4) : (1@lane, 1)]"}, 1, "error:"},
           {{"S[(512, 512)]"}, 1, "[too-large]"},
           {{"S[(256, 256) : (1@laneid, 1)] + R[8 : 1@warpid]"}, 1, "[too-large]"},
           {{"S[(32, 4) : (1@laneid, 1)]", "--dtype", "f16"}, 1, "[not-memory-layout]"},
           {{"S[(8, 64)]", "--dtype", "f16", "--highlight", "row:8"}, 1, "[bad-highlight]"},
           {{"S[(8, 64) : (1, 8)]", "--dtype", "f16", "--highlight", "ldmatrix:0,0"}, 1, "[bad-highlight]"},
           {{"S[(8, 64)]", "--shape", "4,4"}, 1, "[shape-mismatch]"},
       }) {
    std::vector<std::string> args{"layout"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--svg", path});
    auto r = tyloc(args);
    INFO(c.args[0] << "\n" << r.err);
    CHECK(r.exitCode == c.exitCode);
    CHECK(r.err.find(c.id) != std::string::npos);
    CHECK(readFile(path) == original);
    CHECK(dir.entries() == std::set<std::string>{"keep.svg"});
  }
}

TEST_CASE("svg replaces an existing file whole") {
  TempDir dir;
  const std::string path = dir.file("pic.svg");
  REQUIRE(tyloc({"layout", "S[4]", "--svg", path}).exitCode == 0);
  REQUIRE(tyloc({"layout", "S[(32, 4) : (1@laneid, 1)]", "--svg", path}).exitCode == 0);
  pugi::xml_document doc;
  load(doc, path);
  CHECK(cellsOf(doc).size() == 128);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  // Readable by others like any new file (mkstemp alone would leave it private).
  mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));
}

TEST_CASE("svg options misused on the command line exit 2") {
  TempDir dir;
  const std::string path = dir.file("x.svg");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"S[(8, 64)]", "--dtype", "f16"},
           {"S[(8, 64)]", "--svg", path, "--highlight", "col:0"},
           {"S[(8, 64)]", "--svg", path, "--dtype", "f17"},
           {"S[(8, 64)]", "--svg", path, "--dtype", "f16", "--highlight", "diagonal"},
           {"S[(8, 64)]", "--svg", path, "--dtype", "f16", "--highlight", "col:-1"},
           {"S[(8, 64)]", "--svg", path, "--apply", "0,0"},
           {"S[(8, 64)]", "--svg", ""},
           {"S[(8, 64)]", "--svg"},
       }) {
    std::vector<std::string> full{"layout"};
    full.insert(full.end(), args.begin(), args.end());
    auto r = tyloc(full);
    INFO(fmt::format("{}", fmt::join(args, " ")) << "\n" << r.err);
    CHECK(r.exitCode == 2);
    CHECK(!fs::exists(path));
  }
}

TEST_CASE("svg draws 256 by 256 cells and folds rank 3") {
  TempDir dir;
  auto r = tyloc({"layout", "S[(256, 256)]", "--svg", dir.file("big.svg"), "--dtype", "bf16"});
  REQUIRE(r.exitCode == 0);
  pugi::xml_document doc;
  load(doc, dir.file("big.svg"));
  CHECK(cellsOf(doc).size() == 65536);
  CHECK(std::string(doc.document_element().attribute("data-labels").value()) == "omitted");

  r = tyloc({"layout", "S[(2, 8, 16)]", "--svg", dir.file("r3.svg")});
  REQUIRE(r.exitCode == 0);
  pugi::xml_document r3;
  load(r3, dir.file("r3.svg"));
  CHECK(cellsOf(r3).size() == 256);
  CHECK(std::string(r3.select_node("//g[@class='title']/text").node().child_value())
            .find("folded to 16 rows") != std::string::npos);
}

TEST_CASE("svg help documents the options") {
  auto r = tyloc({"layout", "--help"});
  REQUIRE(r.exitCode == 0);
  for (const char* option : {"--svg", "--dtype", "--highlight", "ldmatrix:R,C", "col:C", "row:R", "cells:"})
    CHECK(r.out.find(option) != std::string::npos);
}
