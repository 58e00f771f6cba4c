// TMA copies and a TMA-fed wgmma GEMM (tests/emu/kernels/tma_tiles.tyl), compiled by the pipeline
// and run on the emulator against CPU references, with sizes that are not tile multiples; and
// the planted bugs of tma_bugs.tyl, each reported. tests/hostrun runs the same kernels as
// generated CUDA.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <utility>

#include "backend/emu/Emulator.h"
#include "backend/emu/Values.h"
#include "ir/thread/Print.h"
#include "tests/emu/CompiledTyl.h"
#include "tests/support/TmaTiles.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl {
namespace {

std::unique_ptr<test::CompiledTyl> compile(const std::string& file) { return test::compileKernels(file); }

// The thread IR of `kernel` (a construct's expansion) and of `kernel`_by_hand (the program written
// out with the primitives), the latter under the former's name: the same program prints the same.
std::pair<std::string, std::string> expandedAndByHand(const test::CompiledTyl& c, const std::string& kernel) {
  const std::string byHand = kernel + "_by_hand";
  std::string written = tir::print(c.kernel(byHand));
  written.replace(written.find(byHand), byHand.size(), kernel);
  return {tir::print(c.kernel(kernel)), written};
}

TEST_CASE("emu.tma: TMA copies put every element where the layout says, with zeros past the edges", "[tma]") {
  auto c = compile("tma_tiles.tyl");
  for (const test::TmaCopyCase& tc : test::kTmaCopyCases) {
    INFO(tc.kernel << " M = " << tc.m << " N = " << tc.n);
    std::vector<emu::Buffer> buffers = test::tmaCopyInputs(tc);
    emu::RunResult r = emu::run(c->kernel(tc.kernel), test::tmaCopyArgs(tc), buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    const int64_t blocks = (tc.m + tc.tileRows - 1) / tc.tileRows * ((tc.n + tc.tileCols - 1) / tc.tileCols);
    CHECK(r.stats.tmaBytes == blocks * tc.tileRows * tc.tileCols * tir::typeBytes(tc.type));
    CHECK(test::tmaCopyError(tc, buffers) == "");
  }
}

TEST_CASE("emu.tma: a TMA-fed wgmma GEMM computes A @ B for any M, N and K", "[tma]") {
  auto c = compile("tma_tiles.tyl");
  for (const test::TmaGemmCase& g : test::kTmaGemmCases) {
    INFO("M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g);
    emu::RunResult r = emu::run(c->kernel("tma_gemm"), test::tmaGemmArgs(g), buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(test::tmaGemmError(g, buffers) == "");
  }
}

TEST_CASE("emu.tma: an empty K gets no tensor map for A and B, and none is used: C = 0", "[tma]") {
  auto c = compile("tma_tiles.tyl");
  const test::TmaGemmCase empty{64, 128, 0};
  std::vector<emu::Buffer> buffers = test::tmaGemmInputs(empty);
  emu::RunResult r = emu::run(c->kernel("tma_gemm"), test::tmaGemmArgs(empty), buffers);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::tmaGemmError(empty, buffers) == "");
}

TEST_CASE("emu.tma: a warp-specialized GEMM (TMA producer, wgmma consumers, setmaxnreg) computes A @ B", "[tma]") {
  auto c = compile("ws_gemm.tyl");
  for (const test::TmaGemmCase& g : test::kWsGemmCases) {
    INFO("M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g);
    emu::RunResult r = emu::run(c->kernel("ws_gemm"), test::wsGemmArgs(g), buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(test::tmaGemmError(g, buffers) == "");
    // The same with the pipeline construct's flat form.
    std::vector<emu::Buffer> flat = test::tmaGemmInputs(g);
    r = emu::run(c->kernel("ws_flat"), test::tmaGemmArgs(g), flat);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(test::tmaGemmError(g, flat) == "");
  }
  // Consumers waiting on the wrong parity: the first wait returns before the tiles land.
  const test::TmaGemmCase g = test::kWsGemmCases[0];
  std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g);
  emu::RunResult r = emu::run(c->kernel("ws_gemm"), test::wsGemmArgs(g, 1), buffers);
  REQUIRE_FALSE(r.findings.empty());
  const emu::FindingKind k = r.findings[0].kind;
  CHECK((k == emu::FindingKind::SharedRace || k == emu::FindingKind::UninitializedRead ||
         k == emu::FindingKind::Deadlock));
}

TEST_CASE("emu.tma: async wgmma groups kept in flight compute A @ B; a stage handed back early is a race",
          "[tma]") {
  auto c = compile("ws_gemm.tyl");
  for (const test::TmaGemmCase& g : test::kWsAsyncCases) {
    INFO("M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g);
    emu::RunResult r = emu::run(c->kernel("ws_async"), test::wsGemmArgs(g), buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(test::tmaGemmError(g, buffers) == "");
  }
  // Each stage handed back as soon as its MMA is issued: the producer refills it while the MMA,
  // performed at the wait, may still read it.
  const test::TmaGemmCase g = test::kWsAsyncCases[0];
  std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g);
  emu::RunResult r = emu::run(c->kernel("ws_async"), test::wsGemmArgs(g, 1), buffers);
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.findings[0].kind == emu::FindingKind::SharedRace);
  CHECK_THAT(r.findings[0].message, Catch::Contains("may still be reading with a wgmma"));
  CHECK(test::tmaGemmError(g, buffers) != "");
}

TEST_CASE("emu.tma: a persistent GEMM in clusters of two, B multicast to both blocks, computes A @ B", "[tma]") {
  auto c = compile("cluster_gemm.tyl");
  for (const test::ClusterGemmCase& g : test::kClusterGemmCases) {
    INFO("M = " << g.size.m << " N = " << g.size.n << " K = " << g.size.k << " on " << g.sms << " SMs");
    std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g.size);
    emu::Options options;
    options.smCount = g.sms;
    emu::RunResult r = emu::run(c->kernel("cluster_gemm"), test::clusterGemmArgs(g), buffers, options);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    // Every cluster took more than one unit of work (a pair of tiles).
    CHECK(r.stats.blocks == 2 * std::min<int64_t>(g.sms / 2, (g.size.m + 255) / 256 * ((g.size.n + 127) / 128)));
    CHECK(r.stats.blocks < 2 * ((g.size.m + 255) / 256) * ((g.size.n + 127) / 128));
    CHECK(test::tmaGemmError(g.size, buffers) == "");
  }
  // Without the cluster barrier at the end, a block exits while its peer's consumers still arrive
  // on its barriers.
  const test::ClusterGemmCase g = test::kClusterGemmCases[0];
  std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g.size);
  emu::Options options;
  options.smCount = g.sms;
  emu::RunResult r = emu::run(c->kernel("cluster_gemm"), test::clusterGemmArgs(g, 1), buffers, options);
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.findings[0].kind == emu::FindingKind::ClusterExited);
  CHECK_THAT(r.findings[0].message, Catch::Contains("whose threads have all exited"));
}

TEST_CASE("emu.tma: tiles(...), persistent_grid(...) and a staged store are the loop and epilogue written by hand",
          "[tma]") {
  auto c = compile("tiled_gemm.tyl");
  const auto [expanded, written] = expandedAndByHand(*c, "tiled_gemm");
  CHECK(written == expanded);
  for (const test::ClusterGemmCase& g : test::kClusterGemmCases) {
    INFO("M = " << g.size.m << " N = " << g.size.n << " K = " << g.size.k << " on " << g.sms << " SMs");
    std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g.size);
    emu::Options options;
    options.smCount = g.sms;
    emu::RunResult r = emu::run(c->kernel("tiled_gemm"), test::tmaGemmArgs(g.size), buffers, options);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    // persistent_grid: whole clusters, one block per SM, fewer than the tiles.
    CHECK(r.stats.blocks == 2 * std::min<int64_t>(g.sms / 2, (g.size.m + 255) / 256 * ((g.size.n + 127) / 128)));
    CHECK(r.stats.blocks < 2 * ((g.size.m + 255) / 256) * ((g.size.n + 127) / 128));
    CHECK(test::tmaGemmError(g.size, buffers) == "");
  }
}

