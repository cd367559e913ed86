// ResultSet: a run replaces the whole set of outputs or leaves the previous one,
// even when killed; and the file writers' messages and previews. No MPI.
#include "tessera/result_set.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/io.hpp"

namespace tessera {
namespace {
namespace fs = std::filesystem;

class ResultSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tessera-result-set-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    target_ = root_ / "out dir ü";  // spaces and UTF-8 are ordinary characters
  }
  void TearDown() override { fs::remove_all(root_); }

  static void put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string get(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every visible entry of a directory and its content.
  static std::map<std::string, std::string> contents(const fs::path& dir) {
    std::map<std::string, std::string> m;
    for (const auto& e : fs::directory_iterator(dir)) m[e.path().filename().string()] = get(e.path());
    return m;
  }
  // Names in root_ other than the target: temporaries left behind.
  std::vector<std::string> leftovers() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(root_))
      if (e.path() != target_) v.push_back(e.path().filename().string());
    return v;
  }
  void write_set(const std::map<std::string, std::string>& files) {
    ResultSet set(target_, "test", {"--a", "b c"});
    for (const auto& [name, text] : files) write_file(set.file(name), text);
    set.commit();
  }

  fs::path root_, target_;
};

TEST_F(ResultSetTest, NewSetAppearsWholeWithAManifest) {
  write_set({{"a.txt", "1"}, {"b.txt", "2"}});
  auto c = contents(target_);
  EXPECT_EQ(c["a.txt"], "1");
  EXPECT_EQ(c["b.txt"], "2");
  const std::string manifest = c[ResultSet::kManifestName];
  EXPECT_NE(manifest.find("\"program\": \"test\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"b c\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"a.txt\""), std::string::npos) << manifest;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ResultSetTest, ReplacesThePreviousSetEntirely) {
  write_set({{"a.txt", "old a"}, {"b.txt", "old b"}});
  write_set({{"a.txt", "new a"}});
  auto c = contents(target_);
  EXPECT_EQ(c.size(), 2u);  // a.txt and the manifest; the old b.txt is gone
  EXPECT_EQ(c["a.txt"], "new a");
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ResultSetTest, AFailedRunLeavesThePreviousSet) {
  write_set({{"a.txt", "old a"}, {"b.txt", "old b"}});
  const auto before = contents(target_);
  try {
    ResultSet set(target_, "test", {});
    write_file(set.file("a.txt"), "new a");
    // The next file cannot be written: its name is taken by a directory.
    fs::create_directory(set.file("b.txt"));
    write_file(set.file("b.txt"), "new b");
    FAIL() << "writing onto a directory succeeded";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("Is a directory"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("Success"), std::string::npos) << e.what();
  }
  EXPECT_EQ(contents(target_), before);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ResultSetTest, CommitNeedsEveryNamedFile) {
  write_set({{"a.txt", "old"}});
  const auto before = contents(target_);
  ResultSet set(target_, "test", {});
  (void)set.file("never-written.txt");
  EXPECT_THROW(set.commit(), IoError);
  EXPECT_EQ(contents(target_), before);
}

TEST_F(ResultSetTest, RefusesToReplaceSomethingThatIsNotAResultSet) {
  fs::create_directories(target_);
  put(target_ / "thesis.tex", "precious");
  try {
    ResultSet set(target_, "test", {});
    FAIL() << "a user's directory was accepted";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("not a tessera result set"), std::string::npos) << e.what();
  }
  EXPECT_EQ(get(target_ / "thesis.tex"), "precious");
  EXPECT_TRUE(leftovers().empty());
  fs::remove_all(target_);
  put(target_, "a file");
  EXPECT_THROW(ResultSet(target_, "test", {}), IoError);
  fs::remove(target_);
  fs::create_directories(target_);  // empty: fine
  write_set({{"a.txt", "1"}});
  EXPECT_EQ(get(target_ / "a.txt"), "1");
}

TEST_F(ResultSetTest, CannotCreateSaysWhy) {
  put(root_ / "plain-file", "x");
  try {
    ResultSet set(root_ / "plain-file" / "out", "test", {});
    FAIL();
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot create output directory"), std::string::npos) << what;
    EXPECT_NE(what.find("Not a directory"), std::string::npos) << what;
  }
}

// The killed-run case, deterministically: the child writes one file of a new set
// and is SIGKILLed before it writes the next. The target must still be the old
// set, and the next run must remove the child's temporary directory.
TEST_F(ResultSetTest, AKilledRunLeavesTheOldSetAndTheNextRunCleansUp) {
  write_set({{"a.txt", "old a"}, {"b.txt", "old b"}});
  const auto before = contents(target_);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ResultSet set(target_, "test", {});
    write_file(set.file("a.txt"), std::string(1 << 20, 'n'));
    const char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    for (;;) ::pause();
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(contents(target_), before);
  ASSERT_EQ(leftovers().size(), 1u);  // the dead run's temporary directory
  EXPECT_NE(leftovers()[0].find(".tessera-tmp-"), std::string::npos) << leftovers()[0];
  write_set({{"a.txt", "next"}});
  EXPECT_EQ(get(target_ / "a.txt"), "next");
  EXPECT_TRUE(leftovers().empty());
}

// Without RENAME_EXCHANGE the old set is moved aside before the new one moves in;
// a run killed in between leaves no target, and the next run puts the old set back.
TEST_F(ResultSetTest, ASetLeftAsideByADeadRunIsPutBack) {
  write_set({{"a.txt", "old a"}});
  const auto before = contents(target_);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const fs::path aside =
      root_ / ("." + target_.filename().string() + ".tessera-old-" + host + "-" + std::to_string(dead) + "-0");
  fs::rename(target_, aside);
  ResultSet::remove_stale(target_);
  ASSERT_TRUE(fs::is_directory(target_));
  EXPECT_EQ(contents(target_), before);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ResultSetTest, ALiveRunsTemporaryIsLeftAlone) {
  ResultSet first(target_, "test", {});
  ResultSet second(target_, "test", {});  // same live process: must not remove `first`'s
  EXPECT_TRUE(fs::is_directory(first.staging()));
}

TEST(Io, WriteFailuresSayWhy) {
  const fs::path dir = fs::temp_directory_path() / ("tessera-io-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "Lyy.tiff");
  try {
    write_float_tiff(dir / "Lyy.tiff", Image(4, 4, 1.0f));
    FAIL() << "wrote onto a directory";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Is a directory"), std::string::npos) << what;
    EXPECT_EQ(what.find("Success"), std::string::npos) << what;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary left
  fs::remove_all(dir);
}

TEST(Io, PreviewScalesOnFiniteValues) {
  const fs::path dir = fs::temp_directory_path() / ("tessera-io-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Image img(4, 1);
  img.at(0, 0) = 0;
  img.at(1, 0) = 10;
  img.at(2, 0) = std::numeric_limits<float>::infinity();
  img.at(3, 0) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(count_non_finite(img), 2u);
  write_png_preview(dir / "p.png", img);
  cv::Mat png = cv::imread((dir / "p.png").string(), cv::IMREAD_UNCHANGED);
  fs::remove_all(dir);
  ASSERT_EQ(png.type(), CV_8U);
  EXPECT_EQ(png.at<unsigned char>(0, 0), 0);
  EXPECT_EQ(png.at<unsigned char>(0, 1), 255);  // the finite maximum, not black
  EXPECT_EQ(png.at<unsigned char>(0, 2), 255);  // +Inf
  EXPECT_EQ(png.at<unsigned char>(0, 3), 0);    // NaN
}

}  // namespace
}  // namespace tessera
