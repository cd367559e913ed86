// Random inputs for the CSV and JSON importers: valid files mutated byte-wise (flip,
// insert, delete, truncate) and field-wise (huge, negative, NaN, inf, non-numbers,
// missing rows and keys). Each must end either in one clean InvalidArgument or in a
// run that passes the import rules and goes into a database whole. Fixed seed and
// count: the same inputs on every run, well under a few seconds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/perfdb/interchange.hpp"
#include "tessera/perfdb/store.hpp"
#include "test_util.hpp"

namespace tessera::perfdb {
namespace {

using test::TempDir;

constexpr int kInputs = 1500;  // per format

const char* const kNastyNumbers[] = {
    "1e308", "-1e308", "1e400", "-1", "-0", "nan", "NaN", "inf", "-inf", "Infinity",
    "99999999999999999999", "18446744073709551616", "9223372036854775807", "2147483648",
    "0x10", "", " ", "1e-400", "4.9e-324", "1,5", "\"7\"", "null", "true", "12abc", "+3"};

class Mutator {
 public:
  explicit Mutator(std::uint32_t seed) : rng_(seed) {}
  std::size_t below(std::size_t n) { return n == 0 ? 0 : rng_() % n; }
  const char* nasty() { return kNastyNumbers[below(std::size(kNastyNumbers))]; }

  // One byte-level change.
  void bytes(std::string& s) {
    static const char kInsert[] = "0123456789-.,eE+\n\r\"{}[]: \x01\xff";
    const std::size_t at = below(s.size() + 1);
    switch (below(5)) {
      case 0:
        if (!s.empty()) s[std::min(at, s.size() - 1)] ^= static_cast<char>(1u << below(8));
        break;
      case 1:
        s.insert(at, 1, kInsert[below(sizeof kInsert - 1)]);
        break;
      case 2:
        s.erase(std::min(at, s.size()), 1 + below(8));
        break;
      case 3:
        s.resize(at);  // truncation
        break;
      default:
        s.insert(at, nasty());
    }
  }

  // One line- or field-level change of CSV text.
  void csv(std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    if (lines.empty()) return;
    const std::size_t i = below(lines.size());
    switch (below(3)) {
      case 0: {  // a field becomes something nasty
        std::vector<std::string> f;
        std::stringstream ls(lines[i]);
        for (std::string c; std::getline(ls, c, ',');) f.push_back(c);
        if (!f.empty()) f[below(f.size())] = nasty();
        std::string joined;
        for (std::size_t k = 0; k < f.size(); ++k) joined += (k ? "," : "") + f[k];
        lines[i] = joined;
        break;
      }
      case 1:
        lines.erase(lines.begin() + long(i));
        break;
      default:
        lines.insert(lines.begin() + long(i), lines[i]);
    }
    s.clear();
    for (const auto& l : lines) s += l + "\n";
  }

  // One structural change of a JSON document: a leaf becomes nasty, a key or an array
  // element goes away.
  void json(nlohmann::json& doc) {
    std::vector<nlohmann::json*> nodes;
    collect(doc, nodes);
    nlohmann::json& n = *nodes[below(nodes.size())];
    if (n.is_object() && !n.empty() && below(2) == 0) {
      auto it = n.begin();
      std::advance(it, long(below(n.size())));
      n.erase(it.key());
    } else if (n.is_array() && !n.empty() && below(2) == 0) {
      n.erase(n.begin() + long(below(n.size())));
    } else if (!n.is_structured()) {
      static const nlohmann::json kValues[] = {
          -1, -1e-9, 1e308, -1e308, 1e300, 0, 18446744073709551615ull, 9223372036854775807ll,
          2147483648ll, -2147483649ll, 0.5, "x", nullptr, true, nlohmann::json::array(),
          nlohmann::json::object()};
      n = kValues[below(std::size(kValues))];
    }
  }

