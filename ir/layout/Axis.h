// The registry of physical axes a layout can map onto.
//
// Thread axes name who holds an element (lane, warp, thread, ...), block axes name the
// CTA, and memory axes name where it is stored: `m` is a register slot for local
// tensors and an element offset for global and shared ones.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tyl::layout {

enum class AxisKind : uint8_t { Thread, Block, Memory };

// The order here is the order axes are printed in.
enum class Axis : uint8_t {
  laneid,
  warpid,
  tx,
  wgid,
  tid_in_wg,
  wid_in_wg,
  bx,
  by,
  bz,
  m,
  TLane,
  TCol,
};

inline constexpr int kAxisCount = static_cast<int>(Axis::TCol) + 1;

std::string_view axisName(Axis axis);
AxisKind axisKind(Axis axis);
std::optional<Axis> axisFromName(std::string_view name);
std::span<const Axis> allAxes();

inline bool isThreadAxis(Axis a) { return axisKind(a) == AxisKind::Thread; }
inline bool isMemoryAxis(Axis a) { return axisKind(a) == AxisKind::Memory; }

}  // namespace tyl::layout
