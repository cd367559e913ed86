// Runs under mpiexec at P = 1..7: every operation of the library, and the edges and
// corners programs, give the same bits on every grid and algorithm as on one rank;
// on the root, each operation agrees with an independent OpenCV computation of the
// same definition (within float rounding), and the detectors find known shapes.
#include "tessera/program.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numbers>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <random>

#include "tessera/apps/corners.hpp"
#include "tessera/apps/edges.hpp"
#include "tessera/apps/gauss.hpp"
#include "tessera/error.hpp"
#include "tessera/pipeline.hpp"
#include "tessera/scheduler/program.hpp"
#include "tessera/session.hpp"
// The world communicator's pending requests (the end-of-run barrier a team leaves).
#include "../../library/src/mpi/comm.hpp"

namespace tessera {
namespace {

int g_argc = 0;
char** g_argv = nullptr;

const Session& session() {
  static Session s(g_argc, g_argv);
  return s;
}

// Broadcast from the root: every rank uses the same image (only the root's is read).
Image random_image(int w, int h, unsigned seed, float lo = 0.0f, float hi = 255.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = u(rng);
  return img;
}

// A bright disc and a bright rectangle on a dark, slightly noisy background: their
// boundaries cross every tile of every grid tried (the image is split at most 7 ways).
Image shapes_image(int w, int h) {
  Image img = random_image(w, h, 5, 0.0f, 2.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double dx = x - 0.45 * w, dy = y - 0.5 * h;
      if (dx * dx + dy * dy < 0.16 * w * h) img.at(x, y) += 100.0f;
      if (x >= 3 && x < w - 3 && y >= h / 2 - 2 && y < h / 2 + 3) img.at(x, y) += 60.0f;  // a bar across
    }
  return img;
}

// The gauss app's program at `sigma` (the library's other defaults).
Program gauss_program_at(double sigma) {
  GaussianOptions g;
  g.sigma = sigma;
  return apps::gauss_program(g);
}

cv::Mat as_mat(const Image& img) {
  return cv::Mat(img.height(), img.width(), CV_32F, const_cast<float*>(img.data())).clone();
}

bool bit_equal(const Image& a, const Image& b) {
  return a.width() == b.width() && a.height() == b.height() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * a.pixel_count()) == 0;
}

// Largest |a - b| relative to the largest |b| (1 if b is all zero).
double relative_error(const cv::Mat& a, const cv::Mat& b) {
  double scale = cv::norm(b, cv::NORM_INF);
  return cv::norm(a, b, cv::NORM_INF) / (scale > 0 ? scale : 1.0);
}

// Runs `program` on every grid of the session's size (tiles at least the program's
// halo) with every algorithm (each algorithm of each phase at least once), checks
// every output and scalar against the one-rank run, and returns the one-rank results.
ProgramResults check_every_grid(const Program& program, const Image& image, const std::string& what) {
  const Session& s = session();
  Plan one;
  one.grid = Grid{1, 1};
  ProgramResults reference = program.run(s, image, one);
  std::vector<Plan> plans;
  for (const Grid& g : grids_for(s.size())) {
    if (!infeasibility(Partition(image.width(), image.height(), g), program.halo()).empty()) continue;
    for (ScatterAlgorithm sa : kScatterAlgorithms) plans.push_back({g, sa, GatherAlgorithm::sbt, ExchangeAlgorithm::nonblocking});
    for (GatherAlgorithm ga : kGatherAlgorithms) plans.push_back({g, ScatterAlgorithm::mpi, ga, ExchangeAlgorithm::four_step});
    plans.push_back({g, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::four_step});
  }
  EXPECT_FALSE(plans.empty()) << what << ": no feasible grid";
  for (const Plan& plan : plans) {
    ProgramResults got = program.run(s, image, plan);
    for (const auto& [name, value] : reference.scalars) {
      if (!got.scalars.count(name)) {
        ADD_FAILURE() << what << ": no scalar " << name;
        continue;
      }
      EXPECT_EQ(std::memcmp(&value, &got.scalars[name], sizeof value), 0)
          << what << " scalar " << name << " " << describe(plan) << ": " << got.scalars[name] << " vs " << value;
    }
    if (!s.is_root()) continue;
    for (const auto& [name, img] : reference.images) {
      if (!got.images.count(name)) {
        ADD_FAILURE() << what << ": no output " << name;
        continue;
      }
      EXPECT_TRUE(bit_equal(got.images[name], img)) << what << " output " << name << " " << describe(plan);
    }
  }
  return reference;
}

constexpr int kW = 61, kH = 53;  // divides evenly by none of 2..7

TEST(Program, PixelwiseChainEveryGridAndOpenCV) {
  const Image a_img = random_image(kW, kH, 1, -50.0f, 50.0f);
  Program p;
  const DImage a = p.input();
  const DImage b = a * 0.5 + 3.0;
  p.output("chain", sqrt(abs(a * b - a / (b + 100.0))) + min(a, b) - max(a, 2.0));
  p.output("cmp", (a > 1.0) + (a <= b) * 2.0 + (a < -1.0) * 4.0 + (b >= a) * 8.0);
  p.output("atan2", atan2(b, a));
  p.output("magnitude", magnitude(a, b));
  p.output("select", select(a > 0.0, a, -a) - 1.0 / (abs(a) + 1.0));
  const DImage twice = a * 3.0;
  p.output("twice1", twice);  // one image, two outputs
  p.output("twice2", twice);
  p.output("input", a);       // the input itself
  const ProgramResults r = check_every_grid(p, a_img, "pixelwise");
  if (!session().is_root()) return;
  const cv::Mat A = as_mat(a_img), B = A * 0.5 + 3.0;
  cv::Mat absd, sq, mn, mx, mag, at(A.size(), CV_32F);
  absd = cv::abs(A.mul(B) - A / (B + 100.0));
  cv::sqrt(absd, sq);
  cv::min(A, B, mn);
  cv::max(A, 2.0, mx);
  EXPECT_LT(relative_error(as_mat(r.images.at("chain")), sq + mn - mx), 1e-6);
  cv::magnitude(A, B, mag);
  EXPECT_LT(relative_error(as_mat(r.images.at("magnitude")), mag), 1e-6);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) at.at<float>(y, x) = std::atan2(B.at<float>(y, x), A.at<float>(y, x));
  EXPECT_LT(relative_error(as_mat(r.images.at("atan2")), at), 1e-6);
  cv::Mat c1, c2, c3, c4;
  cv::compare(A, 1.0, c1, cv::CMP_GT);
  cv::compare(A, B, c2, cv::CMP_LE);
  cv::compare(A, -1.0, c3, cv::CMP_LT);
  cv::compare(B, A, c4, cv::CMP_GE);
  cv::Mat cmp;
  cv::Mat(c1 / 255 + c2 / 255 * 2 + c3 / 255 * 4 + c4 / 255 * 8).convertTo(cmp, CV_32F);
  EXPECT_EQ(cv::norm(as_mat(r.images.at("cmp")), cmp, cv::NORM_INF), 0.0);
  EXPECT_TRUE(bit_equal(r.images.at("input"), a_img));
  EXPECT_TRUE(bit_equal(r.images.at("twice1"), r.images.at("twice2")));
  EXPECT_EQ(cv::norm(as_mat(r.images.at("twice1")), A * 3.0, cv::NORM_INF), 0.0);
  cv::Mat sel = cv::abs(A) - 1.0 / (cv::abs(A) + 1.0);
  EXPECT_LT(relative_error(as_mat(r.images.at("select")), sel), 1e-6);
}

