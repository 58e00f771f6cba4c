// What tyloc generates, checked without a GPU. For examples/add_one/add_one.tyl: the
// launchers' declarations and run-time checks, 16-byte vector accesses in the CUDA and (when
// nvcc is available) in the PTX, #line directives, determinism and the depfile. For the GEMM
// examples (with nvcc): the tensor-core, ldmatrix and cp.async instructions in every kernel's
// PTX, and no register spills in ptxas's report, for sm_80 and sm_90.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/Process.h"

namespace fs = std::filesystem;
using tyl::test::readFile;
using tyl::test::run;

namespace {

const std::string kAddOne = std::string(TYLO_SOURCE_DIR) + "/examples/add_one/add_one.tyl";

// A fresh scratch folder per test case, so that ctest can run the cases in parallel.
fs::path scratch(const std::string& name) {
  fs::path dir = fs::path(TYLO_SCRATCH_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Generated {
  std::string cu, cuh, depfile;
  fs::path cuPath, cuhPath, depfilePath;
};

// Runs tyloc on add_one.tyl into `dir`; fails the test case if tyloc fails.
Generated generate(const fs::path& dir, std::vector<std::string> extra = {}) {
  fs::create_directories(dir);
  Generated g;
  g.cuPath = dir / "add_one.cu";
  g.cuhPath = dir / "add_one.cuh";
  g.depfilePath = dir / "add_one.d";
  std::vector<std::string> argv = {TYLOC_PATH, kAddOne,         "-o",        g.cuPath.string(),
                                   "--header", g.cuhPath.string(), "--depfile", g.depfilePath.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run(argv);
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  g.cu = readFile(g.cuPath.string());
  g.cuh = readFile(g.cuhPath.string());
  g.depfile = readFile(g.depfilePath.string());
  return g;
}

// The text from `start` to the first line that is exactly "}" after it (a top-level function).
std::string functionAt(const std::string& text, const std::string& start) {
  const size_t begin = text.find(start);
  if (begin == std::string::npos) return "";
  const size_t end = text.find("\n}\n", begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end + 3 - begin);
}

// The body of the PTX entry whose (mangled) name contains `name` (used by the nvcc tests only).
[[maybe_unused]] std::string ptxEntry(const std::string& ptx, const std::string& name) {
  std::regex entry(R"(\.entry\s+([A-Za-z0-9_$]+))");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].str().find(name) == std::string::npos) continue;
    const size_t begin = it->position();
    const size_t next = ptx.find(".entry", begin + 1);
    return ptx.substr(begin, next == std::string::npos ? std::string::npos : next - begin);
  }
  return "";
}

}  // namespace

TEST_CASE("add_one header declares one launcher per kernel with a default stream") {
  Generated g = generate(scratch("header"));
  CHECK(g.cuh.find("#pragma once") != std::string::npos);
  CHECK(g.cuh.find("cudaError_t add_one(const float* A, float* B, cudaStream_t stream = 0);") != std::string::npos);
  CHECK(g.cuh.find("cudaError_t add_one_n(int64_t n, const float* A, float* B, cudaStream_t stream = 0);") !=
        std::string::npos);
  CHECK(g.cu.find("#include \"add_one.cuh\"") != std::string::npos);
  CHECK(g.cu.find("#include <tylo/runtime.cuh>") != std::string::npos);
}

TEST_CASE("the .cu includes its header by the path from the .cu's folder") {
  const fs::path dir = scratch("header_elsewhere");
  fs::create_directories(dir / "src");
  fs::create_directories(dir / "include" / "k");
  const fs::path cu = dir / "src" / "add_one.cu", cuh = dir / "include" / "k" / "add_one.cuh";
  auto r = run({TYLOC_PATH, kAddOne, "-o", cu.string(), "--header", cuh.string()});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  CHECK(readFile(cu.string()).find("#include \"../include/k/add_one.cuh\"\n") != std::string::npos);
  // Side by side, the file name alone (what add_tylo_kernel does).
  Generated g = generate(scratch("header_beside"));
  CHECK(g.cu.find("#include \"add_one.cuh\"\n") != std::string::npos);
}

TEST_CASE("add_one_n launcher checks alignment and size before launching") {
  Generated g = generate(scratch("launcher"));
  const std::string launcher = functionAt(g.cu, "cudaError_t add_one_n(");
  INFO(launcher);
  REQUIRE(!launcher.empty());
  const size_t launch = launcher.find("<<<");
  REQUIRE(launch != std::string::npos);
  for (const char* check : {"tylo::is_aligned(A, 16)", "tylo::is_aligned(B, 16)", "n >= int64_t{0}"}) {
    INFO(check);
    const size_t at = launcher.find(check);
    CHECK(at != std::string::npos);
    CHECK(at < launch);
  }
  CHECK(launcher.find("tylo::launch_error(") != std::string::npos);
  CHECK(launcher.find("tylo::clear_launch_error();") < launcher.find("tylo::launch_error("));
  CHECK(launcher.find("return tylo::launch_result(cudaGetLastError(), \"add_one_n: the kernel launch failed") !=
        std::string::npos);
}

TEST_CASE("add_one_n kernel moves 16-byte vectors") {
  Generated g = generate(scratch("vectors"));
  const std::string kernel = functionAt(g.cu, "tylo_kernel_add_one_n(");
  INFO(kernel);
  REQUIRE(!kernel.empty());
  CHECK(kernel.find("reinterpret_cast<const uint4*>(A") != std::string::npos);
  CHECK(kernel.find("reinterpret_cast<uint4*>(B") != std::string::npos);
}

