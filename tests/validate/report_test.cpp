// tessera-validate's writers: SVG charts, CSV, the Markdown index.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/validate/report.hpp"

using namespace tessera;
using namespace tessera::validation;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<Observation> sample() {
  std::vector<Observation> o;
  Plan p;
  p.grid = Grid{1, 2};
  for (auto s : {ScatterAlgorithm::oft, ScatterAlgorithm::sbt}) {
    p.scatter = s;
    Observation x;
    x.phase = Phase::scatter;
    x.plan = p;
    x.measured = {100, 90, 120, 9};
    x.predicted = {{"p3pc", 95}, {"log3p", 300}};
    o.push_back(x);
  }
  Observation t;
  t.phase = Phase::total;
  t.plan = p;
  t.measured = {1000, 900, 1100, 9};
  t.predicted = {{"p3pc", 1100}};
  o.push_back(t);
  return o;
}

}  // namespace

TEST(ValidateReport, EscapesXmlAndCsv) {
  EXPECT_EQ(xml_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(ValidateReport, SvgHasOneBarPerValueAWhiskerAndALegend) {
  BarChart c{"title <x>", "time (µs)", {"1x2 oft", "2x1 sbt"}, {}};
  c.series.push_back({"measured", {100, 200}, {90, 180}, {110, 230}});
  c.series.push_back({"p3pc", {120, -1}, {}, {}});  // -1: no prediction, no bar
  const std::string svg = to_svg(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("title &lt;x&gt;"), std::string::npos);
  // background + 3 bars + 2 legend swatches
  EXPECT_EQ(count(svg, "<rect"), 1 + 3 + 2);
  EXPECT_NE(svg.find(">measured<"), std::string::npos);
  EXPECT_NE(svg.find(">p3pc<"), std::string::npos);
  EXPECT_NE(svg.find(">1x2 oft<"), std::string::npos);
  EXPECT_NE(svg.find(">250<"), std::string::npos);  // the axis reaches past the top whisker
  c.series[1].values.pop_back();
  EXPECT_THROW(to_svg(c), InvalidArgument);
}

TEST(ValidateReport, PhaseChartPairsMeasuredWithEachModel) {
  const std::vector<Scenario> sc{{512, 512, 1, 2}};
  const BarChart c = phase_chart(sc, sample(), 0, Phase::scatter, {"p3pc", "log3p", "loggp"});
  ASSERT_EQ(c.categories.size(), 2u);
  EXPECT_EQ(c.categories[0], "1x2 oft");
  ASSERT_EQ(c.series.size(), 4u);
  EXPECT_DOUBLE_EQ(c.series[0].values[1], 100);
  EXPECT_DOUBLE_EQ(c.series[0].hi[0], 120);
  EXPECT_DOUBLE_EQ(c.series[2].values[0], 300);
  EXPECT_LT(c.series[3].values[0], 0);  // loggp predicted nothing
  const BarChart e = error_chart(sample(), {"p3pc"});
  EXPECT_EQ(e.categories.back(), "all");
  EXPECT_NEAR(e.series[0].values[0], 0.05, 1e-12);  // scatter median error of p3pc
}

TEST(ValidateReport, CsvRowsPerObservationAndModel) {
  const std::vector<Scenario> sc{{512, 512, 1, 2}};
  const std::string csv = observations_csv(sc, sample(), {"p3pc", "log3p"});
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("width,height,sigma,procs,phase,grid", 0), 0u);
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 2 + 2 + 1);  // two scatters priced by both models, the total by p3pc
  EXPECT_NE(csv.find(",p3pc,1100,0.1,gauss\n"), std::string::npos);
  const std::string acc = accuracy_csv(sample(), {"p3pc"});
  EXPECT_NE(acc.find("p3pc,all,3,"), std::string::npos);
}

TEST(ValidateReport, IndexLinksChartsAndData) {
  ProcsDecision d;
  d.chooser = "p3pc";
  d.chosen = Plan{Grid{1, 2}};
  d.best = Plan{Grid{1, 1}};
  d.chosen_us = 150;
  d.best_us = 100;
  d.regret = 1.5;
  const std::string md = index_markdown("tessera-validate: vm", {"a note"}, sample(), {}, {d}, {"p3pc"},
                                        {{"Errors", "errors.svg"}}, {"observations.csv"});
  EXPECT_NE(md.find("| 1 | p3pc | 2 | 1x2 scatter=sbt gather=sbt exchange=nonblocking | 150 | 1 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| baseline petsc-dmda |"), std::string::npos);
  EXPECT_NE(md.find("# tessera-validate: vm"), std::string::npos);
  EXPECT_NE(md.find("- a note"), std::string::npos);
  EXPECT_NE(md.find("[Errors](errors.svg)"), std::string::npos);
  EXPECT_NE(md.find("[observations.csv](observations.csv)"), std::string::npos);
  EXPECT_NE(md.find("| p3pc |"), std::string::npos);
}