TEST(Program, SeparableAndGaussianEveryGridAndOpenCV) {
  const Image img = random_image(kW, kH, 2);
  Program p;
  const DImage a = p.input();
  const Kernel1D kx = make_kernel({0.1f, -0.7f, 0.25f, 1.5f, 0.05f});  // asymmetric
  const Kernel1D ky = make_kernel({0.3f, 0.2f, -0.4f});
  p.output("sep", sep_filter(a, kx, ky));
  p.output("g21", gaussian(a, 1.0, 2, 1));
  p.output("g02", gaussian(a, 1.5, 0, 2));
  const ProgramResults r = check_every_grid(p, img, "separable");
  if (!session().is_root()) return;
  const cv::Mat A = as_mat(img);
  auto sep = [&](const Kernel1D& x, const Kernel1D& y) {
    cv::Mat out;
    cv::sepFilter2D(A, out, CV_32F, cv::Mat(x.taps), cv::Mat(y.taps), cv::Point(-1, -1), 0,
                    cv::BORDER_REFLECT_101);
    return out;
  };
  EXPECT_LT(relative_error(as_mat(r.images.at("sep")), sep(kx, ky)), 1e-5);
  EXPECT_LT(relative_error(as_mat(r.images.at("g21")), sep(gaussian_kernel(1.0, 2), gaussian_kernel(1.0, 1))), 1e-5);
  EXPECT_LT(relative_error(as_mat(r.images.at("g02")), sep(gaussian_kernel(1.5, 0), gaussian_kernel(1.5, 2))), 1e-5);
}

TEST(Program, GaussProgramIsTheDerivativePipelineBitForBit) {
  // tessera-gauss runs gauss_program: its outputs must be the pipeline's bits.
  const Image img = random_image(kW, kH, 3);
  GaussianOptions o;
  o.sigma = 1.0;
  const auto expected = gaussian_derivatives(img, o);
  Plan one;
  const ProgramResults r = apps::gauss_program(o).run(session(), img, one);
  if (!session().is_root()) return;
  for (std::size_t i = 0; i < o.derivatives.size(); ++i)
    EXPECT_TRUE(bit_equal(r.images.at(std::string(to_string(o.derivatives[i]))), expected[i]))
        << to_string(o.derivatives[i]);
}