TEST_CASE("line directives point at the tyl source by default and disappear with no-line") {
  const fs::path dir = scratch("line");
  Generated with = generate(dir / "with");
  const std::string tyl = readFile(kAddOne);
  const size_t tylLines = std::count(tyl.begin(), tyl.end(), '\n');
  // Every directive names a line of the .tyl, or the next line of the .cu itself (where the code
  // that has no source line, the launchers, begins).
  std::regex directive(R"re(^#line (\d+) "([^"]*)"$)re");
  size_t toTyl = 0;
  size_t lineNo = 0;
  std::istringstream lines(with.cu);
  for (std::string line; std::getline(lines, line);) {
    ++lineNo;
    std::smatch m;
    if (!std::regex_match(line, m, directive)) continue;
    INFO(line);
    const size_t target = std::stoul(m[1]);
    if (m[2] == kAddOne) {
      ++toTyl;
      CHECK(target >= 1);
      CHECK(target <= tylLines);
    } else {
      CHECK(m[2] == "add_one.cu");
      CHECK(target == lineNo + 1);
    }
  }
  CHECK(toTyl >= 2);  // at least one per kernel

  Generated without = generate(dir / "without", {"--no-line"});
  CHECK(without.cu.find("#line") == std::string::npos);
  CHECK(without.cuh.find("#line") == std::string::npos);
}

TEST_CASE("output is byte-identical when compiling twice") {
  const fs::path dir = scratch("deterministic");
  Generated first = generate(dir / "a");
  Generated second = generate(dir / "b");
  CHECK(first.cu == second.cu);
  CHECK(first.cuh == second.cuh);
  Generated again = generate(dir / "a");  // over the existing files
  CHECK(first.cu == again.cu);
  CHECK(first.cuh == again.cuh);
  CHECK(first.depfile == again.depfile);
}

TEST_CASE("depfile names the outputs and the tyl source") {
  Generated g = generate(scratch("depfile"));
  INFO(g.depfile);
  const size_t colon = g.depfile.find(": ");
  REQUIRE(colon != std::string::npos);
  const std::string targets = g.depfile.substr(0, colon);
  const std::string prerequisites = g.depfile.substr(colon + 2);
  CHECK(targets.find(g.cuPath.string()) != std::string::npos);
  CHECK(targets.find(g.cuhPath.string()) != std::string::npos);
  CHECK(prerequisites.find(kAddOne) != std::string::npos);
}

TEST_CASE("depfile names the files the tyl source imports, and an edit to one is seen") {
  const fs::path dir = scratch("depfile_imports");
  fs::create_directories(dir / "shared");
  std::ofstream(dir / "shared" / "tile.tyl") << "const N = 32;\n";
  std::ofstream(dir / "k.tyl") << "import \"shared/tile.tyl\";\n"
                                  "kernel k(A: global f32[N] align 16) launch(grid = 1, block = N) {\n"
                                  "    let x = alloc_local(f32[N], layout = S[N : 1@tx]);\n"
                                  "    copy(x, A);\n"
                                  "    copy(A, x * 2.0);\n"
                                  "}\n";
  auto compile = [&] {
    auto r = run({TYLOC_PATH, (dir / "k.tyl").string(), "-o", (dir / "k.cu").string(), "--depfile",
                  (dir / "k.d").string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    return readFile((dir / "k.cu").string());
  };
  const std::string first = compile();
  const std::string dep = readFile((dir / "k.d").string());
  INFO(dep);
  CHECK(dep.find((dir / "shared" / "tile.tyl").string()) != std::string::npos);
  CHECK(first.find("__launch_bounds__(32)") != std::string::npos);
  std::ofstream(dir / "shared" / "tile.tyl") << "const N = 64;\n";
  CHECK(compile().find("__launch_bounds__(64)") != std::string::npos);
}

namespace {

// A kernel whose fragment is named like the lowering's temporaries (tmp0), written to `dir`.
fs::path writeNameClash(const fs::path& dir) {
  const fs::path tyl = dir / "clash.tyl";
  std::ofstream(tyl) << "kernel clash(A: global f32[128] : S[(128) : (1)] align 16) launch(grid = 1, block = 32) {\n"
                        "    let tmp0 = alloc_local(f32[128], layout = S[(32, 4) : (1@laneid, 1)]);\n"
                        "    copy(tmp0, A);\n"
                        "    store(A, tmp0 * 2.0);\n"
                        "}\n";
  return tyl;
}

// Compiles that kernel with tyloc into `dir`; the .cu's path. Fails the test case if tyloc fails.
fs::path compileNameClash(const fs::path& dir) {
  const fs::path cu = dir / "clash.cu";
  auto r = run({TYLOC_PATH, writeNameClash(dir).string(), "-o", cu.string()});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  return cu;
}

}  // namespace

TEST_CASE("every local of a kernel has its own C++ name, whatever the tyl names") {
  const fs::path cu = compileNameClash(scratch("name_clash"));
  const std::string text = readFile(cu.string());
  INFO(text);
  // The user's fragment keeps its name; the temporary of `tmp0 * 2.0` gets another.
  CHECK(text.find("  float tmp0[4];\n") != std::string::npos);
  CHECK(text.find("  float tmp0_2[4];\n") != std::string::npos);
}

namespace {

// Compiles examples/gemm/<stem>.tyl with tyloc into `dir`; the .cu's path. Fails the test case
// if tyloc fails.
fs::path compileGemmExample(const fs::path& dir, const std::string& stem, std::vector<std::string> extra) {
  const fs::path cu = dir / (stem + ".cu");
  std::vector<std::string> argv = {TYLOC_PATH, std::string(TYLO_SOURCE_DIR) + "/examples/gemm/" + stem + ".tyl", "-o",
                                   cu.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run(argv);
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  return cu;
}

}  // namespace

TEST_CASE("a cp.async with a source size takes its address without pointer arithmetic") {
  // Past the end of a tensor the source size is 0 and nothing is read, but the address is
  // still formed: as `A + offset` that would be undefined behaviour in C++.
  const fs::path cu = compileGemmExample(scratch("cp_async_address"), "gemm", {"--instantiate", "gemm:f16"});
  const std::string text = readFile(cu.string());
  std::regex copy(R"(tylo::cp_async_16\([^;]*\);)");
  size_t copies = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), copy); it != std::sregex_iterator(); ++it) {
    ++copies;
    INFO(it->str());
    CHECK(it->str().find("tylo::element_address(") != std::string::npos);
  }
  CHECK(copies >= 8);
}

TEST_CASE("arrays of 16-bit fragments start zeroed") {
  // Two elements share a word, and setting one reads the word: without an initial value the
  // first such read would read an indeterminate value.
  const fs::path cu = compileGemmExample(scratch("fragment_arrays"), "gemm", {"--instantiate", "gemm:f16"});
  const std::string text = readFile(cu.string());
  std::regex array(R"(\n  uint32_t [a-z_0-9]+\[\d+\][^;]*;)");
  size_t arrays = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), array); it != std::sregex_iterator(); ++it) {
    ++arrays;
    INFO(it->str());
    CHECK(it->str().find("] = {};") != std::string::npos);
  }
  CHECK(arrays >= 4);
}

