// A readable text form of the tile IR (for --emit tile-ir and tests).
#pragma once

#include <string>

#include "ir/tile/TileIR.h"

namespace tyl::tile {

std::string print(const Module& module);

}  // namespace tyl::tile
