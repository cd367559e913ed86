// Kernels and sequential derivatives against analytic responses and an independent
// OpenCV reference (sepFilter2D with the same taps, BORDER_REFLECT_101).
#include "tessera/gaussian.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "tessera/error.hpp"

namespace tessera {
namespace {

TEST(Kernel, SizesMatchThePaper) {
  const int expected[3][3] = {{7, 9, 9}, {15, 23, 25}, {23, 37, 39}};
  const double sigmas[3] = {1, 3, 5};
  for (int s = 0; s < 3; ++s)
    for (int order = 0; order < 3; ++order)
      EXPECT_EQ(gaussian_kernel(sigmas[s], order).size(), expected[s][order])
          << "sigma " << sigmas[s] << " order " << order;
}

TEST(Kernel, RadiusGrowsWithSigmaAndOrder) {
  for (double sigma = 0.3; sigma < 12; sigma += 0.37) {
    EXPECT_GE(default_radius(sigma, 0), 1);
    EXPECT_LE(default_radius(sigma, 0), default_radius(sigma, 1));
    EXPECT_LE(default_radius(sigma, 1), default_radius(sigma, 2));
    EXPECT_LE(default_radius(sigma, 0), default_radius(sigma + 0.37, 0));
  }
  EXPECT_EQ(gaussian_kernel(2.0, 1, 10).size(), 21);
  EXPECT_THROW(gaussian_kernel(0.0, 0), InvalidArgument);
  EXPECT_THROW(gaussian_kernel(-1.0, 0), InvalidArgument);
  EXPECT_THROW(gaussian_kernel(1.0, 3), InvalidArgument);
  EXPECT_THROW(gaussian_kernel(1.0, 0, 0), InvalidArgument);
}

TEST(Kernel, Normalisation) {
  for (double sigma : {0.7, 1.0, 2.5, 3.0, 5.0}) {
    auto k0 = gaussian_kernel(sigma, 0), k1 = gaussian_kernel(sigma, 1), k2 = gaussian_kernel(sigma, 2);
    double s0 = 0, m1 = 0, s1 = 0, s2 = 0, m2 = 0, l2 = 0;
    for (int j = -k0.radius; j <= k0.radius; ++j) s0 += k0.taps[std::size_t(j + k0.radius)];
    for (int j = -k1.radius; j <= k1.radius; ++j) {
      m1 += j * double(k1.taps[std::size_t(j + k1.radius)]);
      s1 += k1.taps[std::size_t(j + k1.radius)];
    }
    for (int j = -k2.radius; j <= k2.radius; ++j) {
      const double t = k2.taps[std::size_t(j + k2.radius)];
      s2 += t;
      l2 += j * t;
      m2 += 0.5 * j * j * t;
    }
    EXPECT_NEAR(s0, 1.0, 1e-6);
    EXPECT_NEAR(m1, 1.0, 1e-6);
    EXPECT_NEAR(s1, 0.0, 1e-7);
    EXPECT_NEAR(m2, 1.0, 1e-6);
    EXPECT_NEAR(s2, 0.0, 1e-6);
    EXPECT_NEAR(l2, 0.0, 1e-7);
  }
}

Image make_image(int w, int h, auto f) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = float(f(double(x), double(y)));
  return img;
}

// In the interior (away from mirrored edges) derivatives of polynomials are exact
// up to float rounding.
void expect_interior(const Image& img, double expected, int margin, double tol, const char* what) {
  for (int y = margin; y < img.height() - margin; ++y)
    for (int x = margin; x < img.width() - margin; ++x)
      ASSERT_NEAR(img.at(x, y), expected, tol) << what << " at " << x << "," << y;
}

TEST(Derivatives, RampsAndQuadratics) {
  for (double sigma : {1.0, 3.0}) {
    GaussianOptions o;
    o.sigma = sigma;
    const int m = halo_for(o).x + 1;
    // f = 3x + 2y: Lx = 3, Ly = 2, second derivatives 0.
    auto d = gaussian_derivatives(make_image(80, 70, [](double x, double y) { return 3 * x + 2 * y; }), o);
    expect_interior(d[0], 3.0, m, 1e-3, "Lx");
    expect_interior(d[1], 2.0, m, 1e-3, "Ly");
    expect_interior(d[2], 0.0, m, 1e-3, "Lxx");
    expect_interior(d[3], 0.0, m, 1e-3, "Lxy");
    expect_interior(d[4], 0.0, m, 1e-3, "Lyy");
    // f = x^2/2: Lxx = 1; f = y^2/2: Lyy = 1; f = x*y: Lxy = 1. Values stay small
    // near the centre so float rounding stays far below the tolerance.
    auto q = [&](auto f) { return gaussian_derivatives(make_image(80, 70, f), o); };
    expect_interior(q([](double x, double) { return (x - 40) * (x - 40) / 2; })[2], 1.0, m, 2e-3, "Lxx");
    expect_interior(q([](double, double y) { return (y - 35) * (y - 35) / 2; })[4], 1.0, m, 2e-3, "Lyy");
    expect_interior(q([](double x, double y) { return (x - 40) * (y - 35); })[3], 1.0, m, 2e-3, "Lxy");
  }
}

// Our derivatives of a random w x h image against OpenCV's sepFilter2D with the same
// taps and BORDER_REFLECT_101, computed in double as an independent reference.
// OpenCV correlates (dst(x) = sum k[j] src(x + j - anchor)), our taps' convention.
// Tolerance: 1e-5 relative to the value, with the image's largest derivative (and
// `floor`) as the scale where the value itself is near zero.
void expect_matches_opencv(int w, int h, double sigma, std::mt19937& rng, double floor) {
  std::uniform_real_distribution<float> u(0.0f, 255.0f);
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img.at(x, y) = u(rng);
  GaussianOptions o;
  o.sigma = sigma;
  auto ours = gaussian_derivatives(img, o);
  auto k = kernels_for(o);
  cv::Mat src(h, w, CV_32F, img.data()), src64;
  src.convertTo(src64, CV_64F);
  for (std::size_t i = 0; i < o.derivatives.size(); ++i) {
    auto [ox, oy] = orders_of(o.derivatives[i]);
    cv::Mat kx64, ky64, ref;
    cv::Mat(1, k[std::size_t(ox)].size(), CV_32F, k[std::size_t(ox)].taps.data()).convertTo(kx64, CV_64F);
    cv::Mat(k[std::size_t(oy)].size(), 1, CV_32F, k[std::size_t(oy)].taps.data()).convertTo(ky64, CV_64F);
    cv::sepFilter2D(src64, ref, CV_64F, kx64, ky64, cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
    double scale = floor;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) scale = std::max(scale, std::abs(ref.at<double>(y, x)));
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const double r = ref.at<double>(y, x), v = ours[i].at(x, y);
        ASSERT_LE(std::abs(v - r), 1e-5 * std::max(std::abs(r), scale))
            << to_string(o.derivatives[i]) << " " << w << "x" << h << " sigma " << sigma << " at " << x << ","
            << y;
      }
  }
}