TEST_CASE("a pipelined loop counts its stages and adds them to addresses the loop does not change") {
  const fs::path cu = compileGemmExample(scratch("pipelined_addresses"), "gemm", {"--instantiate", "gemm:f16"});
  const std::string kernel = functionAt(readFile(cu.string()), "__global__ void __launch_bounds__(256) tylo_kernel_gemm_f16(");
  const size_t begin = kernel.find("  for (k = 0;");
  REQUIRE(begin != std::string::npos);
  const std::string loop = kernel.substr(begin, kernel.find("\n  }\n", begin) - begin);
  INFO(loop);
  // The stages k % 4 (read, then refilled with step k + 4) and (k + 1) % 4 (its first
  // fragments loaded after the barrier) are counters, set before the loop.
  CHECK(loop.find(" % ") == std::string::npos);
  CHECK(kernel.find("k_mod4 = 0;") < begin);
  CHECK(kernel.find("k_plus1_mod4 = 1;") < begin);
  // Every shared address: the address of the part no loop changes, plus the stage's bytes;
  // every global one: the same split, for a copy advancing along K.
  std::regex op(R"(tylo::(ldmatrix_x4(_trans)?|cp_async_16)\([^;]*\);)");
  std::regex shared(R"(\(tylo::smem_addr\((As|Bs) \+ [^;]*\) \+ static_cast<uint32_t>\(\(k_(plus1_)?mod4 \* (8192|16384)\)\)\))");
  std::regex global(R"(tylo::element_address\((A|B), [^;]*, [^;]*\), static_cast)");
  size_t loads = 0, copies = 0;
  for (auto it = std::sregex_iterator(loop.begin(), loop.end(), op); it != std::sregex_iterator(); ++it) {
    const std::string s = it->str();
    INFO(s);
    CHECK(std::regex_search(s, shared));
    if ((*it)[1] == "cp_async_16") {
      ++copies;
      CHECK(std::regex_search(s, global));
    } else {
      ++loads;
    }
  }
  CHECK(loads == 16);   // sub-step 1 of step k and sub-step 0 of step k + 1, 4 of A + 4 of B each
  CHECK(copies == 6);   // 2 vectors of A (8 KiB a stage) and 4 of B (16 KiB) per thread
}

TEST_CASE("a let set before a loop is part of the addresses the loop does not change") {
  const fs::path dir = scratch("let_before_loop");
  const fs::path tyl = dir / "stream.tyl", cu = dir / "stream.cu";
  std::ofstream(tyl) << R"(kernel stream(n: i32, A: global f16[64, n] : S[(64, n) : (n, 1)] align 16,
              B: global f16[64, 64] align 16) launch(grid = 1, block = 128) {
    let s = alloc_shared(f16[2, 64, 64]);
    let first = n / 16;
    for k in range(0, 4) {
        copy_async(s[k % 2], A.window((0, first * 8 + k * 64), (64, 64)));
        commit_copies();
        wait_copies(0);
        barrier();
        copy(B, s[k % 2]);
        barrier();
    }
}
)";
  auto r = run({TYLOC_PATH, tyl.string(), "-o", cu.string(), "--no-line"});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string text = readFile(cu.string());
  std::regex copy(R"(tylo::cp_async_16\([^;]*\);)");
  // element_address(A, fixed, moving): `first` in the first part, `k` alone in the second.
  std::regex split(R"(tylo::element_address\(A, [^;]*first[^;]*, \(static_cast<int64_t>\(k\) \* int64_t\{64\}\)\))");
  std::regex stage(R"(\(tylo::smem_addr\(s \+ [^;]*\) \+ static_cast<uint32_t>\(\(k_mod2 \* 8192\)\)\))");
  size_t copies = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), copy); it != std::sregex_iterator(); ++it) {
    ++copies;
    INFO(it->str());
    CHECK(std::regex_search(it->str(), split));
    CHECK(std::regex_search(it->str(), stage));
  }
  CHECK(copies == 4);  // 512 vectors over 128 threads
}

TEST_CASE("integer operations print as plain C++ where their ranges rule out overflow, else through helpers") {
  const fs::path dir = scratch("integer_helpers");
  const fs::path tyl = dir / "ints.tyl", cu = dir / "ints.cu";
  std::ofstream(tyl) << R"(kernel ints(out: global i32[1024], n: i32, d: i32, x: f32) launch(grid = 8, block = 128) {
    let i = block_id.x * 128 + thread_id.x;
    out[i] = n * 4;
    for k in range(0, n) {
        out[i] = k + 1;
    }
    for k in range(0, n, 2) {
        out[i] = n / d + (n >> d) + i / 3;
    }
    out[i] = i32(x);
}
)";
  auto r = run({TYLOC_PATH, tyl.string(), "-o", cu.string(), "--no-line"});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string kernel = functionAt(readFile(cu.string()), "__global__");
  INFO(kernel);
  // Block and thread ids of a constant launch, a step-1 loop below a parameter, a division
  // by a positive constant: plain.
  CHECK(std::regex_search(kernel, std::regex(R"(\(static_cast<int32_t>\(blockIdx.x\) \* 128\))")));
  CHECK(kernel.find("k += 1)") != std::string::npos);
  CHECK(kernel.find("(k + 1)") != std::string::npos);
  CHECK(std::regex_search(kernel, std::regex(R"(\(\w+ / 3\))")));
  // A parameter's product, a division and a shift by a parameter, a step that may pass the
  // largest i32, a float conversion: the helpers that compute the IR's value.
  CHECK(kernel.find("tylo::wrap_mul(n, 4)") != std::string::npos);
  CHECK(kernel.find("tylo::div(n, d)") != std::string::npos);
  CHECK(kernel.find("tylo::shr(n, d)") != std::string::npos);
  CHECK(kernel.find("= tylo::loop_next(") != std::string::npos);
  CHECK(kernel.find("tylo::float_to_i32(x)") != std::string::npos);
}

TEST_CASE("the examples' kernels need none of the integer helpers") {
  // Their index and address arithmetic is provably free of overflow, so it stays plain C++
  // that the optimizer can reassociate and fold into addressing modes.
  std::vector<std::string> texts;
  for (const char* stem : {"gemm", "gemm_stages"})
    texts.push_back(readFile(compileGemmExample(scratch(std::string("no_helpers_") + stem), stem, {}).string()));
  texts.push_back(generate(scratch("no_helpers_add_one")).cu);
  std::regex helper(R"(tylo::(wrap_\w+|div|rem|shl|shr|loop_next|float_to_\w+)\()");
  size_t kernels = 0;
  for (const std::string& text : texts) {
    for (size_t at = text.find("__global__"); at != std::string::npos; at = text.find("__global__", at + 1)) {
      ++kernels;
      const std::string kernel = text.substr(at, text.find("\n}\n", at) - at);
      std::smatch m;
      INFO(kernel.substr(0, kernel.find('{')));
      CHECK_FALSE(std::regex_search(kernel, m, helper));
    }
  }
  CHECK(kernels >= 10);
}