TEST(Program, NeighbourhoodOperationsEveryGridAndOpenCV) {
  const Image img = random_image(kW, kH, 4);
  Program p;
  const DImage a = p.input();
  const std::vector<float> k3{0.1f, 0.2f, -0.3f, 0.4f, 1.0f, -0.6f, 0.7f, 0.05f, 0.9f};
  std::vector<float> k5(25);
  for (int i = 0; i < 25; ++i) k5[std::size_t(i)] = float((i * 7) % 11) / 10.0f - 0.5f;
  p.output("f3", filter2d(a, k3));
  p.output("f5", filter2d(a, k5));
  p.output("maxima", local_maxima(a));
  const DImage gx = gaussian(a, 1.0, 1, 0), gy = gaussian(a, 1.0, 0, 1);
  const DImage m = magnitude(gx, gy);
  p.output("m", m);
  p.output("gx", gx);
  p.output("gy", gy);
  p.output("nms", non_max_suppression(m, gx, gy));
  const ProgramResults r = check_every_grid(p, img, "neighbourhood");
  if (!session().is_root()) return;
  const cv::Mat A = as_mat(img);
  cv::Mat f3, f5;
  cv::filter2D(A, f3, CV_32F, cv::Mat(3, 3, CV_32F, const_cast<float*>(k3.data())), cv::Point(-1, -1), 0,
               cv::BORDER_REFLECT_101);
  cv::filter2D(A, f5, CV_32F, cv::Mat(5, 5, CV_32F, k5.data()), cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
  EXPECT_LT(relative_error(as_mat(r.images.at("f3")), f3), 1e-5);
  EXPECT_LT(relative_error(as_mat(r.images.at("f5")), f5), 1e-5);
  // Random data has no ties: a local maximum is exactly a pixel equal to its 3x3 dilation.
  cv::Mat dil, eq, maxima;
  cv::dilate(A, dil, cv::Mat::ones(3, 3, CV_8U), cv::Point(-1, -1), 1, cv::BORDER_REFLECT_101);
  cv::compare(A, dil, eq, cv::CMP_EQ);
  eq.convertTo(maxima, CV_32F, 1.0 / 255);
  EXPECT_EQ(cv::norm(as_mat(r.images.at("maxima")), maxima, cv::NORM_INF), 0.0);
  EXPECT_GT(cv::countNonZero(maxima), 10);
  // Non-maximum suppression, written out independently (angles in degrees).
  const cv::Mat M = as_mat(r.images.at("m")), GX = as_mat(r.images.at("gx")), GY = as_mat(r.images.at("gy"));
  cv::Mat Mp;
  cv::copyMakeBorder(M, Mp, 1, 1, 1, 1, cv::BORDER_REFLECT_101);
  int differ = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      double deg = std::atan2(double(GY.at<float>(y, x)), double(GX.at<float>(y, x))) * 180.0 / std::numbers::pi;
      if (deg < 0) deg += 180.0;
      int ux = 1, uy = 0;  // 0 degrees
      if (deg >= 22.5 && deg < 67.5) ux = 1, uy = 1;
      else if (deg >= 67.5 && deg < 112.5) ux = 0, uy = 1;
      else if (deg >= 112.5 && deg < 157.5) ux = -1, uy = 1;
      const float c = Mp.at<float>(y + 1, x + 1);
      const bool keep = c >= Mp.at<float>(y + 1 + uy, x + 1 + ux) && c >= Mp.at<float>(y + 1 - uy, x + 1 - ux);
      differ += (keep ? 1.0f : 0.0f) != r.images.at("nms").at(x, y);
    }
  EXPECT_EQ(differ, 0);
}

TEST(Program, ReductionsEveryGridExactAndOpenCV) {
  Image img = random_image(kW, kH, 6, -1000.0f, 1000.0f);
  img.at(3, 4) = 0.0f;
  img.at(7, 9) = 0.0f;
  img.at(10, 11) = 1e-40f;  // subnormal
  Program p;
  const DImage a = p.input();
  p.output("sum", sum(a));
  p.output("min", min_of(a));
  p.output("max", max_of(a));
  p.output("mean", mean(a));
  p.output("count", count_nonzero(a));
  p.output("scaled", a > 0.5 * max_of(a));  // a scalar used by a pixel-wise operation
  const ProgramResults r = check_every_grid(p, img, "reductions");
  const cv::Mat A = as_mat(img);
  // Exact sum, independently: long double accumulation of these few floats is exact
  // enough to compare to within one double ulp.
  long double exact = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) exact += img.at(x, y);
  EXPECT_NEAR(r.scalars.at("sum"), double(exact), std::abs(double(exact)) * 1e-15 + 1e-9);
  EXPECT_NEAR(r.scalars.at("sum"), cv::sum(A)[0], 1e-6 * cv::norm(A, cv::NORM_L1));
  double lo = 0, hi = 0;
  cv::minMaxLoc(A, &lo, &hi);
  EXPECT_EQ(r.scalars.at("min"), lo);
  EXPECT_EQ(r.scalars.at("max"), hi);
  EXPECT_DOUBLE_EQ(r.scalars.at("mean"), r.scalars.at("sum") / (kW * kH));
  EXPECT_EQ(r.scalars.at("count"), double(cv::countNonZero(A)));
}

