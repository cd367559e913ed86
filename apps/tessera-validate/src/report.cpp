#include "tessera/validate/report.hpp"

#include "tessera/validate/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/names.hpp"

namespace tessera::validation {
namespace {

// Measured in near-black, models in a colour-blind-safe palette (Okabe-Ito order).
const char* const kColours[] = {"#222222", "#E69F00", "#56B4E9", "#009E73", "#F0E442",
                                "#0072B2", "#D55E00", "#CC79A7", "#999999"};

std::string num(double v, int precision = 4) {
  std::ostringstream out;
  out << std::setprecision(precision) << v;
  return out.str();
}

bool has_bar(double v) { return std::isfinite(v) && v >= 0; }

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks.
double nice_step(double top, int ticks) {
  const double raw = top / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string to_svg(const BarChart& chart) {
  const std::size_t groups = chart.categories.size();
  const std::size_t bars = chart.series.size();
  for (const auto& s : chart.series) {
    if (s.values.size() != groups) throw InvalidArgument("series '" + s.name + "' does not match the categories");
    if ((!s.lo.empty() && s.lo.size() != groups) || (!s.hi.empty() && s.hi.size() != groups))
      throw InvalidArgument("whiskers of series '" + s.name + "' do not match the categories");
  }
  double top = 0;
  for (const auto& s : chart.series)
    for (std::size_t i = 0; i < groups; ++i) {
      if (has_bar(s.values[i])) top = std::max(top, s.values[i]);
      if (!s.hi.empty() && has_bar(s.hi[i])) top = std::max(top, s.hi[i]);
    }
  if (!(top > 0)) top = 1;
  const double step = nice_step(top, 5);
  top = std::ceil(top / step) * step;

  const double bar_w = bars > 6 ? 9 : 14, group_gap = 18;
  const double group_w = std::max<double>(1, bars) * bar_w + group_gap;
  std::size_t longest = 0, longest_name = 0;
  for (const auto& c : chart.categories) longest = std::max(longest, c.size());
  for (const auto& s : chart.series) longest_name = std::max(longest_name, s.name.size());
  // Room for the first rotated category label on the left and the legend on the right.
  const double left = std::max(78.0, 5.0 * double(longest) - 20), plot_top = 46, plot_h = 300;
  const double legend_w = 30 + 6.5 * double(longest_name);
  const double label_h = 12 + 5.2 * double(longest) * 0.6;  // rotated labels, -35 degrees
  const double plot_w = std::max(320.0, group_w * double(groups));
  const double width = left + plot_w + 20 + legend_w;
  const double height = plot_top + plot_h + label_h + 40;
  auto y_of = [&](double v) { return plot_top + plot_h * (1 - v / top); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width, 6) << "\" height=\""
      << num(height, 6) << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << num(left, 6) << "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">"
      << xml_escape(chart.title) << "</text>\n";
  // Grid lines and y ticks.
  for (double v = 0; v <= top + step / 2; v += step) {
    const double y = y_of(v);
    svg << "<line x1=\"" << num(left, 6) << "\" y1=\"" << num(y, 6) << "\" x2=\"" << num(left + plot_w, 6)
        << "\" y2=\"" << num(y, 6) << "\" stroke=\"#dddddd\"/>\n";
    svg << "<text x=\"" << num(left - 6, 6) << "\" y=\"" << num(y + 4, 6) << "\" text-anchor=\"end\">"
        << num(v) << "</text>\n";
  }
  svg << "<text transform=\"translate(16," << num(plot_top + plot_h / 2, 6)
      << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(chart.y_label) << "</text>\n";
  // Bars, whiskers, category labels.
  for (std::size_t g = 0; g < groups; ++g) {
    const double x0 = left + group_gap / 2 + double(g) * group_w;
    for (std::size_t b = 0; b < bars; ++b) {
      const auto& s = chart.series[b];
      const double v = s.values[g];
      if (!has_bar(v)) continue;
      const double x = x0 + double(b) * bar_w;
      svg << "<rect x=\"" << num(x, 6) << "\" y=\"" << num(y_of(v), 6) << "\" width=\"" << num(bar_w - 1, 6)
          << "\" height=\"" << num(plot_top + plot_h - y_of(v), 6) << "\" fill=\"" << kColours[b % 9]
          << "\"><title>" << xml_escape(s.name + " " + chart.categories[g] + ": " + num(v)) << "</title></rect>\n";
      if (!s.lo.empty() && !s.hi.empty() && has_bar(s.lo[g]) && has_bar(s.hi[g])) {
        const double cx = x + (bar_w - 1) / 2;
        svg << "<line x1=\"" << num(cx, 6) << "\" y1=\"" << num(y_of(s.lo[g]), 6) << "\" x2=\"" << num(cx, 6)
            << "\" y2=\"" << num(y_of(s.hi[g]), 6) << "\" stroke=\"#888888\" stroke-width=\"2\"/>\n";
        for (double w : {s.lo[g], s.hi[g]})
          svg << "<line x1=\"" << num(cx - 3, 6) << "\" y1=\"" << num(y_of(w), 6) << "\" x2=\"" << num(cx + 3, 6)
              << "\" y2=\"" << num(y_of(w), 6) << "\" stroke=\"#888888\" stroke-width=\"2\"/>\n";
      }
    }
    const double cx = x0 + double(bars) * bar_w / 2;
    svg << "<text transform=\"translate(" << num(cx, 6) << "," << num(plot_top + plot_h + 14, 6)
        << ") rotate(-35)\" text-anchor=\"end\">" << xml_escape(chart.categories[g]) << "</text>\n";
  }
  svg << "<line x1=\"" << num(left, 6) << "\" y1=\"" << num(plot_top + plot_h, 6) << "\" x2=\""
      << num(left + plot_w, 6) << "\" y2=\"" << num(plot_top + plot_h, 6) << "\" stroke=\"black\"/>\n";
  svg << "<line x1=\"" << num(left, 6) << "\" y1=\"" << num(plot_top, 6) << "\" x2=\"" << num(left, 6)
      << "\" y2=\"" << num(plot_top + plot_h, 6) << "\" stroke=\"black\"/>\n";
  // Legend.
  const double lx = left + plot_w + 20;
  for (std::size_t b = 0; b < bars; ++b) {
    const double ly = plot_top + 4 + double(b) * 18;
    svg << "<rect x=\"" << num(lx, 6) << "\" y=\"" << num(ly, 6) << "\" width=\"12\" height=\"12\" fill=\""
        << kColours[b % 9] << "\"/>\n";
    svg << "<text x=\"" << num(lx + 18, 6) << "\" y=\"" << num(ly + 10, 6) << "\">"
        << xml_escape(chart.series[b].name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

BarChart phase_chart(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                     int scenario, Phase phase, const std::vector<std::string>& models) {
  BarChart c;
  c.title = std::string(to_string(phase)) + ", " + to_string(scenarios.at(scenario)) + ": measured vs predicted" +
            (phase == Phase::total ? " (grid scatter/gather/exchange)" : "");
  c.y_label = "time (µs)";
  Series measured{"measured (median, q1-q3)", {}, {}, {}};
  std::vector<Series> predicted;
  for (const auto& m : models) predicted.push_back({m, {}, {}, {}});
  for (const auto& o : observations) {
    if (o.scenario != scenario || o.phase != phase) continue;
    c.categories.push_back(label(o));
    measured.values.push_back(o.measured.median);
    measured.lo.push_back(o.measured.q1);
    measured.hi.push_back(o.measured.q3);
    for (std::size_t i = 0; i < models.size(); ++i) {
      const auto it = o.predicted.find(models[i]);
      predicted[i].values.push_back(it == o.predicted.end() ? -1.0 : it->second);
    }
  }
  c.series.push_back(std::move(measured));
  for (auto& s : predicted) c.series.push_back(std::move(s));
  return c;
}

BarChart error_chart(const std::vector<Observation>& observations, const std::vector<std::string>& models) {
  BarChart c;
  c.title = "Absolute relative error per model (bars: median, whisker to the 90th percentile)";
  c.y_label = "|predicted - measured| / measured";
  std::vector<std::string> phases;
  for (Phase p : kPhases) phases.emplace_back(to_string(p));
  phases.emplace_back("all");
  c.categories = phases;
  for (const auto& m : models) {
    const Accuracy a = accuracy(observations, m);
    Series s{m, {}, {}, {}};
    for (const auto& p : phases) {
      const auto it = a.find(p);
      const bool ok = it != a.end() && it->second.count > 0;
      s.values.push_back(ok ? it->second.median : -1.0);
      s.lo.push_back(ok ? it->second.median : -1.0);
      s.hi.push_back(ok ? it->second.p90 : -1.0);
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

BarChart regret_chart(const std::vector<Scenario>& scenarios, const std::vector<Decision>& decisions,
                      const std::vector<std::string>& models) {
  BarChart c;
  c.title = "Regret at each P: measured time of the chosen plan / best measured plan of that P (1 = best)";
  c.y_label = "regret";
  for (const auto& s : scenarios) c.categories.push_back(to_string(s));
  std::vector<std::string> choosers = models;
  for (auto b : kBaselines) choosers.emplace_back(b);
  for (const auto& m : choosers) {
    Series s{m, std::vector<double>(scenarios.size(), -1.0), {}, {}};
    for (const auto& d : decisions)
      if (d.chooser == m && d.scenario >= 0 && std::size_t(d.scenario) < scenarios.size())
        s.values[d.scenario] = d.regret;
    c.series.push_back(std::move(s));
  }
  return c;
}

std::string observations_csv(const std::vector<Scenario>& scenarios, const std::vector<Observation>& observations,
                             const std::vector<std::string>& models) {
  std::ostringstream out;
  out << std::setprecision(8);
  out << "width,height,sigma,procs,phase,grid,scatter,gather,exchange,label,measured_us,q1_us,q3_us,samples,"
         "disturbed_left_out,model,predicted_us,abs_rel_error,app\n";
  for (const auto& o : observations) {
    const Scenario& s = scenarios.at(o.scenario);
    const bool any = o.phase == Phase::total;
    for (const auto& m : models) {
      const auto it = o.predicted.find(m);
      if (it == o.predicted.end()) continue;
      out << s.width << ',' << s.height << ',' << s.sigma << ',' << s.procs << ',' << to_string(o.phase) << ','
          << tessera::to_string(o.plan.grid) << ','
          << (any || o.phase == Phase::scatter ? std::string(tessera::to_string(o.plan.scatter)) : "") << ','
          << (any || o.phase == Phase::gather ? std::string(tessera::to_string(o.plan.gather)) : "") << ','
          << (any || o.phase == Phase::exchange ? std::string(tessera::to_string(o.plan.exchange)) : "") << ','
          << csv_field(label(o)) << ',' << o.measured.median << ',' << o.measured.q1 << ',' << o.measured.q3 << ','
          << o.measured.samples << ',' << o.measured.disturbed << ',' << m << ',' << it->second << ','
          << (o.measured.median > 0 ? abs_rel_error(it->second, o.measured.median) : 0.0) << ',' << s.app << '\n';
    }
  }
  return out.str();
}

std::string accuracy_csv(const std::vector<Observation>& observations, const std::vector<std::string>& models) {
  std::ostringstream out;
  out << std::setprecision(6);
  out << "model,phase,observations,median_abs_rel_error,p90_abs_rel_error\n";
  for (const auto& m : models)
    for (const auto& [phase, s] : accuracy(observations, m))
      out << m << ',' << phase << ',' << s.count << ',' << s.median << ',' << s.p90 << '\n';
  return out.str();
}

std::string decisions_csv(const std::vector<Scenario>& scenarios, const std::vector<Decision>& decisions) {
  std::ostringstream out;
  out << std::setprecision(8);
  out << "width,height,sigma,procs,chooser,chosen,chosen_us,best,best_us,regret,app\n";
  for (const auto& d : decisions) {
    const Scenario& s = scenarios.at(d.scenario);
    out << s.width << ',' << s.height << ',' << s.sigma << ',' << s.procs << ',' << d.chooser << ','
        << csv_field(describe(d.chosen)) << ',' << d.chosen_us << ',' << csv_field(describe(d.best)) << ','
        << d.best_us << ',' << d.regret << ',' << s.app << '\n';
  }
  return out.str();
}

std::string index_markdown(const std::string& heading, const std::vector<std::string>& notes,
                           const std::vector<Observation>& observations, const std::vector<Decision>& decisions,
                           const std::vector<ProcsDecision>& procs_decisions,
                           const std::vector<std::string>& models, const std::vector<ChartLink>& charts,
                           const std::vector<std::string>& csv_files, const std::vector<Scenario>& scenarios) {
  std::ostringstream out;
  out << std::setprecision(3);
  out << "# " << heading << "\n\n";
  for (const auto& n : notes) out << "- " << n << "\n";
  if (!notes.empty()) out << "\n";
  out << "## Summary\n\n"
         "Error = |predicted − measured| / measured over scatter, exchange, gather and the whole "
         "program (compute is listed per phase only: every model prices it alike; for edges and corners it "
         "also holds the reductions and the hysteresis loop, on both sides). Regret over P = "
         "measured time of the plan the model picks among every P, grid and algorithm (its cheapest "
         "prediction) ÷ the best plan measured at any P (1.00 = it picked the best). Regret at fixed P = "
         "the same within each P alone. A baseline runs on every rank started. The noise floor is "
         "what a perfect chooser loses to the measurements: the best plan by one half of each plan's "
         "rounds, timed by the other half (the mean of both ways).\n\n";
  auto table = [&](const std::vector<Observation>& obs, const std::vector<Decision>& fixed,
                   const std::vector<ProcsDecision>& over) {
    out << "| chooser | median error | p90 error | mean regret over P | max regret over P | mean regret at fixed P "
           "| observations |\n|---|---|---|---|---|---|---|\n";
    for (const auto& m : models) {
      const Accuracy a = accuracy(obs, m);
      const RegretStats r = regret_stats(over, m), f = regret_stats(fixed, m);
      out << "| " << m << " | " << a.at("all").median * 100 << " % | " << a.at("all").p90 * 100 << " % | " << r.mean
          << " | " << r.max << " | " << f.mean << " | " << a.at("all").count << " |\n";
    }
    for (auto b : kBaselines) {
      const RegretStats r = regret_stats(over, std::string(b)), f = regret_stats(fixed, std::string(b));
      out << "| baseline " << b << " | | | " << r.mean << " | " << r.max << " | " << f.mean << " | |\n";
    }
    if (const RegretStats nf = regret_stats(over, kSplitHalf); nf.count)
      out << "| noise floor (split halves) | | | " << nf.mean << " | " << nf.max << " | | |\n";
  };
  const auto apps = apps_of(scenarios);
  if (apps.size() > 1) out << "Every app validated (" << apps.size() << "):\n\n";
  table(observations, decisions, procs_decisions);
  if (apps.size() > 1)
    for (const auto& app : apps) {
      out << "\nApp **" << app << "**" << (app == "gauss" ? " (the derivative pipeline)" : " (its tessera::Program)")
          << ":\n\n";
      table(of_app(scenarios, observations, app), of_app(scenarios, decisions, app),
            of_app(scenarios, procs_decisions, app));
    }
  out << "\nBaselines: mpi-dims = MPI_Dims_create grid, mpi/mpi/4step; petsc-dmda = PETSc DMDA's default "
         "grid, mpi/mpi/nonblocking; row-strips = 1xP, the library's defaults (sbt/sbt/nonblocking).\n\n";
  out << "## Decisions over P\n\nProblem k is the k-th app, image size and sigma of the scenario list (in the "
         "JSON summary's `decisions` by name).\n\n"
         "| problem | chooser | chosen P | chosen | chosen µs | best P | best | best µs | regret |\n"
         "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& d : procs_decisions) {
    out << "| " << d.problem + 1;
    if (d.chosen_scenario >= 0 && std::size_t(d.chosen_scenario) < scenarios.size()) {
      const Scenario& s = scenarios[std::size_t(d.chosen_scenario)];
      out << ": " << s.app << " " << s.width << "x" << s.height << " sigma=" << s.sigma;
    }
    out << " | " << d.chooser << " | " << d.chosen.procs() << " | " << describe(d.chosen)
        << " | " << d.chosen_us << " | " << d.best.procs() << " | " << describe(d.best) << " | " << d.best_us
        << " | " << d.regret << " |\n";
  }
  out << "\n";
  out << "## How to read the charts\n\n"
         "Each phase chart is one scenario and one phase. A group of bars is one grid (X×Y: X ranks "
         "along the width) with one algorithm; the dark bar is the measured median with a whisker from "
         "the first to the third quartile, the coloured bars next to it are what each model predicted. "
         "A model is accurate where its bar is as tall as the dark one, and useful where it ranks the "
         "groups in the same order as the dark bars even when its heights are off.\n\n";
  out << "## Charts\n\n";
  for (const auto& c : charts) out << "- [" << c.title << "](" << c.file << ")\n";
  out << "\n## Data\n\n";
  for (const auto& f : csv_files) out << "- [" << f << "](" << f << ")\n";
  return out.str();
}

}  // namespace tessera::validation