#ifdef TYLO_NVCC
namespace {

tyl::test::ProcessResult nvcc(std::vector<std::string> args) {
  args.insert(args.begin(), {TYLO_NVCC, "-std=c++17", "-I" + std::string(TYLO_SOURCE_DIR) + "/runtime"});
  return run(args);
}

}  // namespace

TEST_CASE("add_one PTX loads with ld.global.nc.v4 and stores with st.global.v4") {
  const std::string arch = GENERATE(as<std::string>{}, "80", "90");
  INFO("sm_" << arch);
  const fs::path dir = scratch("ptx_sm_" + arch);
  Generated g = generate(dir, {"--arch", "sm_" + arch});
  const fs::path ptxPath = dir / "add_one.ptx";
  auto r = nvcc({"-gencode=arch=compute_" + arch + ",code=compute_" + arch, "-ptx", g.cuPath.string(), "-o",
                 ptxPath.string()});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string entry = ptxEntry(readFile(ptxPath.string()), "tylo_kernel_add_one_n");
  INFO(entry);
  REQUIRE(!entry.empty());
  // One 16-byte load and one 16-byte store per thread on the full-block path; the tail is
  // predicated scalar accesses.
  CHECK(std::regex_search(entry, std::regex(R"(ld\.global\.nc\.v4\.(u32|b32|f32))")));
  CHECK(std::regex_search(entry, std::regex(R"(st\.global\.v4\.(u32|b32|f32))")));
  // No local memory: the fragment stays in registers.
  CHECK(entry.find("ld.local") == std::string::npos);
  CHECK(entry.find("st.local") == std::string::npos);
}

TEST_CASE("a source name holding quotes, backslashes and line breaks still builds, in launch checks too") {
  const fs::path dir = scratch("odd_source_name");
  const fs::path tyl = dir / "a\"b\\c\nd.tyl";
  // A kernel whose launcher checks an index, with the file's name in the check's message.
  std::ofstream(tyl) << readFile(kAddOne)
                     << "kernel diagonal(m: i32) launch(grid = 1, block = 32) {\n"
                        "    let s = alloc_shared(i32[64]);\n"
                        "    s[m + thread_id.x] = m;\n"
                        "}\n";
  const fs::path cu = dir / "odd.cu";
  auto g = run({TYLOC_PATH, tyl.string(), "-o", cu.string()});
  INFO(g.err);
  REQUIRE(g.exitCode == 0);
  const std::string text = readFile(cu.string());
  // The name is written as a C string would write it, in the #line directives and the banner.
  const std::string escaped = (dir / "a\\\"b\\\\c\\nd.tyl").string();
  CHECK(text.find("#line 8 \"" + escaped + "\"\n") != std::string::npos);
  CHECK(text.starts_with("// Generated by tyloc from " + escaped + " for sm_80."));
  CHECK(text.find("at a\\\"b\\\\c\\nd.tyl:") != std::string::npos);  // the launch check names the file
  auto r = nvcc({"-gencode=arch=compute_80,code=compute_80", "-ptx", cu.string(), "-o", (dir / "odd.ptx").string()});
  INFO(r.err);
  CHECK(r.exitCode == 0);
}

TEST_CASE("the runtime's stmatrix wrappers compile for sm_90 and are missing for sm_80") {
  const fs::path dir = scratch("stmatrix_wrappers");
  const fs::path cu = dir / "stmatrix.cu";
  std::ofstream(cu) << "#include <tylo/runtime.cuh>\n"
                       "__global__ void k(uint32_t* out) {\n"
                       "  __shared__ uint32_t s[1024];\n"
                       "  uint32_t a = tylo::smem_addr(s) + threadIdx.x * 16;\n"
                       "  tylo::stmatrix_x1(a, 1); tylo::stmatrix_x2(a, 1, 2); tylo::stmatrix_x4(a, 1, 2, 3, 4);\n"
                       "  tylo::stmatrix_x1_trans(a, 1); tylo::stmatrix_x2_trans(a, 1, 2);\n"
                       "  tylo::stmatrix_x4_trans(a, 1, 2, 3, 4);\n"
                       "  __syncthreads();\n"
                       "  out[threadIdx.x] = s[threadIdx.x];\n"
                       "}\n";
  const fs::path ptx = dir / "stmatrix.ptx";
  auto r = nvcc({"-gencode=arch=compute_90,code=compute_90", "-ptx", cu.string(), "-o", ptx.string()});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string text = readFile(ptx.string());
  CHECK(text.find("stmatrix.sync.aligned.m8n8.x4.shared.b16") != std::string::npos);
  CHECK(text.find("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16") != std::string::npos);
  // For an older target the call is a compile error, not an instruction that does nothing.
  auto old = nvcc({"-gencode=arch=compute_80,code=compute_80", "-ptx", cu.string(), "-o", (dir / "old.ptx").string()});
  CHECK(old.exitCode != 0);
  CHECK(old.err.find("stmatrix_x1") != std::string::npos);
}

TEST_CASE("a device check costs nothing by default and traps with TYLO_DEVICE_CHECKS") {
  const fs::path dir = scratch("device_check");
  const fs::path cu = dir / "fragment_window.cu";
  auto g = run({TYLOC_PATH, std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/fragment_window.tyl", "-o",
                cu.string()});
  INFO(g.err);
  REQUIRE(g.exitCode == 0);
  // Windows at run-time origins are checked (that at parameter r also by the launcher), those
  // at constant origins are not.
  const std::string text = readFile(cu.string());
  auto checks = [&](const std::string& kernel) {
    const std::string body = functionAt(text, kernel);
    size_t n = 0;
    for (size_t at = body.find("tylo::device_check("); at != std::string::npos; at = body.find("tylo::device_check(", at + 1))
      ++n;
    return n;
  };
  CHECK(checks("tylo_kernel_origin_from_memory(") == 1);
  CHECK(checks("tylo_kernel_windows(") == 1);
  CHECK(checks("tylo_kernel_convert_edge(") == 0);
  for (bool checks : {false, true}) {
    INFO("TYLO_DEVICE_CHECKS " << checks);
    const fs::path ptx = dir / (checks ? "checks.ptx" : "plain.ptx");
    std::vector<std::string> args = {"-gencode=arch=compute_80,code=compute_80", "-ptx", cu.string(), "-o",
                                     ptx.string()};
    if (checks) args.push_back("-DTYLO_DEVICE_CHECKS");
    auto r = nvcc(args);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.err.find("warning") == std::string::npos);
    const std::string entry = ptxEntry(readFile(ptx.string()), "origin_from_memory");
    REQUIRE(!entry.empty());
    CHECK((entry.find("trap;") != std::string::npos) == checks);
  }
}

