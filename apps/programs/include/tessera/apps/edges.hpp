#pragma once
// tessera-edges's program: Canny on Gaussian derivatives (SPEC "Apps"). Pure.
#include <optional>

#include "tessera/program.hpp"

namespace tessera::apps {

struct EdgesOptions {
  double sigma = 1.0;           ///< derivative scale (pixels)
  double low = 0.1;             ///< weak threshold, fraction of the image's largest magnitude
  double high = 0.2;            ///< strong threshold, fraction of the image's largest magnitude
  std::optional<int> radius;    ///< kernel radius override (empty: SPEC's default)
};

/// Outputs "magnitude" (M = sqrt(Lx^2 + Ly^2)) and "edges" (255 on edge pixels, 0
/// elsewhere). Non-maximum suppression keeps a pixel whose M is not below either
/// neighbour along atan2(Ly, Lx) quantised to 0/45/90/135 degrees (ties survive: a
/// ridge two pixels wide keeps both). A survivor with M >= high * max M is an edge; a
/// survivor with M >= low * max M is an edge if 8-connected to an edge through such
/// survivors. Pixels with M = 0 are never edges (a flat image has none).
inline Program edges_program(const EdgesOptions& o) {
  Program p;
  const DImage image = p.input();
  const DImage lx = gaussian(image, o.sigma, 1, 0, o.radius);
  const DImage ly = gaussian(image, o.sigma, 0, 1, o.radius);
  const DImage m = magnitude(lx, ly);
  const Scalar top = max_of(m);
  const DImage survivors = non_max_suppression(m, lx, ly) * (m > 0.0);
  const DImage strong = survivors * (m >= o.high * top);
  const DImage weak = survivors * (m >= o.low * top);
  p.output("magnitude", m);
  p.output("edges", hysteresis(strong, weak) * 255.0);
  return p;
}

}  // namespace tessera::apps