// Minimum and maximum combine partials along the allreduce plan's tree: -0 counts
// below +0 (in a tile and between tiles), so the result has the same bits whichever
// tile holds which zero and in whatever order the partials meet.
TEST(Program, MinMaxOfSignedZerosSameBitsEveryGrid) {
  Image img = random_image(kW, kH, 12, 1.0f, 255.0f);
  img.at(1, 1) = 0.0f;               // +0 first in raster order
  img.at(kW - 2, kH - 2) = -0.0f;    // -0 last, in another tile on most grids
  img.at(kW / 2, kH / 2) = 0.0f;
  Program p;
  const DImage a = p.input();
  p.output("min", min_of(a));
  p.output("max", max_of(-a));  // -(+0) = -0 first, -(-0) = +0 last
  const ProgramResults r = check_every_grid(p, img, "signed zeros");
  EXPECT_EQ(r.scalars.at("min"), 0.0);
  EXPECT_TRUE(std::signbit(r.scalars.at("min")));
  EXPECT_EQ(r.scalars.at("max"), 0.0);
  EXPECT_FALSE(std::signbit(r.scalars.at("max")));
}

TEST(Program, HysteresisFollowsEdgesAcrossTilesAsConnectedComponents) {
  // Weak pixels: a random 45 % field (long 8-connected paths wander across tiles);
  // strong: a few seeds. An edge is a weak pixel 8-connected to a seed.
  const Image noise = random_image(kW, kH, 7, 0.0f, 1.0f);
  Program p;
  const DImage a = p.input();
  const DImage weak = a < 0.45;
  const DImage strong = a < 0.004;
  p.output("edges", hysteresis(strong, weak));
  p.output("weak", weak);
  p.output("strong", strong);
  const ProgramResults r = check_every_grid(p, noise, "hysteresis");
  if (!session().is_root()) return;
  cv::Mat w8, labels;
  as_mat(r.images.at("weak")).convertTo(w8, CV_8U);
  cv::Mat s = as_mat(r.images.at("strong"));
  const int n = cv::connectedComponents(w8, labels, 8, CV_32S);
  std::vector<bool> seeded(std::size_t(n), false);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      if (s.at<float>(y, x) != 0) seeded[std::size_t(labels.at<int>(y, x))] = true;
  int edges = 0, differ = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const int l = labels.at<int>(y, x);
      const float expect = (l > 0 && seeded[std::size_t(l)]) || s.at<float>(y, x) != 0 ? 1.0f : 0.0f;
      differ += expect != r.images.at("edges").at(x, y);
      edges += expect != 0;
    }
  EXPECT_EQ(differ, 0);
  EXPECT_GT(edges, 40);  // the test means something: propagation happened
}

TEST(Program, EdgesFindTheBoundaryOfAKnownShapeOnEveryGrid) {
  const int w = 64, h = 56;
  Image img(w, h, 10.0f);
  const int x0 = 13, x1 = 49, y0 = 9, y1 = 45;  // a bright square crossing every tile
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) img.at(x, y) = 200.0f;
  apps::EdgesOptions o;
  o.sigma = 1.0;
  const ProgramResults r = check_every_grid(apps::edges_program(o), img, "edges");
  if (!session().is_root()) return;
  const Image& e = r.images.at("edges");
  int on_boundary = 0, off = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (e.at(x, y) == 0) continue;
      ASSERT_EQ(e.at(x, y), 255.0f);
      const bool near_x = (std::abs(x - x0) <= 1 || std::abs(x - (x1 - 1)) <= 1) && y >= y0 - 1 && y <= y1;
      const bool near_y = (std::abs(y - y0) <= 1 || std::abs(y - (y1 - 1)) <= 1) && x >= x0 - 1 && x <= x1;
      (near_x || near_y ? on_boundary : off)++;
    }
  EXPECT_EQ(off, 0);
  EXPECT_GE(on_boundary, 4 * (x1 - x0) - 8);  // the whole outline, corners aside
  // Every side of the square is found along its whole length.
  for (int y = y0 + 2; y < y1 - 2; ++y) {
    EXPECT_TRUE(e.at(x0, y) || e.at(x0 - 1, y)) << "left side, row " << y;
    EXPECT_TRUE(e.at(x1 - 1, y) || e.at(x1, y)) << "right side, row " << y;
  }
}

TEST(Program, EdgesOfShapesCrossingEveryTile) {
  apps::EdgesOptions o;
  o.sigma = 1.5;
  check_every_grid(apps::edges_program(o), shapes_image(kW, kH), "edges shapes");
}