TEST_CASE("a kernel whose names clash with the lowering's temporaries compiles with nvcc") {
  const fs::path dir = scratch("name_clash_nvcc");
  const fs::path cu = compileNameClash(dir);
  auto c = nvcc({"-gencode=arch=compute_80,code=sm_80", "-c", cu.string(), "-o", (dir / "clash.o").string()});
  INFO(c.err);
  CHECK(c.exitCode == 0);
}
TEST_CASE("names C++ or the CUDA headers reserve, negated negative constants and i64 vectors build with nvcc") {
  // Kernel names declared by the CUDA headers or defined as macros there, and parameters and
  // locals named as what the generated code calls unqualified: each gets a trailing '_'. Host
  // code includes the generated files and calls the launchers by those names.
  const fs::path dir = scratch("reserved_names_nvcc");
  const fs::path tyl = dir / "names.tyl", cu = dir / "names.cu", cuh = dir / "names.cuh", host = dir / "host.cu";
  std::ofstream(tyl) << R"(
kernel half(cudaSuccess: i32, NAN: f32, make_uint2: i32, A: global f32[64] align 16) launch(grid = 1, block = 16) {
    let make_uint4 = alloc_local(f32[64], layout = S[(16, 4) : (1@tx, 1)]);
    copy(make_uint4, A);
    copy(A, make_uint4 * -f32(-2.0) + NAN + f32(cudaSuccess + make_uint2));
}
kernel cudaGetLastError() launch(grid = 1, block = 32) { }
kernel EOF(cudaGetLastError: i32, INT32_MAX: i64, A: global i64[512] align 16) launch(grid = 1, block = 256) {
    let s = alloc_shared(i64[512]);
    copy(s, A);
    barrier();
    let x = alloc_local(i64[512], layout = S[(256, 2) : (1@tx, 1)]);
    copy(x, s);
    copy(A, x + INT32_MAX);
}
)";
  auto g = run({TYLOC_PATH, tyl.string(), "-o", cu.string(), "--header", cuh.string()});
  INFO(g.err);
  REQUIRE(g.exitCode == 0);
  std::ofstream(host) << "#include \"names.cu\"\n"
                         "cudaError_t all(float* a, int64_t* b) {\n"
                         "  cudaError_t e = half_(1, 2.0f, 3, a);\n"
                         "  if (e == cudaSuccess) e = cudaGetLastError_();\n"
                         "  return e == cudaSuccess ? EOF_(1, 2, b) : e;\n"
                         "}\n";
  auto c = nvcc({"-gencode=arch=compute_80,code=sm_80", "-I", dir.string(), "-c", host.string(), "-o",
                 (dir / "host.o").string()});
  INFO(c.err);
  CHECK(c.exitCode == 0);
}

namespace {

// Every kernel of examples/gemm/<stem>.tyl, compiled for sm_<arch>: its PTX holds mma.sync
// m16n8k16, ldmatrix and cp.async (but gemm_any's, which stages its tiles through registers,
// and holds 16-byte st.shared instead), and ptxas reports no spills (nor a stack frame).
void checkGemmPtx(const std::string& stem, const std::string& arch, size_t kernels) {
  INFO(stem << ".tyl for sm_" << arch);
  const fs::path dir = scratch(stem + "_sm_" + arch);
  const fs::path cu = compileGemmExample(dir, stem, {"--arch", "sm_" + arch}), ptx = dir / (stem + ".ptx");
  auto p = nvcc({"-gencode=arch=compute_" + arch + ",code=compute_" + arch, "-ptx", cu.string(), "-o", ptx.string()});
  INFO(p.err);
  REQUIRE(p.exitCode == 0);
  const std::string text = readFile(ptx.string());
  std::regex entry(R"(\.entry\s+([A-Za-z0-9_$]+))");
  size_t entries = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    ++entries;
    const std::string body = ptxEntry(text, (*it)[1].str());
    INFO((*it)[1].str());
    CHECK(std::regex_search(body, std::regex(R"(mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.(bf16|f16)\.)")));
    CHECK(body.find("ldmatrix.sync.aligned.m8n8.x4") != std::string::npos);
    if ((*it)[1].str().find("gemm_any") != std::string::npos) {
      CHECK(body.find("cp.async") == std::string::npos);
      CHECK(body.find("st.shared.v4") != std::string::npos);
      continue;
    }
    CHECK(body.find("cp.async.cg.shared.global") != std::string::npos);
    // cp.async's source operand is a global-space address, converted from the generic pointer.
    CHECK(body.find("cvta.to.global") != std::string::npos);
    // gemm (B stored K x N) reads B with ldmatrix.trans; gemm_bt (B stored N x K) with plain
    // ldmatrix only, its tiles being K-major; gemm_at (A stored K x M) reads A with .trans too.
    const std::string name = (*it)[1].str();
    const bool trans = body.find("ldmatrix.sync.aligned.m8n8.x4.trans") != std::string::npos;
    if (name.find("gemm_bt") != std::string::npos) CHECK_FALSE(trans);
    if (stem == "gemm" && name.find("gemm_bt") == std::string::npos) CHECK(trans);
  }
  CHECK(entries == kernels);

  // ptxas's report: per kernel "N bytes stack frame, N bytes spill stores, N bytes spill loads".
  auto a = nvcc({"-gencode=arch=compute_" + arch + ",code=sm_" + arch, "-cubin", "-Xptxas", "-v", ptx.string(), "-o",
                 (dir / (stem + ".cubin")).string()});
  INFO(a.err);
  REQUIRE(a.exitCode == 0);
  std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  size_t reports = 0;
  for (auto it = std::sregex_iterator(a.err.begin(), a.err.end(), frame); it != std::sregex_iterator(); ++it) {
    ++reports;
    INFO(it->str());
    CHECK((*it)[1] == "0");
    CHECK((*it)[2] == "0");
    CHECK((*it)[3] == "0");
  }
  CHECK(reports == kernels);
}