TEST(Derivatives, MatchOpenCvSepFilter2D) {
  std::mt19937 rng(7);
  for (double sigma : {1.0, 3.0, 5.0})
    for (auto [w, h] : {std::pair{97, 61}, std::pair{120, 90}}) expect_matches_opencv(w, h, sigma, rng, 0.0);
}

// Images not larger than the kernel border: mirroring reflects as often as needed
// (OpenCV's borderInterpolate rule; a 1-pixel axis replicates its pixel). The
// value range 255 is the floor of the scale: on such images some derivatives are
// float rounding of an exact 0.
TEST(Derivatives, TinyAndStripImagesMatchOpenCv) {
  std::mt19937 rng(11);
  for (double sigma : {1.0, 3.0})
    for (auto [w, h] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{1, 10}, std::pair{10, 1}, std::pair{3, 5},
                        std::pair{2, 40}, std::pair{1, 1000}})
      expect_matches_opencv(w, h, sigma, rng, 255.0);
}

TEST(Derivatives, PipelineDescription) {
  GaussianOptions o;
  o.sigma = 3;
  auto d = describe_pipeline(512, 256, o);
  EXPECT_EQ(d.halo, (Halo{12, 12}));
  EXPECT_EQ(d.gathers, 5);
  EXPECT_EQ(d.exchanges, 1);
  int y = 0, x = 0;
  for (const FilterPass& p : d.passes) (p.axis == Axis::y ? y : x)++;
  EXPECT_EQ(y, 3);  // y-smoothings of orders 0, 1, 2 shared by the five derivatives
  EXPECT_EQ(x, 5);
  EXPECT_EQ(pass_pixels(FilterPass{Axis::y, 15, 0}, 10, 20, Halo{3, 3}), 16 * 20);
  EXPECT_EQ(pass_pixels(FilterPass{Axis::x, 15, 0}, 10, 20, Halo{3, 3}), 10 * 20);
}

// Every sigma is either refused with a reason, before any large allocation, or gives
// finite taps: no NaN kernels, no int overflow, no runaway memory.
TEST(Kernel, RangeChecked) {
  auto refused = [](double sigma, std::optional<int> radius, const char* why) {
    GaussianOptions o;
    o.sigma = sigma;
    o.radius = radius;
    try {
      (void)kernels_for(o);
      ADD_FAILURE() << "sigma " << sigma << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(0.01, {}, "too small");
  refused(1e-9, {}, "too small");
  refused(1e-9, 3, "too small");
  refused(5e8, {}, "above the limit");
  refused(1e18, {}, "above the limit");
  refused(1e300, {}, "above the limit");
  refused(std::numeric_limits<double>::infinity(), {}, "finite");
  refused(std::numeric_limits<double>::quiet_NaN(), {}, "finite");
  refused(1.0, 1000000000, "above the limit");
  refused(1.0, 0, "at least 1");
  refused(1e10, 5, "rounding noise");
  refused(1e300, 5, "cannot be normalised");
  for (double sigma : {kMinSigma, 0.03, 0.1, 0.5, 1e3, kMaxRadius / 3.75}) {
    GaussianOptions o;
    o.sigma = sigma;
    for (const Kernel1D& k : kernels_for(o))
      for (float t : k.taps) ASSERT_TRUE(std::isfinite(t)) << "sigma " << sigma << " order " << k.order;
  }
  GaussianOptions big;
  big.sigma = 1e4;
  big.radius = 5;
  EXPECT_NO_THROW(kernels_for(big));  // sigma far above the radius, but not too far
}

TEST(Mirror, Reflect101IsOpenCvsBorderInterpolate) {
  for (int n = 1; n <= 7; ++n)
    for (int p = -40; p <= 40; ++p)
      ASSERT_EQ(reflect_101(p, n), cv::borderInterpolate(p, n, cv::BORDER_REFLECT_101)) << p << " in " << n;
}

TEST(Derivatives, FiniteAtTheSmallestSigma) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 255.0f);
  Image img(9, 7);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 9; ++x) img.at(x, y) = u(rng);
  GaussianOptions o;
  o.sigma = kMinSigma;
  for (const Image& d : gaussian_derivatives(img, o))
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < 9; ++x) ASSERT_TRUE(std::isfinite(d.at(x, y)));
}

}  // namespace
}  // namespace tessera
