// The compile-time origins a shared view can take (LowerImpl.h, TileOrigins).
#include <algorithm>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TileOrigins tileOrigins(const tile::View& v, const std::vector<int64_t>& shape) {
  TileOrigins r;
  std::vector<int64_t> origin(shape.size(), 0);
  std::vector<size_t> varying;
  for (size_t d = 0; d < origin.size(); ++d) {
    if (tir::isIntConst(v.origin[d], &origin[d])) continue;
    r.varies = true;
    if (std::find(v.dims.begin(), v.dims.end(), static_cast<int>(d)) != v.dims.end()) {
      r.runtimeKeptDim = d;
      return r;
    }
    varying.push_back(d);
    r.count *= shape[d];  // shared tiles are small: no overflow
  }
  if (r.count > TileOrigins::kMaxTileOrigins) return r;
  for (int64_t c = 0; c < r.count; ++c) {
    int64_t rest = c;
    for (size_t d : varying) {
      origin[d] = rest % shape[d];
      rest /= shape[d];
    }
    r.origins.push_back(origin);
  }
  return r;
}

}  // namespace tyl::lower