TEST(Program, CornersOfSquaresAtKnownPositionsOnEveryGrid) {
  const int w = 70, h = 63;
  Image img(w, h, 0.0f);
  struct Square {
    int x0, y0, size;
  };
  const Square squares[] = {{10, 10, 18}, {40, 30, 20}};
  for (const Square& q : squares)
    for (int y = q.y0; y < q.y0 + q.size; ++y)
      for (int x = q.x0; x < q.x0 + q.size; ++x) img.at(x, y) = 100.0f;
  apps::CornersOptions o;
  o.sigma = 1.0;
  o.threshold = 0.1;
  const ProgramResults r = check_every_grid(apps::corners_program(o), img, "corners");
  if (!session().is_root()) return;
  const Image& c = r.images.at("corners");
  std::vector<std::pair<int, int>> found;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (c.at(x, y) != 0) found.push_back({x, y});
  std::vector<std::pair<double, double>> expected;
  for (const Square& q : squares)
    for (double cy : {q.y0 - 0.5, q.y0 + q.size - 0.5})
      for (double cx : {q.x0 - 0.5, q.x0 + q.size - 0.5}) expected.push_back({cx, cy});
  EXPECT_EQ(found.size(), expected.size());
  for (auto [ex, ey] : expected) {
    int near = 0;
    for (auto [fx, fy] : found) near += std::abs(fx - ex) <= 2 && std::abs(fy - ey) <= 2;
    EXPECT_EQ(near, 1) << "corner near " << ex << "," << ey;
  }
}

TEST(Program, HarrisResponseMatchesThePerPixelFormula) {
  const Image img = shapes_image(kW, kH);
  apps::CornersOptions o;
  o.sigma = 1.0;
  const ProgramResults r = check_every_grid(apps::corners_program(o), img, "corners shapes");
  if (!session().is_root()) return;
  const cv::Mat A = as_mat(img);
  auto sep = [](const cv::Mat& src, const Kernel1D& x, const Kernel1D& y) {
    cv::Mat out;
    cv::sepFilter2D(src, out, CV_32F, cv::Mat(x.taps), cv::Mat(y.taps), cv::Point(-1, -1), 0,
                    cv::BORDER_REFLECT_101);
    return out;
  };
  const Kernel1D g0 = gaussian_kernel(1.0, 0), g1 = gaussian_kernel(1.0, 1), r0 = gaussian_kernel(2.0, 0);
  const cv::Mat lx = sep(A, g1, g0), ly = sep(A, g0, g1);
  const cv::Mat a = sep(lx.mul(lx), r0, r0), b = sep(lx.mul(ly), r0, r0), c = sep(ly.mul(ly), r0, r0);
  cv::Mat h(A.size(), CV_32F);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const double aa = a.at<float>(y, x), bb = b.at<float>(y, x), cc = c.at<float>(y, x);
      h.at<float>(y, x) = float((aa * cc - bb * bb) - 0.04 * (aa + cc) * (aa + cc));
    }
  EXPECT_LT(relative_error(as_mat(r.images.at("response")), h), 1e-4);
}

// describe()'s communication steps with its loops unrolled as often as the run went
// round them must be exactly the run's communication (kind, images, halo, bytes).
void expect_run_matches_description(const Program& program, const Image& image, const std::string& what) {
  const Session& s = session();
  const ProgramDescription d = program.describe(image.width(), image.height());
  for (const Grid& g : grids_for(s.size())) {
    if (!infeasibility(Partition(image.width(), image.height(), g), program.halo()).empty()) continue;
    const ProgramResults r = program.run(s, image, Plan{g, ScatterAlgorithm::sbt, GatherAlgorithm::sbt,
                                                        ExchangeAlgorithm::nonblocking});
    std::vector<ProgramStep> expected;
    std::size_t at = 0;  // position in r.communication, to know how many rounds ran
    for (std::size_t i = 0; i < d.steps.size(); ++i) {
      const ProgramStep& st = d.steps[i];
      if (st.kind == ProgramStep::Kind::compute) continue;
      if (st.repeat_first >= 0) {
        // The loop body's communication, repeated while the run repeated it.
        std::vector<ProgramStep> body;
        for (std::size_t j = std::size_t(st.repeat_first); j <= i; ++j)
          if (d.steps[j].kind != ProgramStep::Kind::compute) body.push_back(d.steps[j]);
        expected.erase(expected.end() - std::ptrdiff_t(body.size() - 1), expected.end());
        at -= body.size() - 1;
        int rounds = 0;
        while (at + body.size() <= r.communication.size() && r.communication[at].kind == body[0].kind &&
               r.communication[at].operation == body[0].operation) {
          expected.insert(expected.end(), body.begin(), body.end());
          at += body.size();
          ++rounds;
        }
        EXPECT_GE(rounds, 1) << what;
        continue;
      }
      expected.push_back(st);
      ++at;
    }
    ASSERT_EQ(r.communication.size(), expected.size()) << what << " " << to_string(g);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const ProgramStep &e = expected[i], &got = r.communication[i];
      EXPECT_EQ(int(got.kind), int(e.kind)) << what << " step " << i;
      EXPECT_EQ(got.images, e.images) << what << " step " << i;
      EXPECT_EQ(got.halo, e.halo) << what << " step " << i;
      EXPECT_EQ(got.bytes, e.bytes) << what << " step " << i;
      EXPECT_EQ(got.operation, e.operation) << what << " step " << i;
      EXPECT_EQ(got.in_place, e.in_place) << what << " step " << i;
    }
  }
}

