// Prints one kernel's thread IR as a __global__ function.
#include <fmt/format.h>

#include "backend/cuda/EmitImpl.h"
#include "base/Source.h"
#include "ir/thread/Builder.h"
#include "ir/thread/Walk.h"

namespace tyl::cuda {

using tir::Type;

namespace {

const char* vectorType(int bytes) {
  switch (bytes) {
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    case 8: return "uint2";
    case 16: return "uint4";
  }
  return nullptr;
}

class KernelPrinter {
 public:
  KernelPrinter(const tir::Kernel& k, const EmitOptions& o) : k_(k), o_(o), expr_(k) {}

  std::string run() {
    std::string params;
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const tir::Param& p = k_.params[i];
      if (!params.empty()) params += ", ";
      if (p.isPointer) {
        bool ro = k_.buffers.at(p.buffer).readOnly;
        params += fmt::format("{}{}* __restrict__ {}", ro ? "const " : "", pointerElemType(p.type),
                              expr_.paramName(i));
      } else {
        params += fmt::format("{} {}", cppType(p.type), expr_.paramName(i));
      }
    }
    for (size_t i = 0; i < k_.tensorMaps.size(); ++i)
      params += fmt::format("{}const __grid_constant__ CUtensorMap {}", params.empty() ? "" : ", ", tensorMapName(i));
    // A kernel that moves registers between warpgroups (setmaxnreg) gets the whole register file:
    // one block per SM, so that its pool is what the emulator assumes.
    bool setsRegisters = false;
    tir::forEachStmt(k_.body, [&](const tir::Stmt& s) { setsRegisters |= std::holds_alternative<tir::SetMaxNReg>(s.node); });
    // A cluster is a property of the kernel: the launch needs no attribute.
    const std::string cluster = k_.clusterSize() > 1 ? fmt::format(" __cluster_dims__({}, {}, {})", k_.cluster[0],
                                                                   k_.cluster[1], k_.cluster[2])
                                                     : "";
    out_ += fmt::format("__global__ void __launch_bounds__({}{}){} {}({}) {{\n", k_.threadsPerBlock(),
                        setsRegisters ? ", 1" : "", cluster, kernelSymbol(k_), params);
    if (k_.sharedBytes > 0) {
      out_ += "  extern __shared__ __align__(1024) unsigned char tylo_smem[];\n";
      for (size_t i = 0; i < k_.buffers.size(); ++i) {
        const tir::Buffer& b = k_.buffers[i];
        if (b.space != tir::Space::Shared) continue;
        out_ += fmt::format("  {}* const {} = reinterpret_cast<{}*>(tylo_smem + {});\n", cppType(b.elem),
                            expr_.bufferName(i), cppType(b.elem), b.sharedOffset);
      }
    }
    // Single-assignment variables are defined where they are set.
    for (size_t i = 0; i < k_.vars.size(); ++i)
      if (!k_.vars[i].single) out_ += fmt::format("  {} {};\n", cppType(k_.vars[i].type), expr_.varName(i));
    for (size_t i = 0; i < k_.arrays.size(); ++i) {
      const tir::Array& a = k_.arrays[i];
      if (tir::typeBytes(a.elem) == 2)
        out_ += fmt::format("  uint32_t {}[{}] = {{}};  // {} x {}, two per word\n", expr_.arrayName(i), (a.count + 1) / 2,
                            a.count, tir::typeName(a.elem));
      else
        out_ += fmt::format("  {} {}[{}];\n", cppType(a.elem), expr_.arrayName(i), a.count);
    }
    block(k_.body, 1);
    out_ += "}\n";
    return out_;
  }

 private:
  void line(int depth, const std::string& text) { out_ += std::string(depth * 2, ' ') + text + "\n"; }

  void mark(const tir::Stmt& s) {
    if (!o_.lineDirectives || !s.loc.valid()) return;
    uint32_t lineNo = o_.lineOf ? o_.lineOf(s.loc) : 0;
    if (lineNo == 0 || lineNo == lastLine_) return;
    lastLine_ = lineNo;
    out_ += fmt::format("#line {} \"{}\"\n", lineNo, stringLiteralBody(o_.sourcePath));
  }

  std::string pointer(const tir::MemRef& m) {
    const tir::Buffer& b = k_.buffers.at(m.buffer);
    std::string base = b.space == tir::Space::Global ? expr_.paramName(b.param) : expr_.bufferName(m.buffer);
    return fmt::format("{} + {}", base, expr_.print(m.offset));
  }

