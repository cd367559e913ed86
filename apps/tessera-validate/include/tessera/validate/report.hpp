#pragma once
// What tessera-validate writes for people: hand-written SVG bar charts, the CSV behind
// them and a Markdown index. Pure: strings in, strings out.
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/validate/analysis.hpp"

namespace tessera::validation {

/// One bar per category. lo/hi (same length as values, or empty) draw a whisker, e.g.
/// the first to third quartile of a measurement. A negative or NaN value is "no bar".
struct Series {
  std::string name;
  std::vector<double> values;
  std::vector<double> lo, hi;
};

/// Grouped bars: one group per category, one bar per series, a legend, a y axis from 0.
struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<Series> series;
};

/// The chart as a standalone SVG document. Throws InvalidArgument if a series' length
/// differs from the number of categories.
std::string to_svg(const BarChart& chart);

/// Escapes &, <, >, " for XML text and attributes.
std::string xml_escape(const std::string& text);
/// A CSV field: quoted (with doubled quotes) when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

/// Measured against predicted for one scenario and phase: categories are the labels of
/// the observations (grids and algorithms), the first series the measured median with
/// its quartiles, then one series per model.
BarChart phase_chart(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                     int scenario, Phase phase, const std::vector<std::string>& models);
/// Median (and a second series with the 90th percentile) absolute relative error per
/// model, one group per phase.
BarChart error_chart(const std::vector<Observation>& observations, const std::vector<std::string>& models);
/// Regret per scenario (each P alone) for each model and baseline.
BarChart regret_chart(const std::vector<Scenario>& scenarios, const std::vector<Decision>& decisions,
                      const std::vector<std::string>& models);

/// One row per observation and model: scenario, grid, algorithms, phase, measured
/// median / q1 / q3 / samples, model, predicted, abs_rel_error (µs), app (last, so
/// that older readers' columns keep their places).
std::string observations_csv(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                             const std::vector<std::string>& models);
/// One row per model and phase (plus "all"): observations, median, p90.
std::string accuracy_csv(const std::vector<Observation>& observations, const std::vector<std::string>& models);
/// One row per scenario and chooser: chosen plan, its time, best plan, best time,
/// regret, app (last).
std::string decisions_csv(const std::vector<Scenario>& scenarios, const std::vector<Decision>& decisions);

/// A chart file to link from the index.
struct ChartLink {
  std::string title;
  std::string file;  ///< relative to the index
};
/// The index page: how to read the charts, the summary table (over every app, then per
/// app when `scenarios` holds several), links to charts and CSV. With `scenarios`, each
/// decision over P names its problem's app, size and sigma.
std::string index_markdown(const std::string& heading, const std::vector<std::string>& notes,
                           const std::vector<Observation>& observations, const std::vector<Decision>& decisions,
                           const std::vector<ProcsDecision>& procs_decisions,
                           const std::vector<std::string>& models, const std::vector<ChartLink>& charts,
                           const std::vector<std::string>& csv_files, const std::vector<Scenario>& scenarios = {});



}  // namespace tessera::validation