TEST_CASE("emu.tma: tiles(...) takes every tile once, whatever the group, in clusters over a persistent grid",
          "[tma]") {
  auto c = compile("tiled_gemm.tyl");
  for (const char* kernel : {"tile_count_1", "tile_count_3", "tile_count_1099511627776"})
    for (const auto& [tm, tn, sms] : {std::array<int64_t, 3>{7, 5, 6}, {8, 3, 2}, {1, 9, 4}, {13, 1, 132}}) {
      INFO(kernel << " TM = " << tm << " TN = " << tn << " on " << sms << " SMs");
      std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::I32, tm * tn)};
      for (int64_t i = 0; i < tm * tn; ++i) emu::setElement(b[0], tir::Type::I32, i, 0);
      emu::Options options;
      options.smCount = static_cast<int>(sms);
      emu::RunResult r =
          emu::run(c->kernel(kernel), {emu::Arg::integer(tm), emu::Arg::integer(tn), emu::Arg::pointer(0)}, b, options);
      INFO(emu::renderFindings(r.findings, c->sources));
      REQUIRE(r.ok());
      for (int64_t i = 0; i < tm * tn; ++i) CHECK(emu::getElement(b[0], tir::Type::I32, i) == 1);
    }
}

TEST_CASE("emu.tma: a staged store with one, two or three buffers, or two in a row, writes every element once",
          "[tma]") {
  auto c = compile("tiled_gemm.tyl");
  struct Case {
    int64_t m, n, sms;
  };
  for (const char* kernel : {"staged_scale_1", "staged_scale_2", "staged_scale_3", "staged_mixed"})
    for (const Case& k : {Case{200, 136, 3}, Case{64, 64, 1}, Case{130, 264, 4}}) {
      INFO(kernel << " M = " << k.m << " N = " << k.n << " on " << k.sms << " SMs");
      std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::F32, k.m * k.n),
                                    emu::makeBuffer(tir::Type::F32, k.m * k.n, false)};
      emu::fillRandom(b[0], tir::Type::F32, static_cast<uint64_t>(k.m * 31 + k.n));
      emu::Options options;
      options.smCount = k.sms;
      emu::RunResult r = emu::run(c->kernel(kernel),
                                  {emu::Arg::integer(k.m), emu::Arg::integer(k.n), emu::Arg::pointer(0),
                                   emu::Arg::pointer(1)},
                                  b, options);
      INFO(emu::renderFindings(r.findings, c->sources));
      REQUIRE(r.ok());
      const int64_t cols = std::string(kernel) == "staged_mixed" ? 112 : 64;
      const int64_t tiles = (k.m + 63) / 64 * ((k.n + cols - 1) / cols);
      CHECK(r.stats.blocks == std::min(k.sms, tiles));
      for (int64_t i = 0; i < k.m * k.n; ++i)
        if (emu::getElement(b[1], tir::Type::F32, i) != 2 * emu::getElement(b[0], tir::Type::F32, i)) {
          FAIL_CHECK("C[" << i << "] = " << emu::getElement(b[1], tir::Type::F32, i) << ", expected "
                          << 2 * emu::getElement(b[0], tir::Type::F32, i));
          break;
        }
    }
}

