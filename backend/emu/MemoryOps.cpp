// Loads, stores and cp.async: address computation, bounds and alignment checks, and the
// shadow-state findings of each access.
#include <fmt/format.h>

#include <cstring>

#include "backend/emu/Interpreter.h"
#include "base/InternalError.h"

namespace tyl::emu {
namespace {

const tir::Buffer& bufferOf(const tir::Kernel& k, const tir::MemRef& m) {
  if (m.buffer >= k.buffers.size()) TYL_UNREACHABLE("{}", "emulator: buffer id out of range");
  return k.buffers[m.buffer];
}

void checkAccessSize(int bytes) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16)
    TYL_UNREACHABLE("{}", 
        fmt::format("emulator: a memory access of {} bytes (must be 1, 2, 4, 8 or 16)", bytes));
}

// The element size of the registers of a load or store, which must match its type's.
int registerBytes(const RegisterFile& regs, const std::vector<tir::Reg>& list, tir::Type type) {
  if (list.empty()) TYL_UNREACHABLE("{}", "emulator: a load or store without registers");
  for (const tir::Reg& r : list)
    if (tir::typeBytes(regs.type(r)) != tir::typeBytes(type))
      TYL_UNREACHABLE("{}", fmt::format("emulator: a {} access through a {} register", tir::typeName(type),
                                         tir::typeName(regs.type(r))));
  return tir::typeBytes(type);
}

bool isAsyncCopy(const tir::Stmt* s) { return s && std::holds_alternative<tir::CpAsync>(s->node); }
bool isTmaStore(const tir::Stmt* s) { return s && std::holds_alternative<tir::TmaStore>(s->node); }
bool isWgmma(const tir::Stmt* s) { return s && std::holds_alternative<tir::Wgmma>(s->node); }

}  // namespace

std::string Interpreter::where(const tir::MemRef& m, const Place& p) const {
  const tir::Buffer& b = bufferOf(ctx_.kernel, m);
  if (p.shared)
    return fmt::format("shared byte {} (byte {} of '{}')", p.byte, p.byte - b.sharedOffset, b.name);
  return fmt::format("byte {} of global buffer '{}'", p.byte, b.name);
}

// Resolves lane `lane`'s access of `bytes` bytes at element `elemOffset` of `m`. Reports
// misalignment (to `align`) and out-of-bounds accesses; false means the access must not
// happen (it would fault on the GPU, or touch memory the emulator does not have).
bool Interpreter::place(const Warp& w, const tir::MemRef& m, int64_t elemOffset, int bytes, int align,
                        int lane, const char* verb, Place* out) {
  const tir::Buffer& b = bufferOf(ctx_.kernel, m);
  auto outOfBounds = [&](const std::string& what) {
    report(FindingKind::OutOfBounds, w, lane,
           fmt::format("out-of-bounds {} of {} bytes at element {} of '{}': {} (by {})", verb, bytes,
                       elemOffset, b.name, what, describe(threadRef(w, lane))));
    return false;
  };
  int64_t rel = 0, byte = 0;
  bool overflow = __builtin_mul_overflow(elemOffset, int64_t{tir::typeBytes(b.elem)}, &rel);
  if (b.space == tir::Space::Global) {
    if (b.param < 0 || static_cast<size_t>(b.param) >= ctx_.pointers.size() ||
        ctx_.pointers[b.param].buffer < 0)
      TYL_UNREACHABLE("{}", "emulator: global buffer '" + b.name + "' has no pointer parameter");
    const PointerBinding& ptr = ctx_.pointers[b.param];
    int64_t size = ctx_.global.size(ptr.buffer);
    if (overflow || __builtin_add_overflow(ptr.offset, rel, &byte))
      return outOfBounds("the address overflows");
    if (byte < 0 || byte > size - bytes)
      return outOfBounds(fmt::format("byte {} of a {}-byte buffer", byte, size));
    *out = Place{false, ptr.buffer, byte};
  } else {
    int64_t size = shared().size();
    if (overflow || __builtin_add_overflow(b.sharedOffset, rel, &byte))
      return outOfBounds("the address overflows");
    if (byte < 0 || byte > size - bytes)
      return outOfBounds(fmt::format("shared byte {} of the block's {} bytes", byte, size));
    // Still inside the block's shared memory, but outside the allocation: another buffer's
    // bytes. Worth reporting; the access itself is harmless to the emulator.
    if (b.sharedBytes > 0 && (rel < 0 || rel > b.sharedBytes - bytes))
      outOfBounds(fmt::format("shared byte {}, outside the buffer's bytes [{}, {})", byte, b.sharedOffset,
                              b.sharedOffset + b.sharedBytes));
    *out = Place{true, -1, byte};
  }
  if (out->byte % align != 0)
    report(FindingKind::Misaligned, w, lane,
           fmt::format("misaligned {}: {} is not a multiple of {} (by {})", verb, where(m, *out), align,
                       describe(threadRef(w, lane))));
  return true;
}

