// Internals of lowering, shared by Lower*.cpp.
#pragma once

#include <functional>
#include <map>

#include "ir/lower/Addressing.h"
#include "ir/lower/Affine.h"
#include "ir/lower/Lower.h"
#include "ir/lower/Ownership.h"
#include "ir/thread/Builder.h"

namespace tyl::lower {

class KernelLowering {
 public:
  KernelLowering(const tile::Kernel& tk, DiagnosticEngine& diags) : tk_(tk), k_(tk.skeleton), diags_(diags) {}

  std::optional<tir::Kernel> run();

 private:
  // LowerKernel.cpp
  void block(const tile::Block& b);
  void stmt(const tile::Stmt& s);
  void emit(SourceRange loc, auto node) { out_.back()->push_back(tir::Stmt{loc, std::move(node)}); }
  tir::MemRef memRef(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord);
  const FragmentMap* fragment(uint32_t tensor, SourceRange where);
  void addLaunchCheck(tir::LaunchCheck check);

  // LowerFragment.cpp
  tir::ExprRef fragValue(const tile::FragRef& f, int64_t slot, tir::Type want);
  void fragAssign(SourceRange loc, uint32_t dst, const tile::FragRef& value);

  // LowerCopy.cpp
  void copy(SourceRange loc, const tile::Copy& c);
  void copyFragmentMemory(SourceRange loc, const tile::Copy& c, bool toMemory);
  void copyMemoryMemory(SourceRange loc, const tile::Copy& c);
  int chooseVectorWidth(SourceRange loc, const tile::View& mem, const tile::Tensor& frag, const FragmentMap& fm,
                        std::string& why);

  const tile::Kernel& tk_;
  tir::Kernel k_;
  DiagnosticEngine& diags_;
  std::vector<tir::Block*> out_;
  std::map<uint32_t, FragmentMap> fragments_;
  int temps_ = 0;
};

}  // namespace tyl::lower