TEST_CASE("emu.tma: cluster ranks count x first, and a grid of partial clusters is refused", "[tma]") {
  auto c = compile("cluster_gemm.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(tir::Type::I32, 2 * 6, false)};
  emu::RunResult r = emu::run(c->kernel("cluster_ranks"), {emu::Arg::integer(6), emu::Arg::pointer(0)}, buffers);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(r.stats.blocks == 12);
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 6; ++x)
      CHECK(emu::getElement(buffers[0], tir::Type::I32, y * 6 + x) == static_cast<double>(x % 2 + 2 * (y % 2)));
  r = emu::run(c->kernel("cluster_ranks"), {emu::Arg::integer(5), emu::Arg::pointer(0)}, buffers);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == emu::FindingKind::LaunchFailure);
  CHECK_THAT(r.findings[0].message, Catch::Contains("grid dimension x must be a multiple of the cluster's 2"));
}

TEST_CASE("emu.tma: the warp-specialized pipeline is the hand-written ring, and a persistent GEMM with it computes A @ B",
          "[tma]") {
  auto c = compile("ws_gemm.tyl");
  const auto [expanded, written] = expandedAndByHand(*c, "ws_pipeline");
  CHECK(written == expanded);
  for (const test::TmaGemmCase& g : test::kWsPipelineCases) {
    INFO("M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<emu::Buffer> buffers = test::tmaGemmInputs(g);
    emu::Options options;
    options.smCount = 2;  // two blocks for the tiles, so that the ring goes on from tile to tile
    emu::RunResult r = emu::run(c->kernel("ws_pipeline"), test::tmaGemmArgs(g), buffers, options);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(r.stats.blocks == std::min<int64_t>(2, (g.m + 127) / 128 * ((g.n + 127) / 128)));
    CHECK(r.stats.wgmmas == 8 * 4 * ((g.m + 127) / 128) * ((g.n + 127) / 128) * ((g.k + 63) / 64));
    CHECK(test::tmaGemmError(g, buffers) == "");
  }
}

TEST_CASE("emu.tma: windows of 3-D and 4-D tensors are boxes of tensor maps of that rank", "[tma]") {
  auto c = compile("tma_batched.tyl");
  for (const test::TmaBatchedCase& t : test::kTmaBatchedCases) {
    INFO(t.kernel << " M = " << t.m << " N = " << t.n);
    const tir::Kernel& k = c->kernel(t.kernel);
    REQUIRE(k.tensorMaps.size() == 1);
    CHECK(k.tensorMaps[0].dims.size() == t.outer.size() + 2);
    // The box, innermost first: 64 x 32, times 2 matrices for the boxes of three dimensions.
    const bool box3d = std::string(t.kernel).find("box3d") != std::string::npos;
    std::vector<int64_t> box = {64, 32};
    box.resize(t.outer.size() + 2, 1);
    if (box3d) box[2] = 2;
    CHECK(std::vector<int64_t>(k.tensorMaps[0].box.begin(), k.tensorMaps[0].box.end()) == box);
    std::vector<emu::Buffer> buffers = test::tmaBatchedInputs(t);
    emu::RunResult r = emu::run(k, test::tmaBatchedArgs(t), buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(test::tmaBatchedError(t, buffers) == "");
  }
}

// Drops every fence.proxy.async from `b`.
void dropProxyFences(tir::Block& b) {
  std::erase_if(b, [](const tir::Stmt& s) { return std::holds_alternative<tir::FenceProxyAsync>(s.node); });
  for (tir::Stmt& s : b) {
    if (auto* loop = std::get_if<tir::For>(&s.node)) dropProxyFences(loop->body);
    if (auto* branch = std::get_if<tir::If>(&s.node)) {
      dropProxyFences(branch->then);
      dropProxyFences(branch->otherwise);
    }
  }
}

TEST_CASE("emu.tma: a TMA store needs the writes it reads fenced for the async proxy", "[tma]") {
  auto c = compile("tma_tiles.tyl");
  const test::TmaCopyCase tc = test::kTmaCopyCases[std::size(test::kTmaCopyCases) - 1];
  REQUIRE(tc.store);
  tir::Kernel unfenced = c->kernel("tma_store_b128");
  dropProxyFences(unfenced.body);
  std::vector<emu::Buffer> buffers = test::tmaCopyInputs(tc);
  emu::RunResult r = emu::run(unfenced, test::tmaCopyArgs(tc), buffers);
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.findings[0].kind == emu::FindingKind::AsyncProxy);
  CHECK_THAT(r.findings[0].message, Catch::Contains("without a fence.proxy.async"));
}

TEST_CASE("emu.tma: planted bugs around TMA are reported", "[tma]") {
  auto c = compile("tma_bugs.tyl");
  const tir::Kernel& handoff = c->kernel("handoff");
  auto run = [&](int64_t tx, int64_t parity, int64_t wait, std::vector<emu::Buffer>& buffers) {
    buffers = {emu::makeBuffer(tir::Type::BF16, 32 * 64), emu::makeBuffer(tir::Type::BF16, 32 * 64, false)};
    emu::fillRandom(buffers[0], tir::Type::BF16, 5);
    return emu::run(handoff,
                    {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(tx), emu::Arg::integer(parity),
                     emu::Arg::integer(wait)},
                    buffers);
  };
  std::vector<emu::Buffer> buffers;
  emu::RunResult good = run(4096, 0, 1, buffers);
  INFO(emu::renderFindings(good.findings, c->sources));
  REQUIRE(good.ok());
  CHECK(buffers[0].bytes == buffers[1].bytes);

  SECTION("an expect-tx count that is not the box's bytes never completes the phase") {
    for (int64_t tx : {4080, 4112}) {
      emu::RunResult r = run(tx, 0, 1, buffers);
      REQUIRE(r.findings.size() == 1);
      CHECK(r.findings[0].kind == emu::FindingKind::Deadlock);
      CHECK_THAT(r.findings[0].message,
                 Catch::Contains("with 0 arrivals and " + std::to_string(tx - 4096) + " transaction bytes pending"));
    }
  }
  SECTION("a missing wait reads the tile while TMA writes it") {
    emu::RunResult r = run(4096, 0, 0, buffers);
    REQUIRE_FALSE(r.findings.empty());
    CHECK(r.findings[0].kind == emu::FindingKind::SharedRace);
    CHECK_THAT(r.findings[0].message, Catch::Contains("which thread 0 (warp 0, lane 0) wrote"));
  }
  SECTION("a wait on the wrong parity is not the load's phase") {
    emu::RunResult r = run(4096, 1, 1, buffers);
    REQUIRE_FALSE(r.findings.empty());
    const emu::FindingKind k = r.findings[0].kind;
    CHECK((k == emu::FindingKind::Deadlock || k == emu::FindingKind::SharedRace));
  }
  SECTION("setmaxnreg asking for more registers than the block holds waits forever") {
    std::vector<emu::Buffer> out = {emu::makeBuffer(tir::Type::F32, 384, false)};
    const tir::Kernel& k = c->kernel("registers");
    emu::RunResult fits = emu::run(k, {emu::Arg::pointer(0), emu::Arg::integer(40)}, out);
    CHECK(fits.ok());
    emu::RunResult stuck = emu::run(k, {emu::Arg::pointer(0), emu::Arg::integer(32)}, out);
    REQUIRE(stuck.findings.size() == 1);
    CHECK(stuck.findings[0].kind == emu::FindingKind::Deadlock);
    CHECK_THAT(stuck.findings[0].message,
               Catch::Contains("at setmaxnreg.inc to 240 registers per thread, while the warps hold 63232 of the "
                               "64512 registers the launch allocated"));
  }
  SECTION("a TMA load of a tensor without elements, whose map the launcher does not encode") {
    const tir::Kernel& k = c->kernel("empty_read");
    std::vector<emu::Buffer> io = {emu::makeBuffer(tir::Type::BF16, 32 * 64), emu::makeBuffer(tir::Type::BF16, 32 * 64)};
    emu::fillRandom(io[0], tir::Type::BF16, 3);
    emu::RunResult full = emu::run(k, {emu::Arg::integer(64), emu::Arg::pointer(0), emu::Arg::pointer(1)}, io);
    INFO(emu::renderFindings(full.findings, c->sources));
    CHECK(full.ok());
    CHECK(io[0].bytes == io[1].bytes);
    emu::RunResult empty = emu::run(k, {emu::Arg::integer(0), emu::Arg::pointer(0), emu::Arg::pointer(1)}, io);
    REQUIRE_FALSE(empty.findings.empty());
    CHECK(empty.findings[0].kind == emu::FindingKind::InvalidOperand);
    CHECK_THAT(empty.findings[0].message,
               Catch::Contains("a TMA load uses the tensor map of 'A', whose dimension 1 is empty"));
  }
  SECTION("a tile rewritten while a TMA store may still read it") {
    std::vector<emu::Buffer> io = {emu::makeBuffer(tir::Type::BF16, 32 * 64), emu::makeBuffer(tir::Type::BF16, 32 * 64)};
    const tir::Kernel& k = c->kernel("store_overwrite");
    emu::RunResult waited = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(1)}, io);
    INFO(emu::renderFindings(waited.findings, c->sources));
    CHECK(waited.ok());
    emu::RunResult early = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(0)}, io);
    REQUIRE_FALSE(early.findings.empty());
    CHECK(early.findings[0].kind == emu::FindingKind::SharedRace);
    CHECK_THAT(early.findings[0].message, Catch::Contains("may still be reading with a TMA store"));
  }
  SECTION("tiles refilled before every warp has read them") {
    std::vector<emu::Buffer> g = {emu::makeBuffer(tir::Type::BF16, 64 * 128), emu::makeBuffer(tir::Type::BF16, 128 * 128),
                                  emu::makeBuffer(tir::Type::F32, 64 * 128, false)};
    emu::RunResult r = emu::run(c->kernel("refill_early"), {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)}, g);
    REQUIRE_FALSE(r.findings.empty());
    const emu::FindingKind k = r.findings[0].kind;
    CHECK((k == emu::FindingKind::Deadlock || k == emu::FindingKind::SharedRace));
  }
}

}  // namespace
}  // namespace tyl