void Interpreter::readBytes(const Warp& w, const tir::MemRef& m, const Place& p, int n, int lane,
                            std::byte* out) {
  if (p.shared) {
    ctx_.stats.sharedBytesRead += n;
    reportShared(w, shared().read(p.byte, n, site(w, lane), out), m,
                 lane, false);
    return;
  }
  ctx_.stats.globalBytesRead += n;
  if (std::optional<int64_t> unwritten = ctx_.global.read(p.buffer, p.byte, n, out))
    report(FindingKind::UninitializedRead, w, lane,
           fmt::format("read of never-written memory: {} (by {})",
                       where(m, Place{false, p.buffer, *unwritten}), describe(threadRef(w, lane))));
}

void Interpreter::writeShared(const Warp& w, const tir::MemRef& m, SharedMemory& to, int64_t byte, int n, int lane,
                              const std::byte* in) {
  ctx_.stats.sharedBytesWritten += n;
  reportShared(w, to.write(byte, n, site(w, lane), in), m, lane, true);
}

void Interpreter::writeBytes(const Warp& w, const tir::MemRef& m, const Place& p, int n, int lane,
                             const std::byte* in) {
  if (p.shared) return writeShared(w, m, shared(), p.byte, n, lane, in);
  ctx_.stats.globalBytesWritten += n;
  ctx_.global.write(p.buffer, p.byte, n, in);
}

void Interpreter::reportShared(const Warp& w, const SharedCheck& check, const tir::MemRef& m, int lane,
                               bool writing) {
  if (!check.uninit && !check.pending && !check.race) return;  // the common case: nothing to format
  std::string me = describe(threadRef(w, lane));
  auto at = [&](int64_t byte) { return where(m, Place{true, -1, byte}); };
  if (check.uninit)
    report(FindingKind::UninitializedRead, w, lane,
           fmt::format("read of never-written memory: {} (by {})", at(*check.uninit), me));
  if (check.pending) {
    const Conflict& c = *check.pending;
    Finding f = Finding::make(
        FindingKind::AsyncReadBeforeWait,
        fmt::format("{} reads {} before a cp.async.wait_group covers the cp.async that writes it", me,
                    at(c.byte)));
    f.loc = stmt_->loc;
    f.thread = threadRef(w, lane);
    f.otherLoc = c.other.stmt->loc;
    f.otherThread = threadRef(c.other.thread);
    f.otherNote =
        fmt::format("the cp.async, issued by {}, may still be in flight", describeInBlock(c.other.thread));
    ctx_.findings.add(std::move(f), stmt_, c.other.stmt);
  }
  if (check.race) {
    const Conflict& c = *check.race;
    bool async = isAsyncCopy(c.other.stmt);
    std::string other = describeInBlock(c.other.thread);
    std::string theirs = async                      ? "copies into with a cp.async"
                         : isTmaStore(c.other.stmt) ? "may still be reading with a TMA store (no wait_stores of its thread, "
                                                      "then a barrier, orders this access after it)"
                         : isWgmma(c.other.stmt)    ? "may still be reading with a wgmma (no wait_mmas of its warpgroup, "
                                                      "then a barrier or mbarrier, orders this access after it)"
                         : c.otherWrote             ? "wrote"
                                                    : "read";
    const bool inFlight = isTmaStore(c.other.stmt) || isWgmma(c.other.stmt);  // its read ends at a wait
    Finding f =
        Finding::make(FindingKind::SharedRace,
                      fmt::format("shared-memory race: {} {} {}, which {} {}{}", me, writing ? "writes" : "reads",
                                  at(c.byte), other, theirs, inFlight ? "" : " with no barrier in between"));
    f.loc = stmt_->loc;
    f.thread = threadRef(w, lane);
    f.otherLoc = c.other.stmt->loc;
    f.otherThread = threadRef(c.other.thread);
    f.otherNote = async      ? fmt::format("the cp.async by {}, in flight or landed since the last barrier", other)
                  : inFlight ? fmt::format("issued by {}, it reads until a wait retires its group", other)
                             : fmt::format("the conflicting {} by {}", c.otherWrote ? "write" : "read", other);
    ctx_.findings.add(std::move(f), stmt_, c.other.stmt);
  }
}

void Interpreter::execLoad(Warp& w, const tir::Load& ld, Mask mask) {
  int elem = registerBytes(w.regs, ld.dst, ld.type);
  int n = elem * static_cast<int>(ld.dst.size());
  checkAccessSize(n);
  Mask on = predicate(w, ld.pred, mask);
  if (!on) return;
  Lanes offsets = eval(w, ld.src.offset, on);
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(on, l)) continue;
    std::array<std::byte, 16> data{};
    Place p;
    if (place(w, ld.src, static_cast<int64_t>(offsets[l]), n, n, l, "read", &p))
      readBytes(w, ld.src, p, n, l, data.data());
    for (size_t i = 0; i < ld.dst.size(); ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, data.data() + i * elem, elem);
      w.regs.writeLane(ld.dst[i], l, canonical(w.regs.type(ld.dst[i]), bits));
    }
  }
}