// A file of tests/emu/kernels (or a path from the source tree's root) compiled by tyloc for sm_90a and by nvcc to PTX and on to a cubin,
// which ptxas must build without a warning (its C7510 to C7520 say that wgmmas are serialized: a
// kernel correct but slow) and without spills; returns the PTX, each of its `kernels` entries
// checked by `check(name, body)`.
void buildSm90a(const std::string& file, size_t kernels,
                const std::function<void(const std::string&, const std::string&)>& check) {
  const std::string stem = fs::path(file).stem().string();
  const fs::path dir = scratch(stem + "_sm_90a");
  const fs::path cu = dir / (stem + ".cu"), ptx = dir / (stem + ".ptx");
  const std::string path = file.find('/') == std::string::npos ? "/tests/emu/kernels/" + file : "/" + file;
  auto t = run({TYLOC_PATH, std::string(TYLO_SOURCE_DIR) + path, "--arch", "sm_90a", "-o",
                cu.string(), "--header", (dir / (stem + ".cuh")).string()});
  INFO(t.err);
  REQUIRE(t.exitCode == 0);
  auto p = nvcc({"-gencode=arch=compute_90a,code=compute_90a", "-ptx", cu.string(), "-o", ptx.string()});
  INFO(p.err);
  REQUIRE(p.exitCode == 0);
  const std::string text = readFile(ptx.string());
  std::regex entry(R"(\.entry\s+([A-Za-z0-9_$]+))");
  size_t entries = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    ++entries;
    INFO((*it)[1].str());
    check((*it)[1].str(), ptxEntry(text, (*it)[1].str()));
  }
  CHECK(entries == kernels);
  auto a = nvcc({"-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-Xptxas", "-v", ptx.string(), "-o",
                 (dir / (stem + ".cubin")).string()});
  INFO(a.err);
  REQUIRE(a.exitCode == 0);
  CHECK(a.err.find("warning") == std::string::npos);
  std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  size_t reports = 0;
  for (auto it = std::sregex_iterator(a.err.begin(), a.err.end(), frame); it != std::sregex_iterator(); ++it) {
    ++reports;
    INFO(it->str());
    CHECK(((*it)[1] == "0" && (*it)[2] == "0" && (*it)[3] == "0"));
  }
  CHECK(reports == kernels);
  // The host side too: the launchers, and the runtime they call.
  auto o = nvcc({"-gencode=arch=compute_90a,code=sm_90a", "-c", cu.string(), "-o", (dir / (stem + ".o")).string()});
  INFO(o.err);
  CHECK(o.exitCode == 0);
}

}  // namespace

// wgmma (sm_90a): every kernel of wgmma_tiles.tyl holds wgmma.mma_async with the fence and the
// group operations; those with A in registers load it with ldmatrix and pass it as four registers.
TEST_CASE("wgmma kernels build for sm_90a: wgmma.mma_async in the PTX, no spills, no serialization") {
  buildSm90a("wgmma_tiles.tyl", 9, [](const std::string& name, const std::string& body) {
    CHECK(std::regex_search(body, std::regex(R"(wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.(bf16|f16)\.)")));
    const bool registerA = name.find("tylo_kernel_a_regs") != std::string::npos;
    CHECK(std::regex_search(body, std::regex(R"(wgmma\.mma_async[^;]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd)")) ==
          registerA);
    if (registerA) CHECK(body.find("ldmatrix.sync.aligned") != std::string::npos);
    CHECK(body.find("wgmma.fence.sync.aligned") != std::string::npos);
    CHECK(body.find("wgmma.commit_group.sync.aligned") != std::string::npos);
    CHECK(body.find("wgmma.wait_group.sync.aligned") != std::string::npos);
  });
}

// stmatrix (sm_90a): the accumulators of stmatrix.tyl are stored with stmatrix, plain and transposed.
TEST_CASE("stmatrix stores build for sm_90a: stmatrix.x4 and stmatrix.x4.trans in the PTX, no spills") {
  buildSm90a("stmatrix.tyl", 2, [](const std::string& name, const std::string& body) {
    CHECK(body.find("stmatrix.sync.aligned.m8n8.x4.shared.b16") != std::string::npos);
    CHECK((body.find("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") != std::string::npos) ==
          (name.find("stmatrix_epilogue") != std::string::npos));
  });
}

// TMA (sm_90a): every kernel of tma_tiles.tyl loads with cp.async.bulk.tensor onto an mbarrier it
// waits for with try_wait.parity, and the GEMM feeds wgmma; the launchers, which encode the
// tensor maps through the runtime's driver entry point, compile.
TEST_CASE("TMA kernels build for sm_90a: cp.async.bulk.tensor and mbarrier waits in the PTX, launchers compile") {
  buildSm90a("tma_tiles.tyl", 9, [](const std::string& name, const std::string& body) {
    if (name.find("tma_store") != std::string::npos) {
      // The store, its bulk group, and the fence that makes the block's writes visible to it.
      CHECK(body.find("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") != std::string::npos);
      CHECK(body.find("cp.async.bulk.commit_group") != std::string::npos);
      CHECK(body.find("cp.async.bulk.wait_group.read 0") != std::string::npos);
      CHECK(body.find("fence.proxy.async.shared::cta") != std::string::npos);
      return;
    }
    CHECK(body.find("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") !=
          std::string::npos);
    CHECK(body.find("mbarrier.arrive.expect_tx") != std::string::npos);
    CHECK(body.find("mbarrier.try_wait.parity") != std::string::npos);
    if (name.find("tma_gemm") != std::string::npos) CHECK(body.find("wgmma.mma_async") != std::string::npos);
  });
}

// Warp specialization (sm_90a): the producer and consumers of ws_gemm.tyl's kernels (written by
// hand and with the pipeline construct) trade registers with setmaxnreg (the kernel declared for
// one block per SM), the producer elects its TMA thread; those that keep an MMA group in flight
// wait with wgmma.wait_group 1, and ptxas keeps their wgmmas asynchronous (no serialization warning).
TEST_CASE("a warp-specialized kernel builds for sm_90a: setmaxnreg, elect.sync, TMA and wgmma in the PTX") {
  buildSm90a("ws_gemm.tyl", 5, [](const std::string& name, const std::string& body) {
    const bool inFlight = name.find("tylo_kernel_ws_gemmE") == std::string::npos;
    CHECK((body.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos) == inFlight);
    if (name.find("tylo_kernel_ws_flatE") != std::string::npos) return;  // no registers traded
    CHECK(body.find("setmaxnreg.inc.sync.aligned.u32 232") != std::string::npos);
    CHECK(body.find("setmaxnreg.dec.sync.aligned.u32 40") != std::string::npos);
    CHECK(body.find("elect.sync") != std::string::npos);
    CHECK(body.find("cp.async.bulk.tensor.2d") != std::string::npos);
    CHECK(body.find("wgmma.mma_async") != std::string::npos);
    CHECK(body.find(".maxntid 384, 1, 1") != std::string::npos);
    CHECK(body.find(".minnctapersm 1") != std::string::npos);
  });
}

// TMA boxes of 3-D and 4-D tensors (tma_batched.tyl): tensor maps of that rank, with boxes of two
// or three dimensions.
TEST_CASE("TMA copies of windows of 3-D and 4-D tensors build for sm_90a") {
  buildSm90a("tma_batched.tyl", 4, [](const std::string& name, const std::string& body) {
    if (name.find("tylo_kernel_tma_batched") != std::string::npos || name.find("tylo_kernel_tma_box3d") != std::string::npos)
      CHECK(body.find("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") !=
            std::string::npos);
    else if (name.find("tylo_kernel_tma_store_box3d") != std::string::npos)
      CHECK(body.find("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group") != std::string::npos);
    else
      CHECK(body.find("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group") != std::string::npos);
  });
}