 private:
  static void collect(nlohmann::json& j, std::vector<nlohmann::json*>& out) {
    out.push_back(&j);
    if (j.is_structured())
      for (auto& c : j) collect(c, out);
  }
  std::mt19937 rng_;
};

// An independent statement of the import rules, to hold every accepted input to.
void expect_importable(const std::vector<RunData>& runs, const std::string& input) {
  bool plannable = false;
  for (const auto& d : runs) {
    std::set<std::pair<Level, int>> curves;
    for (const auto& s : d.p3pc) {
      ASSERT_TRUE(std::isfinite(s.median_us) && s.median_us >= 0 && s.median_us <= 1e10) << input;
      ASSERT_TRUE(s.bytes >= 0 && s.bytes <= kMaxImportedBytes && s.blocks >= 1) << input;
      for (const auto& q : {s.q1_us, s.q3_us}) {
        if (q) {
          ASSERT_TRUE(std::isfinite(*q) && *q >= 0 && *q <= 1e10) << input;
        }
      }
      curves.insert({s.level, int(s.path) * 4 + int(s.layout)});
    }
    for (const auto& c : d.compute)
      ASSERT_TRUE(std::isfinite(c.ns_per_pixel) && c.ns_per_pixel >= 0 && c.taps >= 1) << input;
    for (const auto& l : d.log3p) ASSERT_TRUE(std::isfinite(l.value_us)) << input;
    if (d.run.status != RunStatus::complete || d.p3pc.empty()) continue;
    for (Level level : {Level::intra, Level::inter}) {
      int n = 0;
      for (const auto& [lv, c] : curves) n += lv == level;
      ASSERT_TRUE(n == 0 || n == 12) << "incomplete table accepted: " << input;
    }
    plannable = true;
  }
  ASSERT_TRUE(plannable) << "no complete P-3PC run, yet accepted: " << input;
}

// Runs `parse`; true if it returned. A refusal must be one InvalidArgument line naming
// `source` (counted in `refused`); anything else thrown is a failure.
template <class Parse>
bool parses(Parse&& parse, const std::string& source, const std::string& input, int& refused) {
  try {
    parse();
    return true;
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(source, 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    ++refused;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InvalidArgument: " << e.what() << "\n" << input;
  }
  return false;
}

// An accepted input must go into a database whole; a store that refused it anyway
// must be left as it was.
void expect_stored_whole(Store& db, const Machine& m, const std::vector<RunData>& runs,
                         const std::string& input) {
  const auto before = db.list_runs().size();
  try {
    const Machine stored = db.import_machine(m, runs, true);
    EXPECT_EQ(db.list_runs(stored.id).size(), runs.size()) << input;
  } catch (const std::exception& e) {
    EXPECT_EQ(db.list_runs().size(), before) << "partial import after: " << e.what();
    ADD_FAILURE() << "validated input refused by the store: " << e.what() << "\n" << input;
  }
}

TEST(PerfdbImportFuzz, CsvImportEitherRefusesCleanlyOrStoresACompleteRun) {
  TempDir dir;
  Store db(dir / "fuzz.sqlite");
  Machine m;
  m.name = "fuzz";
  const std::string valid = test::complete_csv();
  Mutator mut(20261122);
  int accepted = 0, refused = 0;
  for (int i = 0; i < kInputs; ++i) {
    std::string text = valid;
    for (std::size_t k = 0, n = 1 + mut.below(3); k < n; ++k)
      mut.below(2) ? mut.bytes(text) : mut.csv(text);
    std::istringstream in(text);
    RunData d;
    if (!parses([&] { d.p3pc = read_p3pc_csv(in, "fuzz.csv"); }, "fuzz.csv", text, refused))
      continue;
    ++accepted;
    d.run.tool = "import";
    d.run.status = RunStatus::complete;
    const std::vector<RunData> runs{d};
    expect_importable(runs, text);
    expect_stored_whole(db, m, runs, text);
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
  std::printf("%d accepted, %d refused\n", accepted, refused);
}

TEST(PerfdbImportFuzz, JsonImportEitherRefusesCleanlyOrStoresCompleteRuns) {
  TempDir dir;
  Store db(dir / "fuzz.sqlite");
  Machine m;
  m.name = "fuzz";
  m.cores = 2;
  RunData failed = test::sample_run_data();
  failed.run.status = RunStatus::failed;
  const std::string valid = to_json(m, std::vector<RunData>{test::plannable_run_data(), failed});
  const nlohmann::json valid_doc = nlohmann::json::parse(valid);
  Mutator mut(1122);
  int accepted = 0, refused = 0;
  for (int i = 0; i < kInputs; ++i) {
    std::string text;
    if (mut.below(2)) {
      text = valid;
      for (std::size_t k = 0, n = 1 + mut.below(3); k < n; ++k) mut.bytes(text);
    } else {
      nlohmann::json doc = valid_doc;
      for (std::size_t k = 0, n = 1 + mut.below(3); k < n; ++k) mut.json(doc);
      text = doc.dump(1);
    }
    JsonDocument doc;
    if (!parses([&] { doc = from_json(text, "fuzz.json"); }, "fuzz.json", text, refused)) continue;
    ++accepted;
    expect_importable(doc.runs, text);
    if (doc.machine.name.empty()) doc.machine.name = "fuzz";  // the tool asks for --machine
    expect_stored_whole(db, doc.machine, doc.runs, text);
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
  std::printf("%d accepted, %d refused\n", accepted, refused);
}

}  // namespace
}  // namespace tessera::perfdb