  // The same address as `pointer`, computed without pointer arithmetic.
  std::string elementAddress(const tir::MemRef& m) {
    const tir::Buffer& b = k_.buffers.at(m.buffer);
    auto [fixed, moving] = splitOffset(m.offset);
    if (fixed && moving)
      return fmt::format("tylo::element_address({}, {}, {})", expr_.paramName(b.param), expr_.print(fixed),
                         expr_.print(moving));
    return fmt::format("tylo::element_address({}, {})", expr_.paramName(b.param), expr_.print(m.offset));
  }

  void assignReg(int depth, const tir::Reg& r, const std::string& value) {
    if (r.isVar) {
      const tir::Var& v = k_.vars.at(r.id);
      line(depth, fmt::format("{}{} = {};", v.single ? fmt::format("const {} ", cppType(v.type)) : "",
                              expr_.varName(r.id), value));
      return;
    }
    const tir::Array& a = k_.arrays.at(r.id);
    if (tir::typeBytes(a.elem) == 2)
      line(depth, fmt::format("tylo::set_{}({}, {}, {});", a.elem == Type::F16 ? "f16" : "bf16", expr_.arrayName(r.id),
                              r.index, value));
    else
      line(depth, fmt::format("{}[{}] = {};", expr_.arrayName(r.id), r.index, value));
  }

  // The raw bits of a register, as a 16- or 32-bit unsigned value.
  std::string regBits(const tir::Reg& r, Type t) {
    std::string v = expr_.reg(r);
    switch (t) {
      case Type::F32: return fmt::format("__float_as_uint({})", v);
      case Type::F16: return fmt::format("__half_as_ushort({})", v);
      case Type::BF16: return fmt::format("__bfloat16_as_ushort({})", v);
      default: return fmt::format("static_cast<uint32_t>({})", v);
    }
  }

  std::string fromBits(const std::string& bits, Type t) {
    switch (t) {
      case Type::F32: return fmt::format("__uint_as_float({})", bits);
      case Type::F16: return fmt::format("__ushort_as_half(static_cast<unsigned short>({}))", bits);
      case Type::BF16: return fmt::format("__ushort_as_bfloat16(static_cast<unsigned short>({}))", bits);
      default: return fmt::format("static_cast<{}>({})", cppType(t), bits);
    }
  }

  void load(int depth, const tir::Load& n) {
    int eb = tir::typeBytes(n.type);
    int bytes = eb * static_cast<int>(n.dst.size());
    std::string ptr = pointer(n.src);
    int d = depth;
    if (!tir::isTrue(n.pred)) {
      line(depth, fmt::format("if ({}) {{", expr_.print(n.pred)));
      d = depth + 1;
    }
    if (n.dst.size() == 1) {
      assignReg(d, n.dst[0], fmt::format("*({})", ptr));
    } else {
      line(d, fmt::format("{{ const {} tylo_v = *reinterpret_cast<const {}*>({});", vectorType(bytes),
                          vectorType(bytes), ptr));
      std::vector<std::string> words = wordsOf("tylo_v", bytes);
      for (size_t i = 0; i < n.dst.size(); ++i) {
        // An element of 4 bytes is a word, one of 8 two words (low first), and one of 2 half a word.
        std::string bits = eb == 4   ? words[i]
                           : eb == 8 ? fmt::format("((static_cast<uint64_t>({}) << 32) | {})", words[2 * i + 1], words[2 * i])
                                     : fmt::format("({} >> {})", words[i * eb / 4], (i * eb % 4) * 8);
        assignReg(d + 1, n.dst[i], fromBits(bits, n.type));
      }
      line(d, "}");
    }
    if (d != depth) line(depth, "}");
  }

  static std::vector<std::string> wordsOf(const std::string& v, int bytes) {
    if (bytes == 4) return {v};
    if (bytes == 8) return {v + ".x", v + ".y"};
    return {v + ".x", v + ".y", v + ".z", v + ".w"};
  }

