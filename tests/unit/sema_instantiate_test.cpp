// Generic kernels' instantiations as --instantiate names them, and what analysis does with a
// name that matches none (the driver refuses such names first; a library caller gets an error
// without a place, which the JSON form gives a null location).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

#include "frontend/Parse.h"
#include "frontend/Sema.h"

using namespace tyl;

namespace {

const char* kSource = R"(
kernel plain(A: global f32[32]) launch(grid = 1, block = 32) { A[thread_id.x] = 1.0; }
kernel two<T in (f16, bf16), U in (f32, f16)>(A: global T[32], B: global U[32]) launch(grid = 1, block = 32) {
    B[thread_id.x] = U(A[thread_id.x]);
}
kernel one<T in (f32)>(A: global T[32]) launch(grid = 1, block = 32) { A[thread_id.x] = T(2.0); }
kernel sized<N in (32, 0x40), T in (f16)>(A: global T[N]) launch(grid = 1, block = N) {
    let s = alloc_shared(T[N], layout = S[N : 1]);
    s[thread_id.x] = A[thread_id.x];
}
)";

struct Analyzed {
  std::vector<std::string> names;
  std::vector<std::string> kernels;
  std::string json;
  bool ok = false;
};

Analyzed analyzeWith(std::vector<std::string> instantiate) {
  SourceManager sources;
  FileId file = sources.add("k.tyl", kSource);
  DiagnosticEngine diags(sources);
  std::optional<ast::Module> module = parseModule(file, diags);
  REQUIRE(module);
  Analyzed r;
  r.names = instantiationNames(*module);
  std::optional<tile::Module> m = analyze(*module, diags, SemaOptions{std::move(instantiate)});
  r.ok = m.has_value();
  if (m)
    for (const tile::Kernel& k : m->kernels) r.kernels.push_back(k.skeleton.name);
  std::ostringstream os;
  diags.renderJson(os);
  r.json = os.str();
  return r;
}

}  // namespace

TEST_CASE("instantiation names list every combination of a generic kernel's types") {
  Analyzed r = analyzeWith({});
  CHECK(r.names == std::vector<std::string>{"two:f16,f32", "two:bf16,f32", "two:f16,f16", "two:bf16,f16", "one:f32",
                                            "sized:32,f16", "sized:64,f16"});
  REQUIRE(r.ok);
  CHECK(r.kernels == std::vector<std::string>{"plain", "two_f16_f32", "two_bf16_f32", "two_f16_f16", "two_bf16_f16",
                                              "one_f32", "sized_32_f16", "sized_64_f16"});
}

TEST_CASE("an integer generic parameter is a constant of each instantiation, named in decimal") {
  Analyzed r = analyzeWith({"sized:64,f16"});
  REQUIRE(r.ok);
  CHECK(r.kernels == std::vector<std::string>{"plain", "two_f16_f32", "two_bf16_f32", "two_f16_f16", "two_bf16_f16",
                                              "one_f32", "sized_64_f16"});
  // The hexadecimal spelling is not a name of the instantiation.
  CHECK_FALSE(analyzeWith({"sized:0x40,f16"}).ok);
}

TEST_CASE("an instantiation request selects among a generic kernel's and leaves plain kernels alone") {
  Analyzed r = analyzeWith({"two:bf16,f16"});
  REQUIRE(r.ok);
  CHECK(r.kernels == std::vector<std::string>{"plain", "two_bf16_f16", "one_f32", "sized_32_f16", "sized_64_f16"});
}

TEST_CASE("an instantiation request that matches nothing is an error without a place") {
  for (std::string spec : {"plain:", "two:f16", "nothing:f32", "one:f16"}) {
    INFO(spec);
    Analyzed r = analyzeWith({spec});
    CHECK_FALSE(r.ok);
    nlohmann::json doc = nlohmann::json::parse(r.json);
    REQUIRE(doc["diagnostics"].size() == 1);
    CHECK(doc["diagnostics"][0]["id"] == "bad-type-param");
    CHECK(doc["diagnostics"][0]["location"].is_null());
    CHECK(doc["diagnostics"][0]["message"] == "--instantiate " + spec + " names no generic kernel instantiation");
  }
}