TEST(Program, RunsCommunicateExactlyAsDescribed) {
  apps::EdgesOptions e;
  e.sigma = 1.5;
  expect_run_matches_description(apps::edges_program(e), shapes_image(kW, kH), "edges");
  apps::CornersOptions c;
  expect_run_matches_description(apps::corners_program(c), shapes_image(kW, kH), "corners");
  expect_run_matches_description(gauss_program_at(2.0), random_image(kW, kH, 9), "gauss");
  Program p;
  const DImage a = p.input();
  p.output("s", sum(a));
  p.output("m", mean(a * 2.0));
  p.output("c", count_nonzero(a > 100.0));
  p.output("lo", min_of(a));
  p.output("f", filter2d(a, std::vector<float>(25, 0.04f)) - a);
  expect_run_matches_description(p, random_image(kW, kH, 10), "reductions");
}

TEST(Program, TracedRunsNameEachPlanAndTimeEachOfItsSteps) {
  // Every plan a run executes appends one row per execution under its name: the scatter
  // and the gather once per run, the exchange once per image it exchanges; a program
  // without image outputs gathers nothing and has no gather entry. Idle ranks: none.
  const Session& s = session();
  const Program gauss = gauss_program_at(1.0);
  const Image image = random_image(kW, kH, 12);
  const Plan plan{grids_for(s.size()).back(), ScatterAlgorithm::sbt, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
  const Halo halo = gauss.halo();
  std::map<std::string, StepSeconds> steps;
  const int runs = 3;
  for (int k = 0; k < runs; ++k) (void)gauss.run(s, image, plan, nullptr, &steps);
  const ProgramDescription d = gauss.describe(kW, kH);
  int exchanges = 0, gathers = 0;
  for (const auto& step : d.steps) {
    exchanges += step.kind == ProgramStep::Kind::exchange ? step.images : 0;
    gathers += step.kind == ProgramStep::Kind::gather ? step.images : 0;
  }
  const std::string exchange =
      "exchange nonblocking halo " + std::to_string(halo.x) + "x" + std::to_string(halo.y);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps.at("scatter sbt").runs.size(), std::size_t(runs));
  EXPECT_EQ(steps.at(exchange).runs.size(), std::size_t(runs * exchanges));
  EXPECT_EQ(steps.at("gather oft").runs.size(), std::size_t(runs * gathers));
  for (const auto& [name, t] : steps)
    for (const auto& row : t.runs) EXPECT_EQ(row.size(), t.steps.size()) << name;

  Program sums;
  sums.output("s", sum(sums.input()));
  std::map<std::string, StepSeconds> scalar_only;
  (void)sums.run(s, image, plan, nullptr, &scalar_only);
  EXPECT_EQ(scalar_only.count("gather oft"), 0u);
  EXPECT_EQ(scalar_only.count("scatter sbt"), 1u);

  if (s.size() > 1) {  // a one-rank plan leaves the other ranks idle: nothing traced there
    const Plan one{Grid{1, 1}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
    std::map<std::string, StepSeconds> idle;
    (void)gauss.run(s, image, one, nullptr, &idle);
    EXPECT_EQ(idle.empty(), s.rank() != 0);
  }
}

// A timed run: the phases are the critical path's steps, so they add up to the total,
// none is negative, and every working rank holds the same figures; the root decides
// whether the run is timed (a rank without `times` still takes part), and idle ranks'
// figures are left alone.
// A team of fewer ranks than started leaves a run without waiting for the idle ranks
// (asleep between tests of their barrier): its part of the end barrier stays pending on
// the world communicator (a later run drops it once done, waiting only for the oldest
// beyond a few). The outputs do not change, and the world's collectives go on in order
// (the barriers below, the later runs).
TEST(Program, WorkingRanksLeaveARunWithoutWaitingForTheIdleOnes) {
  const Session& s = session();
  const Program gauss = gauss_program_at(1.0);
  const Image image = random_image(64, 96, 21);
  const auto& pending = s.comm().pending;
  std::optional<ProgramResults> reference;
  for (int procs = 1; procs <= s.size(); ++procs) {
    const Plan plan{Grid{1, procs}, ScatterAlgorithm::oft, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
    const bool left = s.rank() < procs && procs < s.size();
    for (int run = 0; run < 8; ++run) {
      const std::size_t before = pending.size();
      ProgramResults got = gauss.run(s, image, plan);
      if (left) {
        EXPECT_GE(pending.size(), 1u) << "P = " << procs << ", run " << run;  // its own, under way
        EXPECT_LE(pending.size(), 5u) << "P = " << procs << ", run " << run;  // and at most 4 older
      } else if (s.rank() >= procs) {
        EXPECT_TRUE(pending.empty()) << "P = " << procs << ", run " << run;  // idle: it waited, never left
      } else {
        // The whole world worked: it leaves no barrier of its own. Older ones a smaller team
        // left may still be under way even after the world's barrier (an MPI_Test advances a
        // nonblocking barrier, it need not complete it), up to the four a run keeps.
        EXPECT_LE(pending.size(), std::min<std::size_t>(before, 4)) << "P = " << procs << ", run " << run;
      }
      if (!s.is_root()) continue;
      ASSERT_FALSE(got.images.empty());
      if (!reference) reference = std::move(got);
      else
        for (const auto& [name, img] : reference->images)
          EXPECT_TRUE(bit_equal(got.images.at(name), img)) << name << ", P = " << procs << ", run " << run;
    }
    s.barrier();
  }
  detail::complete_pending(s.comm());  // what the session's end does: nothing left to wait for
  EXPECT_TRUE(pending.empty());
}

TEST(Program, TimedPhasesAddUpToTheTotalOnEveryWorkingRank) {
  const Session& s = session();
  const Program gauss = gauss_program_at(2.0);
  const Image image = random_image(kW, kH, 14);
  std::optional<Plan> feasible;
  for (const Grid& grid : grids_for(s.size())) {
    if (!infeasibility(Partition(kW, kH, grid), gauss.halo()).empty()) continue;
    const Plan plan{grid, ScatterAlgorithm::sbt, GatherAlgorithm::oft, ExchangeAlgorithm::nonblocking};
    feasible = plan;
    PhaseSeconds t;
    (void)gauss.run(s, image, plan, &t);
    EXPECT_GT(t.total, 0.0) << describe(plan);
    for (double phase : {t.scatter, t.exchange, t.compute, t.gather}) EXPECT_GE(phase, 0.0) << describe(plan);
    EXPECT_GT(t.compute, 0.0) << describe(plan);
    EXPECT_NEAR(t.scatter + t.exchange + t.compute + t.gather, t.total, 1e-9 * (1 + t.total)) << describe(plan);
    const Team world = s.team(s.size());
    EXPECT_EQ(world.max(t.total), t.total) << describe(plan);  // the same on every rank
    EXPECT_EQ(world.max(t.exchange), t.exchange) << describe(plan);
  }
  ASSERT_TRUE(feasible.has_value());
  // Traced too: "stages" holds each stage's share, one label per stage of every kind the
  // program has, and the shares add up to the total as the phases do.
  std::map<std::string, StepSeconds> traced;
  PhaseSeconds t;
  for (int k = 0; k < 2; ++k) (void)gauss.run(s, image, *feasible, &t, &traced);
  ASSERT_EQ(traced.count("stages"), 1u);
  const StepSeconds& stages = traced.at("stages");
  ASSERT_EQ(stages.runs.size(), 2u);
  EXPECT_EQ(stages.steps.front().rfind("scatter ", 0), 0u) << stages.steps.front();
  EXPECT_EQ(stages.steps.back().rfind("gather ", 0), 0u) << stages.steps.back();
  EXPECT_TRUE(std::any_of(stages.steps.begin(), stages.steps.end(),
                          [](const std::string& l) { return l.rfind("separable gaussian", 0) == 0; }));
  ASSERT_EQ(stages.runs.back().size(), stages.steps.size());
  double shares = 0;
  for (double share : stages.runs.back()) {
    EXPECT_GE(share, 0.0);
    shares += share;
  }
  EXPECT_NEAR(shares, t.total, 1e-9 * (1 + t.total));
  // Only the root asks: every rank still runs the timed run (no rank waits alone).
  PhaseSeconds root;
  (void)gauss.run(s, image, *feasible, s.is_root() ? &root : nullptr);
  if (s.is_root()) {
    EXPECT_GT(root.total, 0.0);
  }
  // The root does not ask: another rank's figures are left as they were.
  PhaseSeconds untouched;
  untouched.total = -1;
  (void)gauss.run(s, image, *feasible, s.is_root() ? nullptr : &untouched);
  EXPECT_EQ(untouched.total, -1);
  if (s.size() > 1) {  // one working rank: the idle ranks' figures stay
    PhaseSeconds idle;
    idle.total = -2;
    (void)gauss.run(s, image, Plan{Grid{1, 1}}, &idle);
    if (s.rank() > 0) {
      EXPECT_EQ(idle.total, -2);
    } else {
      EXPECT_GT(idle.total, 0.0);
    }
  }
}

// The first run of a program maps exactly the buffers the scheduler prices the first
// run's page faults from (scheduler::first_run_mapped: the description's buffers and
// the communication plans' scratch through the pool's own policy), on every rank of
// every grid and algorithm; idle ranks map nothing.
void expect_first_run_maps_as_predicted(const Program& program, const Image& image, const std::string& what) {
  const Session& s = session();
  const ProgramDescription d = program.describe(image.width(), image.height());
  const std::pair<ScatterAlgorithm, GatherAlgorithm> algorithms[] = {
      {ScatterAlgorithm::sbt, GatherAlgorithm::sbt},
      {ScatterAlgorithm::oft, GatherAlgorithm::oft},
      {ScatterAlgorithm::mpi, GatherAlgorithm::mpi},
      {ScatterAlgorithm::bcast, GatherAlgorithm::oft}};
  int checked = 0;
  for (const Grid& g : grids_for(s.size())) {
    if (!infeasibility(Partition(image.width(), image.height(), g), program.halo()).empty()) continue;
    for (const auto& [scatter, gather] : algorithms) {
      const Plan plan{g, scatter, gather, ExchangeAlgorithm::nonblocking};
      release_free_image_buffers();  // a fresh process's pool
      const std::size_t before = image_bytes_mapped();
      { const ProgramResults r = program.run(s, image, plan); }
      const std::size_t mapped = image_bytes_mapped() - before;
      const std::size_t expected =
          s.rank() < plan.procs() ? scheduler::first_run_mapped(d, plan, s.rank()).total() : 0;
      EXPECT_EQ(mapped, expected) << what << " " << describe(plan) << " rank " << s.rank();
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << what;
}

TEST(Program, FirstRunMapsTheBuffersTheSchedulerPredicts) {
  // Large enough that tiles are pooled (>= 256 KiB) at most grids, the whole images
  // past 2 MiB (huge pages), tiles at 7 ranks below it.
  constexpr int w = 1030, h = 770;
  expect_first_run_maps_as_predicted(gauss_program_at(2.0), random_image(w, h, 11), "gauss");
  apps::EdgesOptions e;
  e.sigma = 1.5;
  expect_first_run_maps_as_predicted(apps::edges_program(e), shapes_image(w, h), "edges");
  apps::CornersOptions c;
  expect_first_run_maps_as_predicted(apps::corners_program(c), shapes_image(w, h), "corners");
  Program p;  // outputs with a halo (read by a later filter): packed before a gather
  const DImage a = p.input();
  const DImage b = filter2d(a, std::vector<float>(9, 1.0f / 9));
  p.output("b", b);
  p.output("b again", b);
  p.output("f", filter2d(b, std::vector<float>(25, 0.04f)) - a);
  p.output("m", mean(a));
  expect_first_run_maps_as_predicted(p, random_image(w, h, 12), "halo outputs");
}

TEST(Program, InfeasiblePlansAndBadProgramsAreRefusedOnEveryRank) {
  const Session& s = session();
  Program empty;
  empty.input();
  EXPECT_THROW(empty.run(s, random_image(8, 8, 1), Plan{}), Error);
  if (s.size() < 2) return;
  Program p;
  p.output("g", gaussian(p.input(), 3.0, 0, 0));  // halo 7: a 4-pixel-tall strip is too thin
  Plan plan;
  plan.grid = Grid{1, s.size()};
  EXPECT_THROW(p.run(s, random_image(8, 4 * s.size(), 1), plan), Error);
  // After a run that succeeded the lowering is kept and the checks are not agreed on: they
  // still refuse on every rank, a size too thin for the plan and more ranks than started.
  (void)p.run(s, random_image(8, 16 * s.size(), 1), plan);
  EXPECT_THROW(p.run(s, random_image(8, 4 * s.size(), 1), plan), InfeasiblePlan);
  Plan too_many;
  too_many.grid = Grid{1, s.size() + 1};
  EXPECT_THROW(p.run(s, random_image(8, 16 * s.size(), 1), too_many), InfeasiblePlan);
  s.barrier();  // every rank refused alike: the world's collectives go on in order
}

// A program that grows after a run is lowered again: the next run has the new output,
// and an output with a wider halo makes a plan the kept lowering allowed infeasible.
TEST(Program, AProgramThatGrowsAfterARunRunsWhatItHasBecome) {
  const Session& s = session();
  Program p;
  const DImage in = p.input();
  p.output("sum", in + in);
  const Image image = random_image(40, 16 * s.size(), 3);
  Plan plan;
  plan.grid = Grid{1, s.size()};
  ProgramResults first = p.run(s, image, plan);
  p.output("product", in * in);
  ProgramResults second = p.run(s, image, plan);
  if (s.is_root()) {
    EXPECT_EQ(first.images.count("product"), 0u);
    ASSERT_EQ(second.images.count("product"), 1u);
    EXPECT_EQ(second.images.at("product").at(3, 5), image.at(3, 5) * image.at(3, 5));
    EXPECT_TRUE(bit_equal(second.images.at("sum"), first.images.at("sum")));
  }
  if (s.size() < 2) return;
  p.output("wide", gaussian(in, 10.0, 0, 0));
  ASSERT_GT(p.halo().y, 16);  // taller than a strip
  EXPECT_THROW(p.run(s, image, plan), InfeasiblePlan);
}

}  // namespace
}  // namespace tessera

