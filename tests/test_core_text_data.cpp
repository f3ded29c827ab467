// The transformer's text (core/text_data.hpp): fortune files read and cleaned, refused with clear errors when they
// are not text; the corpus's vocabulary, split and windows; the digit reversal task and its sequence accuracy.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include "core/error.hpp"
#include "core/model_view.hpp"
#include "core/text_data.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("trainscope_test_text_" + std::to_string(std::random_device{}()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string data_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::Data);
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("fortune files: cookies split at % lines, overstrike and tabs cleaned, blank lines dropped") {
  const std::string text = "First one,\n\ttwo lines.   \n%\n\n%\nThe _\bb_\bo_\bl_\bd word.\n\n\n%\nLast, no end mark";
  const auto cookies = core::split_cookies(text, "f");
  REQUIRE(cookies.size() == 3);
  CHECK(cookies[0] == "First one,\n two lines.\n");
  CHECK(cookies[1] == "The bold word.\n");
  CHECK(cookies[2] == "Last, no end mark\n");
  // UTF-8 is read as bytes (a byte-level vocabulary); CRLF line ends are read as LF.
  CHECK(core::split_cookies("caf\xc3\xa9\r\n%\r\n", "f") == std::vector<std::string>{"caf\xc3\xa9\n"});
}

TEST_CASE("fortune files that are not text are refused, naming the file and the byte") {
  CHECK(data_error([] { core::split_cookies(std::string("abc\0def", 7), "bin"); }).find("bin: a NUL byte at byte 3") !=
        std::string::npos);
  // Other control characters (a BEL in a joke, an escape) are dropped, not refused.
  CHECK(core::split_cookies("ring \a\x1b[0m\x7f!\n", "f") == std::vector<std::string>{"ring [0m!\n"});
  CHECK(data_error([] { core::split_cookies("ok \xff\xfe", "latin"); }).find("latin: not valid UTF-8 at byte 3") !=
        std::string::npos);
  CHECK(data_error([] { core::split_cookies("\xc0\xaf", "overlong"); }).find("not valid UTF-8 at byte 0") !=
        std::string::npos);
  CHECK(data_error([] { core::split_cookies("\xe2\x82", "cut"); }).find("not valid UTF-8") != std::string::npos);
}

TEST_CASE("a corpus: the vocabulary is the text's bytes, encode and decode are inverse, the last cookies validate") {
  std::vector<std::string> cookies;
  for (int i = 0; i < 20; ++i) cookies.push_back("cookie " + std::to_string(i) + "\n");
  const core::TextCorpus c = core::corpus_from_cookies(cookies, "test");
  std::string all;
  for (const auto& k : cookies) all += k + "\n";
  CHECK(c.decode(c.tokens) == all);
  CHECK(c.vocab.size() == std::string("\n ceiko0123456789").size());  // newline, space, "cookie" letters, digits
  CHECK(std::is_sorted(c.vocab.begin(), c.vocab.end()));
  // 20 cookies, a tenth held out: the last two ("cookie 18", "cookie 19") are the validation text.
  CHECK(c.decode(std::vector<int32_t>(c.tokens.begin() + long(c.train_tokens), c.tokens.end())) ==
        "cookie 18\n\ncookie 19\n\n");
  CHECK_THROWS_AS(c.encode("X"), core::Error);
  CHECK_THROWS_AS(c.decode(std::vector<int32_t>{int32_t(c.vocab.size())}), core::Error);
  CHECK(data_error([] { core::corpus_from_cookies({"one\n"}, "tiny"); }).find("at least two") != std::string::npos);
}

