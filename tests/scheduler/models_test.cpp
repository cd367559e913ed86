// Cost models reproduce hand-computed values on small tables.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/error.hpp"
#include "tessera/scheduler/machine.hpp"
#include "tessera/scheduler/model.hpp"

using namespace tessera;
using namespace tessera::scheduler;

namespace {

// Every (path, layout) curve with two points: T(0) = base + k, T(400 B) = base + k + slope*400,
// where k distinguishes the 12 curves so a mix-up shows.
P3pcTable distinct_table() {
  P3pcTable t;
  for (Path p : kPaths)
    for (Layout l : kLayouts) {
      const double k = int(p) * 10 + int(l);
      t.curve(p, l) = PiecewiseLinear({{0, 5 + k}, {400, 25 + 3 * k}, {800, 30 + 3 * k}});
    }
  return t;
}

MachineParams machine_with(P3pcTable t) {
  MachineParams m;
  m.name = "test";
  m.p3pc[int(Level::inter)] = std::move(t);
  return m;
}

}  // namespace

TEST(PiecewiseLinear, InterpolatesAndExtendsEndSegments) {
  PiecewiseLinear f({{100, 10}, {0, 0}, {200, 30}});
  EXPECT_DOUBLE_EQ(f(50), 5);
  EXPECT_DOUBLE_EQ(f(150), 20);
  EXPECT_DOUBLE_EQ(f(300), 50);    // past the last point: last segment, slope 0.2
  EXPECT_DOUBLE_EQ(f(-100), -10);  // below the first: first segment
  EXPECT_DOUBLE_EQ(PiecewiseLinear({{5, 7}})(1e9), 7);
  EXPECT_DOUBLE_EQ(PiecewiseLinear({{0, 1}, {0, 3}, {10, 12}})(0), 2);  // repeats averaged
}