void Interpreter::execStore(Warp& w, const tir::Store& st, Mask mask) {
  int elem = registerBytes(w.regs, st.src, st.type);
  int n = elem * static_cast<int>(st.src.size());
  checkAccessSize(n);
  Mask on = predicate(w, st.pred, mask);
  if (!on) return;
  Lanes offsets = eval(w, st.dst.offset, on);
  for (const tir::Reg& r : st.src)
    if (Mask unwritten = on & ~w.regs.defined(r)) {
      reportUnwritten(w, unwritten, r, "the value stored");
      break;
    }
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(on, l)) continue;
    std::array<std::byte, 16> data{};
    for (size_t i = 0; i < st.src.size(); ++i) {
      uint64_t bits = w.regs.readLane(st.src[i], l);
      std::memcpy(data.data() + i * elem, &bits, elem);
    }
    Place p;
    if (place(w, st.dst, static_cast<int64_t>(offsets[l]), n, n, l, "write", &p))
      writeBytes(w, st.dst, p, n, l, data.data());
  }
}

void Interpreter::execCpAsync(Warp& w, const tir::CpAsync& cp, Mask mask) {
  if (cp.bytes != 4 && cp.bytes != 8 && cp.bytes != 16)
    TYL_UNREACHABLE("{}", fmt::format("emulator: cp.async of {} bytes (must be 4, 8 or 16)", cp.bytes));
  if (bufferOf(ctx_.kernel, cp.dst).space != tir::Space::Shared ||
      bufferOf(ctx_.kernel, cp.src).space != tir::Space::Global)
    TYL_UNREACHABLE("{}", "emulator: cp.async must copy from global to shared memory");
  if (!mask) return;
  Lanes dst = eval(w, cp.dst.offset, mask), src = eval(w, cp.src.offset, mask);
  Lanes srcBytes;
  if (cp.srcBytes)
    srcBytes = eval(w, cp.srcBytes, mask);
  else
    srcBytes.fill(static_cast<uint64_t>(cp.bytes));
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    int64_t srcCount = static_cast<int64_t>(srcBytes[l]);
    if (srcCount < 0 || srcCount > cp.bytes) {
      report(FindingKind::InvalidOperand, w, l,
             fmt::format("cp.async source size {} is outside [0, {}] (by {})", srcCount, cp.bytes,
                         describe(threadRef(w, l))));
      srcCount = srcCount < 0 ? 0 : cp.bytes;
    }
    AsyncCopy copy;
    Place d;
    if (!place(w, cp.dst, static_cast<int64_t>(dst[l]), cp.bytes, cp.bytes, l, "cp.async write", &d))
      continue;
    // A source size of 0 reads nothing: the usual way to zero-fill past the end of a tensor,
    // whatever the (possibly out-of-bounds) source address.
    Place s;
    int n = static_cast<int>(srcCount);
    if (n > 0 && place(w, cp.src, static_cast<int64_t>(src[l]), n, cp.bytes, l, "cp.async read", &s))
      readBytes(w, cp.src, s, n, l, copy.data.data());
    copy.dst = d.byte;
    copy.bytes = cp.bytes;
    copy.stmt = stmt_;
    copy.id = ctx_.nextCopyId++;
    Site who = site(w, l);
    reportShared(w, shared().beginAsync(d.byte, cp.bytes, who, copy.id), cp.dst, l, true);
    block_.async[w.thread(l)].open.push_back(copy);
  }
}

void Interpreter::execCommit(Warp& w, Mask mask) {
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    AsyncGroups& g = block_.async[w.thread(l)];
    g.committed.push_back(std::move(g.open));
    g.open.clear();
  }
}

void Interpreter::execWait(Warp& w, const tir::CpAsyncWait& wait, Mask mask) {
  if (wait.n < 0) TYL_UNREACHABLE("{}", "emulator: cp.async.wait_group with a negative count");
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    AsyncGroups& g = block_.async[w.thread(l)];
    while (g.committed.size() > static_cast<size_t>(wait.n)) {
      landGroup(w.thread(l), g.committed.front());
      g.committed.pop_front();
    }
  }
}

void Interpreter::landGroup(int64_t thread, std::vector<AsyncCopy>& group) {
  for (const AsyncCopy& c : group) {
    shared().land(c.dst, c.bytes, Site{c.stmt, static_cast<int32_t>(block_.threadBase + thread)}, c.id, c.data.data());
    ctx_.stats.sharedBytesWritten += c.bytes;
    ctx_.stats.asyncBytesLanded += c.bytes;
  }
  group.clear();
}

}  // namespace tyl::emu