// Clusters (sm_90): cluster_gemm.tyl's blocks run in pairs (.reqnctapercluster), multicast half of
// B each to both, arrive on the peer's barriers through mapa, read their rank, and meet at cluster
// barriers; its persistent grid is sized by the SM count the launcher reads.
TEST_CASE("a clustered kernel builds for sm_90a: multicast TMA, remote arrives, cluster barriers") {
  buildSm90a("cluster_gemm.tyl", 2, [](const std::string& name, const std::string& body) {
    if (name.find("cluster_ranks") != std::string::npos) {
      CHECK(body.find(".reqnctapercluster 2, 2, 1") != std::string::npos);
      CHECK(body.find("%cluster_ctarank") != std::string::npos);
      return;
    }
    CHECK(body.find(".reqnctapercluster 2, 1, 1") != std::string::npos);
    CHECK(body.find("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster") !=
          std::string::npos);
    CHECK(body.find("mapa.shared::cluster.u32") != std::string::npos);
    CHECK(body.find("mbarrier.arrive.shared::cluster.b64") != std::string::npos);
    CHECK(body.find("%cluster_ctarank") != std::string::npos);
    CHECK(body.find("barrier.cluster.arrive.release.aligned") != std::string::npos);
    CHECK(body.find("barrier.cluster.wait.acquire.aligned") != std::string::npos);
    CHECK(body.find("fence.mbarrier_init.release.cluster") != std::string::npos);
  });
  const std::string cu = readFile((fs::path(TYLO_SCRATCH_DIR) / "cluster_gemm_sm_90a" / "cluster_gemm.cu").string());
  CHECK(cu.find("tylo::sm_count()") != std::string::npos);
  // cluster_gemm's grid is a multiple of 2 by its form: its launcher has no check of whole clusters
  // to make; cluster_ranks's grid is a parameter.
  CHECK(cu.find("cluster_gemm: grid dimension x must be a multiple of the cluster") == std::string::npos);
  CHECK(cu.find("cluster_ranks: grid dimension x must be a multiple of the cluster's 2") != std::string::npos);
}

// The IR rounds a product, then the sum; nvcc would fuse `a * b + c` into one FMA (rounded
// once), and the GPU would then differ from the emulator. A literal past the largest f32 is an
// infinity, spelled so that nvcc takes it.
TEST_CASE("f32 products are rounded on their own, never fused into an FMA") {
  const fs::path dir = scratch("no_fma");
  const fs::path tyl = dir / "k.tyl", cu = dir / "k.cu", ptx = dir / "k.ptx";
  std::ofstream(tyl) << "kernel axpb(out: global f32[64], a: f32, b: f32, C: global f32[64]) "
                        "launch(grid = 1, block = 64) {\n"
                        "    let p = a * b;\n"
                        "    out[thread_id.x] = a * b + C[thread_id.x] + p * C[thread_id.x] - 1e39 * a;\n"
                        "}\n";
  auto g = run({TYLOC_PATH, tyl.string(), "-o", cu.string()});
  INFO(g.err);
  REQUIRE(g.exitCode == 0);
  auto r = nvcc({"-gencode=arch=compute_80,code=compute_80", "-ptx", cu.string(), "-o", ptx.string()});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string entry = ptxEntry(readFile(ptx.string()), "tylo_kernel_axpb");
  REQUIRE(!entry.empty());
  CHECK(entry.find("fma.") == std::string::npos);
  CHECK(entry.find("mul.rn.f32") != std::string::npos);
  // The GEMM epilogue (alpha * acc + beta * C) too.
  const fs::path gemmPtx = dir / "gemm.ptx", gemmCu = dir / "gemm.cu";
  auto gg = run({TYLOC_PATH, std::string(TYLO_SOURCE_DIR) + "/examples/gemm/gemm.tyl", "-o", gemmCu.string()});
  REQUIRE(gg.exitCode == 0);
  auto rg = nvcc({"-gencode=arch=compute_80,code=compute_80", "-ptx", gemmCu.string(), "-o", gemmPtx.string()});
  INFO(rg.err);
  REQUIRE(rg.exitCode == 0);
  CHECK(readFile(gemmPtx.string()).find("fma.rn.f32") == std::string::npos);
}

