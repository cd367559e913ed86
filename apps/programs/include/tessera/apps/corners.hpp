#pragma once
// tessera-corners's program: Harris corners (SPEC "Apps"). Pure.
#include <optional>

#include "tessera/program.hpp"

namespace tessera::apps {

struct CornersOptions {
  double sigma = 1.0;          ///< derivative scale S (pixels)
  double rho = 0.0;            ///< integration scale R; 0 means 2 S
  double k = 0.04;             ///< Harris's K
  double threshold = 0.01;     ///< T: corners need H > T * max H
  std::optional<int> radius;   ///< derivative kernel radius override (empty: SPEC's default)
};

/// Outputs "response" (H = (A C - B^2) - K (A + C)^2 with A = Lx^2, B = Lx Ly, C = Ly^2
/// each smoothed by the order-0 kernel at R, default radius) and "corners" (1 where
/// H > T max H and H is a 3x3 local maximum, else 0). Local-maximum tie rule: H must
/// be > its neighbours before it in raster order and >= those after it, so a plateau
/// gives one corner.
inline Program corners_program(const CornersOptions& o) {
  const double rho = o.rho > 0 ? o.rho : 2 * o.sigma;
  Program p;
  const DImage image = p.input();
  const DImage lx = gaussian(image, o.sigma, 1, 0, o.radius);
  const DImage ly = gaussian(image, o.sigma, 0, 1, o.radius);
  const DImage a = gaussian(lx * lx, rho, 0, 0);
  const DImage b = gaussian(lx * ly, rho, 0, 0);
  const DImage c = gaussian(ly * ly, rho, 0, 0);
  const DImage trace = a + c;
  const DImage h = (a * c - b * b) - o.k * (trace * trace);
  p.output("response", h);
  p.output("corners", local_maxima(h) * (h > o.threshold * max_of(h)));
  return p;
}

}  // namespace tessera::apps