TEST(P3pcCsv, ParsesFloatsAsBytesAndRejectsBadRows) {
  const auto t = parse_p3pc_csv(
      "# comment\npath,layout,floats,time_us\nsend,cc,0,1.5\nsend,cc,100,41.5\nfull,nn,10,7\n");
  EXPECT_DOUBLE_EQ(t.curve(Path::send, Layout::cc)(400), 41.5);  // 100 floats = 400 bytes
  EXPECT_DOUBLE_EQ(t.curve(Path::send, Layout::cc)(200), 21.5);
  EXPECT_DOUBLE_EQ(t.curve(Path::full, Layout::nn)(0), 7);
  EXPECT_TRUE(t.curve(Path::recv, Layout::cc).empty());
  EXPECT_FALSE(t.complete());
  EXPECT_THROW(parse_p3pc_csv("path,layout,bytes,time_us\n"), InvalidArgument);
  try {
    parse_p3pc_csv("path,layout,floats,time_us\nsend,cx,1,2\n");
    FAIL() << "bad layout accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_p3pc_csv("path,layout,floats,time_us\nsend,cc,-1,2\n"), InvalidArgument);
  // Round trip through to_csv.
  const auto t2 = parse_p3pc_csv(to_csv(distinct_table()));
  for (double b : {0.0, 123.0, 640.0, 2000.0})
    EXPECT_DOUBLE_EQ(t2.curve(Path::recv, Layout::nc)(b), distinct_table().curve(Path::recv, Layout::nc)(b));
}

TEST(P3pc, InterpolatesStoredTotalsPerPathAndLayout) {
  const auto m = make_model(ModelKind::p3pc, machine_with(distinct_table()));
  // full,nn: k = 23 -> T(0) = 28, T(400) = 94, T(800) = 99.
  EXPECT_DOUBLE_EQ(m->full(Layout::nn, 0), 28);
  EXPECT_DOUBLE_EQ(m->full(Layout::nn, 200), 61);
  EXPECT_DOUBLE_EQ(m->full(Layout::nn, 1200), 104);  // last segment extended
  // send,cn: k = 1 -> T(400) = 28.
  EXPECT_DOUBLE_EQ(m->send(Layout::cn, 400), 28);
  // The intra level falls back to the only table measured.
  EXPECT_DOUBLE_EQ(m->recv(Layout::cc, 400, Level::intra), m->recv(Layout::cc, 400, Level::inter));
}

TEST(ThreePc, FitsOneLinePerPathThroughTheConstant) {
  P3pcTable t = distinct_table();
  t.curve(Path::send, Layout::cc) = PiecewiseLinear({{0, 10}, {400, 30}, {800, 60}});
  const auto m = make_model(ModelKind::three_pc, machine_with(t));
  // t_c = 10, t_a = (400*20 + 800*50) / (400^2 + 800^2) = 0.06.
  EXPECT_NEAR(m->send(Layout::nn, 1000), 10 + 0.06 * 1000, 1e-9);
  EXPECT_NEAR(m->send(Layout::cc, 0), 10, 1e-12);
}

TEST(LoggpStar, IsThePapersReduction) {
  const auto m = make_model(ModelKind::loggp_star, machine_with(distinct_table()));
  // g = T_send,cc(0) = 5, L = T_full,cc(0) = 25, G(n) = T_full,cc(n) - 25 (full,cc: k = 20).
  EXPECT_DOUBLE_EQ(m->send(Layout::nn, 400), 5 + (85 - 25));
  EXPECT_DOUBLE_EQ(m->recv(Layout::cn, 200), 5 + (55 - 25));
  EXPECT_DOUBLE_EQ(m->full(Layout::nc, 800), 90);
}

TEST(LoggpStar, EqualsP3pcWhenLayoutsAgreeAndPathsShareTheAdditionalTime) {
  // The reduction's assumptions: t_cs = t_cr = g, t_cf = L, t_as = t_ar = t_af = G(n).
  const PiecewiseLinear G({{0, 0}, {4096, 40}, {204800, 1500}, {2048000, 16000}});
  P3pcTable t;
  for (Layout l : kLayouts) {
    std::vector<std::pair<double, double>> s, f;
    for (std::size_t i = 0; i < G.xs().size(); ++i) {
      s.emplace_back(G.xs()[i], 6 + G.ys()[i]);
      f.emplace_back(G.xs()[i], 24 + G.ys()[i]);
    }
    t.curve(Path::send, l) = PiecewiseLinear(s);
    t.curve(Path::recv, l) = PiecewiseLinear(s);
    t.curve(Path::full, l) = PiecewiseLinear(f);
  }
  const auto mach = machine_with(t);
  const auto p3 = make_model(ModelKind::p3pc, mach);
  const auto star = make_model(ModelKind::loggp_star, mach);
  for (Path p : kPaths)
    for (Layout l : kLayouts)
      for (double b : {0.0, 1.0, 1000.0, 4096.0, 10000.0, 500000.0, 5e6})
        EXPECT_NEAR(p3->time_us({p, l, b}), star->time_us({p, l, b}), 1e-9) << b;
  // ... and differ once a layout has its own numbers.
  auto t2 = t;
  t2.curve(Path::full, Layout::nn) = PiecewiseLinear({{0, 24}, {4096, 400}});
  const auto mach2 = machine_with(t2);
  EXPECT_GT(make_model(ModelKind::p3pc, mach2)->full(Layout::nn, 4096),
            make_model(ModelKind::loggp_star, mach2)->full(Layout::nn, 4096));
}

TEST(Log3p, MiddlewareOverheadLatencyAndNetwork) {
  MachineParams m = machine_with(distinct_table());
  m.log3p[int(Level::inter)] = {PiecewiseLinear({{0, 10}, {1000, 20}}), PiecewiseLinear({{0, 0}, {1000, 8}}),
                                PiecewiseLinear({{0, 5}, {1000, 15}})};
  m.log3p[int(Level::intra)] = {
      PiecewiseLinear({{0, 2}, {1000, 4}}), PiecewiseLinear({{0, 0}, {1000, 2}}), {}};
  const auto one = make_model(ModelKind::log3p, m);
  const auto two = make_model(ModelKind::two_log23p, m);
  // inter at 500 B: o_mw = 15, l_mw = 4, o_net = 10.
  EXPECT_DOUBLE_EQ(one->full(Layout::cc, 500), 25);
  EXPECT_DOUBLE_EQ(one->full(Layout::nn, 500), 29);
  EXPECT_DOUBLE_EQ(one->full(Layout::nc, 500), 27);       // one noncontiguous end: l_mw / 2
  // The sender: o_mw / 2 + its l + the network (a blocking send waits for the network).
  EXPECT_DOUBLE_EQ(one->send(Layout::nc, 500), 7.5 + 2 + 10);
  EXPECT_DOUBLE_EQ(one->recv(Layout::nc, 500), 7.5 + 10);  // and the receiver's link too
  // log3P has one level; 2log{2,3}P prices intra pairs with intra parameters and no network.
  EXPECT_DOUBLE_EQ(one->full(Layout::nn, 500, Level::intra), 29);
  EXPECT_DOUBLE_EQ(two->full(Layout::nn, 500, Level::intra), 3 + 1);
  EXPECT_DOUBLE_EQ(two->full(Layout::nn, 500, Level::inter), 29);
  EXPECT_DOUBLE_EQ(two->send(Layout::cc, 500, Level::intra), 1.5);
  // An intra o_net the benchmarker measured (shared-memory copy) is kept.
  m.log3p[int(Level::intra)].o_net = PiecewiseLinear({{0, 100}});
  EXPECT_DOUBLE_EQ(make_model(ModelKind::two_log23p, m)->full(Layout::nn, 500, Level::intra), 104);
  // Only inter measured: intra pairs borrow it without the network term.
  m.log3p[int(Level::intra)] = {};
  EXPECT_DOUBLE_EQ(make_model(ModelKind::two_log23p, m)->full(Layout::nn, 500, Level::intra), 19);
  // Negative decompositions (noisy o_mw) never price a message below zero.
  m.log3p[int(Level::inter)].o_mw = PiecewiseLinear({{0, -50}});
  EXPECT_DOUBLE_EQ(make_model(ModelKind::log3p, m)->send(Layout::cc, 500), 0);
}

TEST(Loggp, PerProtocolRange) {
  MachineParams m = machine_with(distinct_table());
  m.loggp[int(Level::inter)] = {{0, 5.0, 1.5, 1.0, 0.001}, {12289, 5.0, 1.5, 12.0, 0.0005}};
  const auto g = make_model(ModelKind::loggp, m);
  EXPECT_DOUBLE_EQ(g->full(Layout::cc, 1001), 2 * 1.5 + 5 + 1000 * 0.001);
  EXPECT_DOUBLE_EQ(g->send(Layout::cc, 1001), 1.5 + 1.0);
  EXPECT_DOUBLE_EQ(g->send(Layout::cc, 20001), 12 + 20000 * 0.0005);  // g > o in the long range
  EXPECT_DOUBLE_EQ(g->recv(Layout::nn, 20001), 1.5);
  EXPECT_DOUBLE_EQ(g->full(Layout::cc, 0), 8);
}

TEST(Logpc, ContentionSolvesTheClosedModelAndOnlyAppliesToConcurrentMessages) {
  const double B = 4096, T = 50, G = 0.001, kd = 2.5;
  const int n = 2;
  const double C = logpc_contention_us(B, T, G, n, kd);
  ASSERT_GT(C, 0);
  // Eq. 7: m = 1 / (T + C) with C = a m / (1 - b m), all in channel byte-times.
  const double m = 1 / ((T + C) / G);
  const double a = (n + 1) * (kd - 1) * B * B / 2, b = B * kd / 2;
  EXPECT_NEAR(C / G, a * m / (1 - b * m), 1e-6 * C / G);
  EXPECT_EQ(logpc_contention_us(B, T, G, n, 1.0), 0);  // neighbours only: no contention

  MachineParams mp = machine_with(distinct_table());
  mp.loggp[int(Level::inter)] = {{0, 5.0, 1.5, 1.0, 0.001}};
  mp.logpc = {2, 2.5, std::nullopt};
  const auto lg = make_model(ModelKind::loggp, mp);
  const auto pc = make_model(ModelKind::logpc, mp);
  Message alone{Path::full, Layout::cc, 4096, Level::inter, 1, 16};
  EXPECT_DOUBLE_EQ(pc->time_us(alone), lg->time_us(alone));
  Message crowd = alone;
  crowd.concurrent = 16;
  EXPECT_GT(pc->time_us(crowd), lg->time_us(crowd));
  crowd.path = Path::send;
  EXPECT_DOUBLE_EQ(pc->time_us(crowd), lg->time_us(crowd));
}

TEST(Models, NamesRoundTripAndMissingParametersAreReported) {
  for (ModelKind k : kModelKinds) EXPECT_EQ(parse_model(to_string(k)), k);
  EXPECT_THROW(parse_model("logp"), InvalidArgument);
  MachineParams empty;
  empty.name = "nothing";
  for (ModelKind k : kModelKinds) EXPECT_THROW(make_model(k, empty), InvalidArgument) << to_string(k);
}

TEST(Derived, LoggpAndLog3pFromP3pc) {
  const auto t = distinct_table();
  const auto r = loggp_from_p3pc(t);
  ASSERT_EQ(r.size(), 2u);
  // o = T_send,cc(0) = 5, L = T_full,cc(0) - 2o = 25 - 10, G = slope of full,cc per segment.
  EXPECT_DOUBLE_EQ(r[0].o, 5);
  EXPECT_DOUBLE_EQ(r[0].L, 15);
  EXPECT_DOUBLE_EQ(r[0].G, (85.0 - 25.0) / 400);
  EXPECT_DOUBLE_EQ(r[1].min_bytes, 400);
  EXPECT_DOUBLE_EQ(r[1].G, 5.0 / 400);
  const auto l = log3p_from_p3pc(t);
  EXPECT_DOUBLE_EQ(l.o_mw(400), 85);
  EXPECT_DOUBLE_EQ(l.l_mw(400), (25 + 3 * 23) - 85.0);  // full,nn - full,cc
}

TEST(ComputeTable, NearestTileThenLinearInTaps) {
  ComputeTable t({{0, 3, 64, 64, 1.0}, {0, 3, 1024, 1024, 2.0}, {0, 11, 64, 64, 5.0}, {1, 3, 64, 64, 7.0}});
  EXPECT_DOUBLE_EQ(t.ns_per_pixel(0, 3, 60, 70), 1.0);
  EXPECT_DOUBLE_EQ(t.ns_per_pixel(0, 3, 900, 1000), 2.0);
  EXPECT_DOUBLE_EQ(t.ns_per_pixel(0, 7, 64, 64), 3.0);   // halfway between 3 and 11 taps
  EXPECT_DOUBLE_EQ(t.ns_per_pixel(0, 15, 64, 64), 7.0);  // extended past 11 taps
  EXPECT_DOUBLE_EQ(t.ns_per_pixel(1, 9, 64, 64), 7.0);   // one tap count measured on y: constant
  EXPECT_THROW(ComputeTable({{0, 0, 1, 1, 1.0}}), InvalidArgument);
  // Odd-order kernels are priced from their own points when measured.
  EXPECT_DOUBLE_EQ(t.ns_per_pixel(0, 3, 64, 64, true), 1.0);  // none measured: the others
  ComputeTable o({{0, 23, 64, 64, 1.0}, {0, 23, 64, 64, 1.5, true}});
  EXPECT_DOUBLE_EQ(o.ns_per_pixel(0, 23, 64, 64, false), 1.0);
  EXPECT_DOUBLE_EQ(o.ns_per_pixel(0, 23, 64, 64, true), 1.5);
  EXPECT_DOUBLE_EQ(o.ns_per_pixel(1, 23, 64, 64, true), 1.5);  // y falls back to x, same parity
}