TEST_CASE("the math functions' fast forms are PTX's .approx instructions, the precise ones CUDA's") {
  const fs::path dir = scratch("math");
  const fs::path cu = dir / "math.cu", ptx = dir / "math.ptx";
  auto g = run({TYLOC_PATH, std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/math.tyl", "-o", cu.string()});
  INFO(g.err);
  REQUIRE(g.exitCode == 0);
  auto r = nvcc({"-gencode=arch=compute_80,code=compute_80", "-ptx", cu.string(), "-o", ptx.string()});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string entry = ptxEntry(readFile(ptx.string()), "tylo_kernel_math_functions");
  REQUIRE(!entry.empty());
  for (const char* instr : {"ex2.approx.f32", "lg2.approx.f32", "rsqrt.approx.f32", "sqrt.approx.f32", "sqrt.rn.f32",
                            "abs.f32"})
    CHECK_THAT(entry, Catch::Contains(instr));  // the fast forms without .ftz: subnormals kept, as the emulator does
}

TEST_CASE("integers convert to bf16 in one rounding: cvt.rn.bf16.s32 and .s64 on sm_90") {
  const fs::path dir = scratch("int_to_bf16");
  const fs::path tyl = dir / "k.tyl", cu = dir / "k.cu";
  std::ofstream(tyl) << "kernel to_bf16(out: global bf16[2], n: i32, m: i64) launch(grid = 1, block = 1) {\n"
                        "    out[0] = n;\n"
                        "    out[1] = m;\n"
                        "}\n";
  auto g = run({TYLOC_PATH, tyl.string(), "-o", cu.string()});
  INFO(g.err);
  REQUIRE(g.exitCode == 0);
  for (const std::string arch : {"80", "90"}) {
    INFO("sm_" << arch);
    const fs::path ptx = dir / ("k" + arch + ".ptx");
    auto r = nvcc({"-gencode=arch=compute_" + arch + ",code=compute_" + arch, "-ptx", cu.string(), "-o", ptx.string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    const std::string entry = ptxEntry(readFile(ptx.string()), "tylo_kernel_to_bf16");
    REQUIRE(!entry.empty());
    // Never the nearest f32 first (sm_80 has no integer-to-bf16 cvt: CUDA rounds to odd there).
    CHECK(entry.find("cvt.rn.f32.s") == std::string::npos);
    if (arch == "90") {
      CHECK(entry.find("cvt.rn.bf16.s32") != std::string::npos);
      CHECK(entry.find("cvt.rn.bf16.s64") != std::string::npos);
    }
  }
}

TEST_CASE("gemm.tyl kernels use mma.sync, ldmatrix and cp.async (gemm_any 16-byte shared stores), and do not spill") {
  const std::string arch = GENERATE(as<std::string>{}, "80", "90");
  checkGemmPtx("gemm", arch, 10);
}

TEST_CASE("gemm_stages.tyl kernels use mma.sync, ldmatrix and cp.async, and do not spill") {
  const std::string arch = GENERATE(as<std::string>{}, "80", "90");
  checkGemmPtx("gemm_stages", arch, 6);
}
// The Hopper GEMM example (examples/gemm/gemm_sm90.tyl), all six instantiations (gemm_sm90,
// gemm_sm90_beta and gemm_sm90_bt, f16 and bf16): TMA into the stages,
// B multicast to the cluster's two blocks, wgmma from them with a group kept in flight, mbarrier
// parity waits, remote arrives on the peer's empty barriers, setmaxnreg, and the epilogue through
// shared memory: the consumers' named barrier and TMA stores of the staged sub-tiles; ptxas builds
// it without spills or serialized wgmmas (buildSm90a).
TEST_CASE("the Hopper GEMM example builds for sm_90a: TMA, multicast, wgmma in flight, mbarriers, setmaxnreg") {
  buildSm90a("examples/gemm/gemm_sm90.tyl", 6, [](const std::string&, const std::string& body) {
    CHECK(body.find("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") !=
          std::string::npos);
    CHECK(body.find(".multicast::cluster") != std::string::npos);
    CHECK(body.find("mbarrier.arrive.shared::cluster.b64") != std::string::npos);
    CHECK(body.find("barrier.cluster.wait") != std::string::npos);
    CHECK(body.find("wgmma.mma_async.sync.aligned.m64n256k16.f32") != std::string::npos);
    CHECK(body.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos);
    CHECK(body.find("mbarrier.try_wait.parity") != std::string::npos);
    CHECK(body.find("setmaxnreg.inc.sync.aligned.u32 232") != std::string::npos);
    CHECK(body.find("setmaxnreg.dec.sync.aligned.u32 40") != std::string::npos);
    CHECK(body.find("bar.sync 1, 256;") != std::string::npos);
    CHECK(body.find("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") != std::string::npos);
    CHECK(body.find("fence.proxy.async.shared::cta") != std::string::npos);
    CHECK(body.find("cp.async.bulk.wait_group.read 0") != std::string::npos);
  });
}

#endif

#ifdef TYLO_NVCC
namespace {

// examples/<path> compiled by tyloc and nvcc for sm_<arch>: the PTX entry whose mangled name holds
// each of `entries` contains every pattern of `patterns`, and ptxas reports no spills nor a stack
// frame for any of them.
void checkExamplePtx(const std::string& path, const std::string& arch, const std::vector<std::string>& entries,
                     const std::vector<std::string>& patterns) {
  const std::string stem = fs::path(path).stem().string();
  const fs::path dir = scratch(stem + "_sm_" + arch);
  const fs::path cu = dir / (stem + ".cu"), ptx = dir / (stem + ".ptx");
  auto t = run({TYLOC_PATH, std::string(TYLO_SOURCE_DIR) + "/examples/" + path, "--arch", "sm_" + arch, "-o",
                cu.string()});
  INFO(t.err);
  REQUIRE(t.exitCode == 0);
  auto p = nvcc({"-gencode=arch=compute_" + arch + ",code=compute_" + arch, "-ptx", cu.string(), "-o", ptx.string()});
  INFO(p.err);
  REQUIRE(p.exitCode == 0);
  const std::string text = readFile(ptx.string());
  for (const std::string& name : entries) {
    const std::string body = ptxEntry(text, name);
    INFO(name);
    for (const std::string& pattern : patterns) {
      INFO(pattern);
      CHECK(std::regex_search(body, std::regex(pattern)));
    }
  }
  auto a = nvcc({"-gencode=arch=compute_" + arch + ",code=sm_" + arch, "-cubin", "-Xptxas", "-v", ptx.string(), "-o",
                 (dir / (stem + ".cubin")).string()});
  INFO(a.err);
  REQUIRE(a.exitCode == 0);
  std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  size_t reports = 0;
  for (auto it = std::sregex_iterator(a.err.begin(), a.err.end(), frame); it != std::sregex_iterator(); ++it, ++reports) {
    INFO(it->str());
    CHECK(((*it)[1] == "0" && (*it)[2] == "0" && (*it)[3] == "0"));
  }
  CHECK(reports == entries.size());
}

}  // namespace

// The softmax example for sm_80 and sm_90: each kernel reduces its rows with shfl.sync.bfly
// butterflies and exponentiates with ex2.approx (fast_exp), without spills.
TEST_CASE("softmax.tyl kernels shuffle with shfl.sync.bfly, use ex2.approx, and do not spill") {
  const std::string arch = GENERATE(as<std::string>{}, "80", "90");
  checkExamplePtx("softmax/softmax.tyl", arch,
                  {"tylo_kernel_softmax_v4_f32", "tylo_kernel_softmax_f32", "tylo_kernel_softmax_v4_f16",
                   "tylo_kernel_softmax_f16", "tylo_kernel_softmax_block_f32", "tylo_kernel_softmax_block_f16"},
                  {R"(shfl\.sync\.bfly\.b32)", R"(ex2\.approx)"});
}

// The attention example for sm_80 and sm_90: the four instantiations (f16 and bf16, head
// dimension 64 and 128) multiply with mma.sync, reduce rows with shfl.sync.bfly and exponentiate
// with ex2.approx, without spills.
TEST_CASE("attention.tyl kernels use mma.sync, shfl.sync.bfly and ex2.approx, and do not spill") {
  const std::string arch = GENERATE(as<std::string>{}, "80", "90");
  checkExamplePtx("attention/attention.tyl", arch, {"tylo_kernel_attention_f16_64", "tylo_kernel_attention_bf16_64",
                   "tylo_kernel_attention_f16_128", "tylo_kernel_attention_bf16_128"},
                  {R"(mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.(bf16|f16)\.)", R"(shfl\.sync\.bfly\.b32)",
                   R"(ex2\.approx)"});
}
#endif
