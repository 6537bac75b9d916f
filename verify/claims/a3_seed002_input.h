// Seed 002's embedding (torch.manual_seed(123); torch.randn(2, 3, 4)), when
// libtorch is part of the build and can be loaded; empty values otherwise.
#pragma once

#include <string>
#include <vector>

namespace normcheck::claims {

struct Seed002Input {
  std::vector<float> values;  // 24 values, (2, 3, 4) row-major; empty without libtorch
  std::string generator;      // "libtorch 2.x.y"
};

Seed002Input seed002_input();

}  // namespace normcheck::claims