  void store(int depth, const tir::Store& n) {
    int eb = tir::typeBytes(n.type);
    int bytes = eb * static_cast<int>(n.src.size());
    std::string ptr = pointer(n.dst);
    int d = depth;
    if (!tir::isTrue(n.pred)) {
      line(depth, fmt::format("if ({}) {{", expr_.print(n.pred)));
      d = depth + 1;
    }
    if (n.src.size() == 1) {
      line(d, fmt::format("*({}) = {};", ptr, expr_.reg(n.src[0])));
    } else {
      std::vector<std::string> words;
      // An element of 8 bytes is two words, low first; smaller ones share a word.
      if (eb == 8) {
        for (const tir::Reg& r : n.src) {
          const std::string v = fmt::format("static_cast<uint64_t>({})", expr_.reg(r));
          words.push_back(fmt::format("static_cast<uint32_t>({})", v));
          words.push_back(fmt::format("static_cast<uint32_t>({} >> 32)", v));
        }
      } else {
        const int perWord = 4 / eb;
        for (size_t w = 0; w < n.src.size() / perWord; ++w) {
          std::string word;
          for (int j = 0; j < perWord; ++j) {
            std::string bits = regBits(n.src[w * perWord + j], n.type);
            if (perWord > 1) bits = fmt::format("(static_cast<uint32_t>({}) << {})", bits, j * eb * 8);
            word += (j ? " | " : "") + bits;
          }
          words.push_back(word);
        }
      }
      std::string init;
      for (size_t i = 0; i < words.size(); ++i) init += (i ? ", " : "") + words[i];
      if (bytes == 4)
        line(d, fmt::format("*reinterpret_cast<uint32_t*>({}) = {};", ptr, init));
      else
        line(d, fmt::format("*reinterpret_cast<{}*>({}) = make_{}({});", vectorType(bytes), ptr, vectorType(bytes),
                            init));
    }
    if (d != depth) line(depth, "}");
  }

  std::string wordRef(const tir::Reg& r) {
    return fmt::format("{}[{}]", expr_.arrayName(r.id), r.index);
  }

  // The 32-bit shared address of an ldmatrix, stmatrix or cp.async. Its offset's terms that
  // hold no variable a loop changes (constants, parameters, thread and block ids, named
  // invariants) are printed apart, as the address `base + fixed`, from the rest, added in
  // bytes: `fixed` is then one value for the whole loop, and each access in a loop costs one
  // add of the moving part (a pipeline stage's offset) to it.
  std::string sharedAddress(const tir::MemRef& m) {
    auto [fixed, moving] = splitOffset(m.offset);
    if (!fixed || !moving) return fmt::format("tylo::smem_addr({})", pointer(m));
    const tir::Buffer& b = k_.buffers.at(m.buffer);
    return fmt::format("(tylo::smem_addr({} + {}) + static_cast<uint32_t>({}))", expr_.bufferName(m.buffer),
                       expr_.print(fixed),
                       expr_.print(inBytes(moving, tir::typeBytes(b.elem))));
  }

  // offset * elemBytes, folding a constant factor of the offset: `stage * 8192`, not
  // `(stage * 4096) * 2`.
  static tir::ExprRef inBytes(const tir::ExprRef& offset, int64_t elemBytes) {
    int64_t c = 0;
    if (offset->kind == tir::ExprKind::Binary && offset->bin == tir::BinOp::Mul && tir::isIntConst(offset->args[1], &c))
      return tir::mul(offset->args[0], tir::intConst(c * elemBytes, offset->type));
    return tir::mul(offset, tir::intConst(elemBytes, offset->type));
  }

  // The terms of an offset that no loop changes, and the others (either may be null).
  std::pair<tir::ExprRef, tir::ExprRef> splitOffset(const tir::ExprRef& offset) const {
    std::vector<tir::ExprRef> terms;
    addTerms(offset, terms);
    tir::ExprRef fixed, moving;
    for (const tir::ExprRef& t : terms) {
      tir::ExprRef& part = loopInvariant(*t) ? fixed : moving;
      part = part ? tir::add(part, t) : t;
    }
    return {fixed, moving};
  }

  static void addTerms(const tir::ExprRef& e, std::vector<tir::ExprRef>& out) {
    if (e->kind == tir::ExprKind::Binary && e->bin == tir::BinOp::Add) {
      addTerms(e->args[0], out);
      addTerms(e->args[1], out);
      return;
    }
    out.push_back(e);
  }

  // Whether no loop around the statement being printed changes `e`: it reads no register
  // array, and no variable that an enclosing loop assigns (named invariants, although some
  // are defined inside a loop, have the same value in every iteration).
  bool loopInvariant(const tir::Expr& e) const {
    if (e.kind == tir::ExprKind::Elem) return false;
    if (e.kind == tir::ExprKind::VarRef && !k_.vars.at(e.id).single && loopWritten_.at(e.id)) return false;
    for (const tir::ExprRef& a : e.args)
      if (a && !loopInvariant(*a)) return false;
    return true;
  }