TEST_CASE("text windows: x is T tokens, y the T that follow each, laid end to end; a context too long is refused") {
  std::vector<std::string> cookies;
  for (int i = 0; i < 10; ++i) cookies.push_back(std::string(9, char('a' + i)));  // "aaaaaaaaa", "bbbbbbbbb", ...
  const core::TextCorpus c = core::corpus_from_cookies(cookies, "t");
  const int T = 4;
  const size_t windows = core::text_windows(c, T, false);
  CHECK(windows == (c.train_tokens - 1) / T);
  const std::vector<uint32_t> pick = {0, 2};
  const core::TokenBatch b = core::text_batch(c, T, false, pick);
  CHECK(b.B == 2);
  CHECK(c.decode(std::span(b.x).subspan(0, 4)) == "aaaa");
  CHECK(c.decode(std::span(b.y).subspan(0, 4)) == "aaaa");
  CHECK(c.decode(std::span(b.x).subspan(4, 4)) == "a\nbb");  // window 2 starts at token 8: the cookie's last "a"
  CHECK(c.decode(std::span(b.y).subspan(4, 4)) == "\nbbb");
  // The validation text ("jjjjjjjjj" and its newline: 10 tokens) starts the validation windows.
  const core::TokenBatch v = core::text_batch(c, T, true, std::vector<uint32_t>{0});
  CHECK(c.decode(v.x) == "jjjj");
  CHECK_THROWS_AS(core::text_windows(c, 11, true), core::Error);
  CHECK_THROWS_AS(core::text_batch(c, T, false, std::vector<uint32_t>{uint32_t(windows)}), core::Error);
}

TEST_CASE("the reversal task: d1..dn | dn..d1, the answer masked, sequences drawn again alike; sequence accuracy") {
  const core::TokenBatch b = core::reverse_task_batch(4, 42, 0, 50);
  REQUIRE(b.B == 50);
  REQUIRE(b.T == 8);
  int differing_first_digits = 0;
  for (int i = 0; i < b.B; ++i) {
    const int32_t* x = &b.x[size_t(i) * 8];
    const int32_t* y = &b.y[size_t(i) * 8];
    CHECK(x[4] == core::kReverseSeparator);
    for (int t = 0; t < 4; ++t) CHECK((x[t] >= 0 && x[t] <= 9));
    for (int t = 0; t < 7; ++t) CHECK(y[t] == x[t + 1]);  // the next token
    for (int k = 0; k < 4; ++k) CHECK(y[4 + k] == x[3 - k]);  // the answer: the digits reversed
    for (int t = 0; t < 8; ++t) CHECK(b.mask[size_t(i) * 8 + size_t(t)] == (t >= 4 ? 1 : 0));
    differing_first_digits += x[0] != b.x[0] ? 1 : 0;
  }
  CHECK(differing_first_digits > 20);  // drawn, not one string repeated
  // Sequence 10..19 drawn on its own is sequences 10..19 of the whole draw.
  const core::TokenBatch part = core::reverse_task_batch(4, 42, 10, 10);
  CHECK(std::equal(part.x.begin(), part.x.end(), b.x.begin() + 80));

  std::vector<int32_t> predicted = b.y;
  CHECK(core::sequence_accuracy(b, predicted) == 1.0);
  predicted[0] = (predicted[0] + 1) % 10;  // an unmasked position: still right
  CHECK(core::sequence_accuracy(b, predicted) == 1.0);
  predicted[7] = (predicted[7] + 1) % 10;  // the first sequence's last answer digit: that sequence is wrong
  predicted[8 + 4] = (predicted[8 + 4] + 1) % 10;  // the second's first answer digit
  CHECK(core::sequence_accuracy(b, predicted) == doctest::Approx(48.0 / 50));
}

