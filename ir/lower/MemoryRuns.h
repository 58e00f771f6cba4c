// Facts about runs of consecutive elements in memory, decided at compile time: is the
// run starting at a view coordinate contiguous and aligned, whatever the run-time parts
// of the view's origin and the tensor's strides? Vector accesses, cp.async and ldmatrix
// rows all need such runs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/lower/Affine.h"
#include "ir/tile/TileIR.h"

namespace tyl::lower {

class MemoryRuns {
 public:
  // The offset of every element of tensors with static layouts (up to the size of any
  // shared-memory tile), shared by every MemoryRuns of the same layout and shape (views at
  // any origin, the copies of a pipeline's stages, a kernel's instantiations): each table is
  // worked out once, a stride at a time.
  class Cache {
   public:
    // Null when the tensor has more elements than are tabulated (2^18), its shape does not
    // match the layout, or its offsets need overflow checks: then each is computed on its own.
    std::shared_ptr<const std::vector<int64_t>> offsets(const layout::Layout& l, const std::vector<int64_t>& shape);

   private:
    struct Entry {
      layout::Layout layout;
      std::vector<int64_t> shape;
      std::shared_ptr<const std::vector<int64_t>> offsets;
    };
    std::vector<Entry> entries_;
  };

  // With a cache, static offsets are shared through it. `divisors` says what is known of the
  // divisibility of the origin's run-time atoms (a loop variable's step).
  MemoryRuns(const tile::Tensor& t, const tile::View& v, Cache* cache = nullptr, const AtomDivisor& divisors = nullptr);

  struct Problem {
    enum class Kind { None, NotContiguous, Misaligned };
    Kind kind = Kind::None;
    std::string message;
    bool ok() const { return kind == Kind::None; }
  };

  // Whether the run of `len` elements starting at `viewCoord` (static, relative to the
  // view) is contiguous and `len`-element aligned in memory, for every value of the origin's
  // run-time part. For tensors with run-time strides, conditions that only the launcher can
  // check are added to `launchConditions` (as "stride % len == 0" on that dimension).
  Problem check(const std::vector<int64_t>& viewCoord, int64_t len,
                std::vector<std::pair<int, int64_t>>* launchConditions) const;

  // The element offset of a static view coordinate with the origin's run-time parts at
  // zero (static layouts only), for bank analysis.
  std::optional<int64_t> staticOffset(const std::vector<int64_t>& viewCoord) const;

  // Static layouts: the run-time parts of the origin that change the layout's pattern (a
  // swizzled dimension moved by less than the swizzle's period) take finitely many values
  // that keep the view inside the tensor; the facts above hold for all of them. Each is a
  // shift of the tensor coordinate, one entry per tensor dimension; the first is no shift.
  const std::vector<std::vector<int64_t>>& shifts() const { return shifts_; }
  // The offset of a view coordinate at one of those shifts (nullopt outside the tensor).
  std::optional<int64_t> offsetAt(const std::vector<int64_t>& viewCoord, size_t shift) const;
  // A shift for messages: ", when the origin of dimension 1 is 16 more" (empty for none).
  std::string shiftDescription(size_t shift) const;

  // Why the run-time parts of the origin cannot be analysed (too many shifts); empty if they can.
  const std::string& originProblem() const { return originProblem_; }

 private:
  const tile::Tensor& t_;
  const tile::View& v_;
  std::vector<int64_t> originConst_;   // constant part of the origin, per tensor dim
  std::vector<int64_t> originDivisor_; // run-time part is a multiple of this (0: none)
  // Static layouts, per tensor dim whose run-time part moves the view without changing the
  // layout's pattern (not enumerated in shifts_): how far each step of originDivisor_ moves
  // every offset, 0 when the view fits at only one place.
  std::vector<int64_t> originStep_;
  std::string originProblem_;          // static layouts: why run-time origins break the analysis
  std::string outside_;                // static layouts: why no run-time origin keeps the view inside
  std::vector<std::vector<int64_t>> shifts_;  // see shifts()
  // The row-major index in the tensor of a view coordinate at a shift (nullopt outside it).
  std::optional<int64_t> flatIndex(const std::vector<int64_t>& viewCoord, size_t shift) const;
  std::optional<int64_t> computeOffset(const std::vector<int64_t>& viewCoord, size_t shift = 0) const;
  Problem checkStatic(const std::vector<int64_t>& viewCoord, int64_t len, size_t shift) const;
  // Static layouts: the constant origin at each shift, and which view dimension each tensor
  // dimension is (-1: indexed away).
  std::vector<std::vector<int64_t>> origins_;
  std::vector<int> viewDim_;
  mutable std::vector<int64_t> scratch_;  // computeOffset's tensor coordinate, without a table
  std::shared_ptr<const std::vector<int64_t>> offsets_;  // of every tensor element (Cache::offsets)
};

}  // namespace tyl::lower