  void stmt(const tir::Stmt& s, int depth) {
    mark(s);
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, tir::Assign>) {
            assignReg(depth, n.dst, expr_.print(n.value));
          } else if constexpr (std::is_same_v<T, tir::Load>) {
            load(depth, n);
          } else if constexpr (std::is_same_v<T, tir::Store>) {
            store(depth, n);
          } else if constexpr (std::is_same_v<T, tir::If>) {
            line(depth, fmt::format("if ({}) {{", expr_.print(n.cond)));
            block(n.then, depth + 1);
            if (!n.otherwise.empty()) {
              line(depth, "} else {");
              block(n.otherwise, depth + 1);
            }
            line(depth, "}");
          } else if constexpr (std::is_same_v<T, tir::For>) {
            if (n.unroll) line(depth, "#pragma unroll");
            const std::string& v = expr_.varName(n.var);
            // The step saturates, so that a loop whose end lies near the largest value ends.
            const std::string step = expr_.print(n.step);
            const std::string next = expr_.stepMayOverflow(n) ? fmt::format("{} = tylo::loop_next({}, {})", v, v, step)
                                                              : fmt::format("{} += {}", v, step);
            line(depth, fmt::format("for ({} = {}; {} < {}; {}) {{", v, expr_.print(n.begin), v, expr_.print(n.end), next));
            const std::vector<bool> outer = loopWritten_;
            tir::markWrittenVars(n.body, loopWritten_);
            loopWritten_[n.var] = true;
            block(n.body, depth + 1);
            loopWritten_ = outer;
            line(depth, "}");
          } else if constexpr (std::is_same_v<T, tir::Barrier>) {
            line(depth, n.cluster        ? std::string("tylo::cluster_barrier();")
                          : n.threads > 0 ? fmt::format("tylo::named_barrier<{}, {}>();", n.id, n.threads)
                                          : std::string("__syncthreads();"));
          } else if constexpr (std::is_same_v<T, tir::CpAsync>) {
            std::string src = n.srcBytes ? expr_.print(n.srcBytes) : std::to_string(n.bytes);
            // With a source size the address may lie outside the tensor (nothing is read).
            std::string from = n.srcBytes ? elementAddress(n.src) : pointer(n.src);
            line(depth, fmt::format("tylo::cp_async_{}({}, {}, {});", n.bytes, sharedAddress(n.dst), from, src));
          } else if constexpr (std::is_same_v<T, tir::CpAsyncCommit>) {
            line(depth, "tylo::cp_async_commit();");
          } else if constexpr (std::is_same_v<T, tir::CpAsyncWait>) {
            line(depth, fmt::format("tylo::cp_async_wait<{}>();", n.n));
          } else if constexpr (std::is_same_v<T, tir::Ldmatrix>) {
            std::string regs;
            for (const tir::Reg& r : n.dst) regs += ", " + wordRef(r);
            line(depth, fmt::format("tylo::ldmatrix_x{}{}({}{});", n.num, n.trans ? "_trans" : "", sharedAddress(n.addr),
                                    regs));
          } else if constexpr (std::is_same_v<T, tir::Stmatrix>) {
            std::string regs;
            for (const tir::Reg& r : n.src) regs += ", " + wordRef(r);
            line(depth, fmt::format("tylo::stmatrix_x{}{}({}{});", n.num, n.trans ? "_trans" : "", sharedAddress(n.addr),
                                    regs));
          } else if constexpr (std::is_same_v<T, tir::Shfl>) {
            line(depth, fmt::format("{} = tylo::shfl_bfly({}, {});", expr_.reg(n.dst), expr_.print(n.value), n.laneMask));
          } else if constexpr (std::is_same_v<T, tir::Mma>) {
            auto list = [&](const std::vector<tir::Reg>& rs) {
              std::string s;
              for (const tir::Reg& r : rs) s += ", " + wordRef(r);
              return s;
            };
            line(depth, fmt::format("tylo::mma_m16n8k16_{}(/*d*/{}, /*a*/{}, /*b*/{}, /*c*/{});",
                                    n.ab == Type::F16 ? "f16" : "bf16", list(n.d).substr(2), list(n.a).substr(2),
                                    list(n.b).substr(2), list(n.c).substr(2)));
          } else if constexpr (std::is_same_v<T, tir::Wgmma>) {
            std::string regs, a;
            for (const tir::Reg& r : n.d) regs += ", " + expr_.reg(r);
            for (const tir::Reg& r : n.a) a += wordRef(r) + ", ";
            if (n.a.empty()) a = fmt::format("static_cast<uint64_t>({}), ", expr_.print(n.descA));
            line(depth, fmt::format("{}({}static_cast<uint64_t>({}), {}{});", wgmmaFunctionName(n), a,
                                    expr_.print(n.descB),
                                    n.accumulate ? fmt::format("static_cast<int32_t>({})", expr_.print(n.accumulate))
                                                 : "1",
                                    regs));
          } else if constexpr (std::is_same_v<T, tir::MbarrierInit>) {
            line(depth, fmt::format("tylo::mbarrier_init({}, static_cast<uint32_t>({}));", sharedAddress(n.bar),
                                    expr_.print(n.count)));
          } else if constexpr (std::is_same_v<T, tir::MbarrierArrive>) {
            const std::string cta =
                n.cta ? fmt::format(", static_cast<uint32_t>({})", expr_.print(n.cta)) : std::string();
            const char* remote = n.cta ? "_cluster" : "";
            if (n.expectTx)
              line(depth, fmt::format("tylo::mbarrier_arrive_expect_tx{}({}, static_cast<uint32_t>({}){});", remote,
                                      sharedAddress(n.bar), expr_.print(n.expectTx), cta));
            else
              line(depth, fmt::format("tylo::mbarrier_arrive{}({}{});", remote, sharedAddress(n.bar), cta));
          } else if constexpr (std::is_same_v<T, tir::MbarrierWait>) {
            line(depth, fmt::format("tylo::mbarrier_wait({}, static_cast<uint32_t>({}));", sharedAddress(n.bar),
                                    expr_.print(n.parity)));
          } else if constexpr (std::is_same_v<T, tir::TmaLoad>) {
            std::string coords;
            for (const tir::ExprRef& c : n.coords) coords += ", static_cast<int32_t>(" + expr_.print(c) + ")";
            if (n.multicast)
              line(depth, fmt::format("tylo::tma_load_{}d_multicast({}, &{}{}, {}, static_cast<uint16_t>({}));",
                                      n.coords.size(), sharedAddress(n.dst), tensorMapName(n.map), coords,
                                      sharedAddress(n.bar), expr_.print(n.multicast)));
            else
              line(depth, fmt::format("tylo::tma_load_{}d({}, &{}{}, {});", n.coords.size(), sharedAddress(n.dst),
                                      tensorMapName(n.map), coords, sharedAddress(n.bar)));
          } else if constexpr (std::is_same_v<T, tir::TmaStore>) {
            std::string coords;
            for (const tir::ExprRef& c : n.coords) coords += ", static_cast<int32_t>(" + expr_.print(c) + ")";
            line(depth, fmt::format("tylo::tma_store_{}d(&{}{}, {});", n.coords.size(), tensorMapName(n.map), coords,
                                    sharedAddress(n.src)));
          } else if constexpr (std::is_same_v<T, tir::BulkCommit>) {
            line(depth, "tylo::bulk_commit_group();");
          } else if constexpr (std::is_same_v<T, tir::BulkWait>) {
            line(depth, fmt::format("tylo::bulk_wait_group_read<{}>();", n.n));
          } else if constexpr (std::is_same_v<T, tir::FenceProxyAsync>) {
            line(depth, "tylo::fence_proxy_async_shared();");
          } else if constexpr (std::is_same_v<T, tir::FenceMbarrierInit>) {
            line(depth, "tylo::fence_mbarrier_init();");
          } else if constexpr (std::is_same_v<T, tir::WgmmaFence>) {
            line(depth, "tylo::wgmma_fence();");
          } else if constexpr (std::is_same_v<T, tir::WgmmaCommit>) {
            line(depth, "tylo::wgmma_commit_group();");
          } else if constexpr (std::is_same_v<T, tir::WgmmaWait>) {
            line(depth, fmt::format("tylo::wgmma_wait_group<{}>();", n.n));
          } else if constexpr (std::is_same_v<T, tir::SetMaxNReg>) {
            line(depth, fmt::format("tylo::setmaxnreg_{}<{}>();", n.increase ? "inc" : "dec", n.count));
          } else if constexpr (std::is_same_v<T, tir::Check>) {
            line(depth, "// " + n.message);
            line(depth, fmt::format("tylo::device_check({});", expr_.print(n.cond)));
          } else if constexpr (std::is_same_v<T, tir::Cooperative>) {
            // Read by the convergence check only; nothing to generate.
          } else {
            line(depth, "// " + n.text);
          }
        },
        s.node);
  }

  void block(const tir::Block& b, int depth) {
    for (const tir::Stmt& s : b) stmt(s, depth);
  }

  const tir::Kernel& k_;
  const EmitOptions& o_;
  ExprPrinter expr_;
  std::string out_;
  // The variables that the loops around the statement being printed assign.
  std::vector<bool> loopWritten_ = std::vector<bool>(k_.vars.size());
  uint32_t lastLine_ = 0;
};

}  // namespace

std::string emitKernel(const tir::Kernel& k, const EmitOptions& options) { return KernelPrinter(k, options).run(); }

}  // namespace tyl::cuda