TEST_CASE("read_fortunes: a folder of fortune files; a missing one says which package to install") {
  const fs::path dir = scratch() / "fortunes";
  fs::create_directories(dir);
  std::ofstream(dir / "one") << "A first saying.\n%\nA second.\n%\n";
  std::ofstream(dir / "two") << "Third.\n%\nFourth.\n%\n";
  const char* files[] = {"one", "two"};
  const core::TextCorpus c = core::read_fortunes(dir, files);
  CHECK(c.name == "fortunes: one, two");
  CHECK(c.decode(c.tokens) == "A first saying.\n\nA second.\n\nThird.\n\nFourth.\n\n");
  const char* missing[] = {"one", "three"};
  CHECK(data_error([&] { core::read_fortunes(dir, missing); }).find("apt install fortunes") != std::string::npos);
  CHECK(data_error([&] { core::read_fortunes(scratch() / "none", files); }).find("no such folder") !=
        std::string::npos);
  fs::create_directories(dir / "sub");
  const char* folder[] = {"sub"};
  CHECK(data_error([&] { core::read_fortunes(dir, folder); }).find("directory") != std::string::npos);
  // Debian's own files, where the package is installed: every default file reads, in at most 16 MiB each.
  if (fs::exists(fs::path(core::kDefaultFortunesDir) / "literature")) {
    const core::TextCorpus debian = core::read_fortunes();
    CHECK(debian.tokens.size() > 500000);
    CHECK(debian.vocab_size() < 128);
    CHECK(debian.train_tokens < debian.tokens.size());
    MESSAGE(debian.name << ": " << debian.tokens.size() << " tokens (" << debian.train_tokens << " to train), a "
                        << debian.vocab_size() << "-byte vocabulary");
  }
}

TEST_CASE("token_dataset: ids as floats, targets -1 outside the answer; take_first keeps whole sequences") {
  const core::TokenBatch b = core::reverse_task_batch(3, 9, 0, 5);  // d1 d2 d3 | d3 d2: x 6 tokens, answer 3
  const core::Dataset d = core::token_dataset(b, core::kReverseVocab, "reverse");
  CHECK(d.tokens());
  CHECK(d.count == 5);
  CHECK(d.features == 6);
  CHECK(d.classes == core::kReverseVocab);
  CHECK(d.counted == 3);
  REQUIRE(d.x.size() == 30);
  REQUIRE(d.y.size() == 30);
  for (size_t i = 0; i < d.x.size(); ++i) {
    CHECK(d.x[i] == float(b.x[i]));
    CHECK(d.y[i] == (b.mask[i] ? b.y[i] : -1));
  }
  const core::Dataset first = core::take_first(d, 2);
  CHECK(first.count == 2);
  CHECK(first.counted == 3);
  CHECK(first.x == std::vector<float>(d.x.begin(), d.x.begin() + 12));
  CHECK(first.y == std::vector<int32_t>(d.y.begin(), d.y.begin() + 12));
  // Refused: a token outside the vocabulary, and sequences that count different numbers of positions.
  auto refused = [](const core::TokenBatch& batch) -> std::string {
    try {
      core::token_dataset(batch, core::kReverseVocab, "reverse");
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::InvalidArgument);
      return e.what();
    }
    return "no error";
  };
  core::TokenBatch bad = b;
  bad.x[4] = core::kReverseVocab;
  CHECK(refused(bad).find("outside the vocabulary") != std::string::npos);
  bad = b;
  bad.mask[0] = 1;
  CHECK(refused(bad).find("the same positions") != std::string::npos);
}

TEST_CASE("the Model tab's view of token data: the first sequences, their targets, answers right or not") {
  const core::Dataset d = core::token_dataset(core::reverse_task_batch(2, 4, 0, 12), core::kReverseVocab, "reverse");
  const std::vector<int> rows = core::model_view_rows(d);
  REQUIRE(rows.size() == size_t(core::kModelViewSequences));
  CHECK(rows.front() == 0);
  core::ModelView v = core::make_model_view(d, rows);
  CHECK(v.positions == 4);
  REQUIRE(v.targets.size() == rows.size() * 4);
  CHECK(v.class_names.back() == "|");
  CHECK(v.class_names.front() == "0");
  CHECK_FALSE(v.tokens_predicted());
  CHECK(v.correct() == 0);
  // Predicting every target gives every answer right; the positions that do not count may hold anything.
  v.predicted.assign(v.targets.size(), 3);
  for (size_t i = 0; i < v.targets.size(); ++i)
    if (v.targets[i] >= 0) v.predicted[i] = v.targets[i];
  CHECK(v.tokens_predicted());
  CHECK(v.correct() == core::kModelViewSequences);
  v.predicted[v.targets.size() - 1] = (v.targets.back() + 1) % 10;  // the last answer's last digit wrong
  CHECK(v.correct() == core::kModelViewSequences - 1);
}
