#include "ir/layout/Axis.h"

#include <array>

namespace tyl::layout {
namespace {

struct AxisInfo {
  Axis axis;
  std::string_view name;
  AxisKind kind;
};

constexpr std::array<AxisInfo, kAxisCount> kAxes{{
    {Axis::laneid, "laneid", AxisKind::Thread},
    {Axis::warpid, "warpid", AxisKind::Thread},
    {Axis::tx, "tx", AxisKind::Thread},
    {Axis::wgid, "wgid", AxisKind::Thread},
    {Axis::tid_in_wg, "tid_in_wg", AxisKind::Thread},
    {Axis::wid_in_wg, "wid_in_wg", AxisKind::Thread},
    {Axis::bx, "bx", AxisKind::Block},
    {Axis::by, "by", AxisKind::Block},
    {Axis::bz, "bz", AxisKind::Block},
    {Axis::m, "m", AxisKind::Memory},
    {Axis::TLane, "TLane", AxisKind::Memory},
    {Axis::TCol, "TCol", AxisKind::Memory},
}};

constexpr bool tableMatchesEnum() {
  for (int i = 0; i < kAxisCount; ++i)
    if (static_cast<int>(kAxes[i].axis) != i) return false;
  return true;
}
static_assert(tableMatchesEnum(), "axis table must follow the Axis enum order");

constexpr std::array<Axis, kAxisCount> kAxisList = [] {
  std::array<Axis, kAxisCount> list{};
  for (int i = 0; i < kAxisCount; ++i) list[i] = kAxes[i].axis;
  return list;
}();

}  // namespace

std::string_view axisName(Axis axis) { return kAxes[static_cast<int>(axis)].name; }

AxisKind axisKind(Axis axis) { return kAxes[static_cast<int>(axis)].kind; }

std::optional<Axis> axisFromName(std::string_view name) {
  for (const AxisInfo& info : kAxes)
    if (info.name == name) return info.axis;
  return std::nullopt;
}

std::span<const Axis> allAxes() { return kAxisList; }

}  // namespace tyl::layout
