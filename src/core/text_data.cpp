// The transformer's text (core/text_data.hpp): fortune files into a byte-level corpus, its windows, and the digit
// reversal task.
#include "core/text_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/rng.hpp"

namespace core {
namespace {

[[noreturn]] void data_error(const std::string& message) { throw Error(ErrorKind::Data, message); }

// The length of the UTF-8 sequence starting at text[i] (1..4), or 0 when it is not a well-formed one (RFC 3629,
// section 4: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = b0 >= 0xC2 && b0 <= 0xDF ? 2 : b0 >= 0xE0 && b0 <= 0xEF ? 3 : b0 >= 0xF0 && b0 <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  const unsigned char b1 = byte(i + 1);
  if ((b0 == 0xE0 && b1 < 0xA0) || (b0 == 0xED && b1 > 0x9F) || (b0 == 0xF0 && b1 < 0x90) || (b0 == 0xF4 && b1 > 0x8F))
    return 0;
  return n;
}

// One line of a fortune: overstrike ("x\by": y printed over x) kept as what shows, tabs as spaces, other control
// characters (a BEL in a joke, a terminal escape, DEL) dropped, trailing spaces dropped.
std::string clean_line(std::string_view line) {
  std::string out;
  for (char ch : line) {
    if (ch == '\b') {
      if (!out.empty()) out.pop_back();  // the next byte is printed over the last one
      continue;
    }
    const auto b = static_cast<unsigned char>(ch);
    if (ch == '\t')
      out += ' ';
    else if (b >= 0x20 && b != 0x7f)
      out += ch;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::string TextCorpus::decode(std::span<const int32_t> ids) const {
  std::string text;
  text.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size())
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("token {} is outside the vocabulary (0..{})", id, vocab_size() - 1));
    text += static_cast<char>(vocab[static_cast<size_t>(id)]);
  }
  return text;
}

std::vector<int32_t> TextCorpus::encode(std::string_view text) const {
  std::array<int32_t, 256> id_of;
  id_of.fill(-1);
  for (size_t t = 0; t < vocab.size(); ++t) id_of[vocab[t]] = static_cast<int32_t>(t);
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int32_t id = id_of[static_cast<unsigned char>(text[i])];
    if (id < 0)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("byte 0x{:02x} at offset {} is not in the corpus's vocabulary of {} bytes",
                              static_cast<unsigned>(static_cast<unsigned char>(text[i])), i, vocab.size()));
    ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> split_cookies(std::string_view text, const std::string& file) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == 0)
      data_error(fmt::format("{}: a NUL byte at byte {}: not a fortune file (plain text with cookies separated by "
                             "lines of \"%\")",
                             file, i));
    const size_t n = utf8_length(text, i);
    if (n == 0)
      data_error(fmt::format("{}: not valid UTF-8 at byte {}: give a fortune file in UTF-8 (or ASCII) text", file, i));
    i += n;
  }
  std::vector<std::string> cookies;
  std::string cookie;
  auto finish = [&] {  // a cookie ends with one newline: blank lines at its end dropped
    while (cookie.size() >= 2 && cookie[cookie.size() - 1] == '\n' && cookie[cookie.size() - 2] == '\n')
      cookie.pop_back();
    if (!cookie.empty()) cookies.push_back(std::move(cookie));
    cookie.clear();
  };
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (line == "%") {
      finish();
      continue;
    }
    const std::string cleaned = clean_line(line);
    if (cookie.empty() && cleaned.empty()) continue;  // blank lines before a cookie
    cookie += cleaned + "\n";
  }
  finish();
  return cookies;
}

TextCorpus corpus_from_cookies(const std::vector<std::string>& cookies, std::string name, double validation_share) {
  if (cookies.size() < 2)
    data_error(fmt::format("{}: {} cookie{}: a corpus needs at least two (one to train on, one to validate)", name,
                           cookies.size(), cookies.size() == 1 ? "" : "s"));
  const size_t held_out =
      std::clamp<size_t>(static_cast<size_t>(static_cast<double>(cookies.size()) * validation_share), 1,
                         cookies.size() - 1);
  std::string text, train_text;
  for (size_t i = 0; i < cookies.size(); ++i) {
    if (i == cookies.size() - held_out) train_text = text;
    text += cookies[i] + "\n";
  }
  TextCorpus c;
  c.name = std::move(name);
  std::array<bool, 256> seen{};
  for (char ch : text) seen[static_cast<unsigned char>(ch)] = true;
  for (int b = 0; b < 256; ++b)
    if (seen[static_cast<size_t>(b)]) c.vocab.push_back(static_cast<uint8_t>(b));
  c.tokens = c.encode(text);
  c.train_tokens = train_text.size();
  return c;
}

TextCorpus read_fortunes(const std::filesystem::path& dir, std::span<const char* const> files) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    data_error(fmt::format("{}: no such folder: the text comes from Debian's fortunes package (apt install fortunes), "
                           "or give the folder of fortune files",
                           dir.string()));
  std::vector<std::string> cookies;
  std::string names;
  for (const char* file : files) {
    const std::filesystem::path path = dir / file;
    std::string text;
    try {
      text = read_regular_file(path.string(), kMaxFortuneFileBytes, "fortune file");
    } catch (const Error& e) {
      data_error(fmt::format("{} (the fortune files are Debian's fortunes package: apt install fortunes)", e.what()));
    }
    auto part = split_cookies(text, path.string());
    cookies.insert(cookies.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    names += (names.empty() ? "" : ", ") + std::string(file);
  }
  return corpus_from_cookies(cookies, "fortunes: " + names);
}

size_t text_windows(const TextCorpus& c, int T, bool validation) {
  const size_t tokens = validation ? c.tokens.size() - c.train_tokens : c.train_tokens;
  if (T < 1 || tokens < static_cast<size_t>(T) + 1)
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--context {}: longer than the {} text ({} tokens); use a context of 1..{}", T,
                            validation ? "validation" : "training", tokens, tokens > 1 ? tokens - 1 : 0));
  return (tokens - 1) / static_cast<size_t>(T);
}

TokenBatch text_batch(const TextCorpus& c, int T, bool validation, std::span<const uint32_t> windows) {
  const size_t count = text_windows(c, T, validation);
  const size_t base = validation ? c.train_tokens : 0;
  TokenBatch b;
  b.B = static_cast<int>(windows.size());
  b.T = T;
  for (uint32_t w : windows) {
    if (w >= count)
      throw Error(ErrorKind::InvalidArgument, fmt::format("window {} of {} (0..{})", w, count, count - 1));
    const size_t s = base + size_t{w} * static_cast<size_t>(T);
    b.x.insert(b.x.end(), c.tokens.begin() + static_cast<long>(s), c.tokens.begin() + static_cast<long>(s) + T);
    b.y.insert(b.y.end(), c.tokens.begin() + static_cast<long>(s) + 1, c.tokens.begin() + static_cast<long>(s) + T + 1);
  }
  b.mask.assign(b.x.size(), 1);
  return b;
}

TokenBatch reverse_task_batch(int digits, uint64_t seed, uint64_t first, int count) {
  if (digits < 1 || count < 0)
    throw Error(ErrorKind::InvalidArgument, fmt::format("the reversal task needs 1 or more digits, not {}", digits));
  TokenBatch b;
  b.B = count;
  b.T = 2 * digits;
  for (int i = 0; i < count; ++i) {
    Pcg32 rng(seed, first + static_cast<uint64_t>(i));  // one stream per sequence: any sequence drawn on its own
    std::vector<int32_t> s;
    for (int k = 0; k < digits; ++k) s.push_back(static_cast<int32_t>(rng.below(10)));
    s.push_back(kReverseSeparator);
    for (int k = digits - 1; k >= 0; --k) s.push_back(s[static_cast<size_t>(k)]);
    b.x.insert(b.x.end(), s.begin(), s.end() - 1);
    b.y.insert(b.y.end(), s.begin() + 1, s.end());
    for (int t = 0; t < b.T; ++t) b.mask.push_back(t >= digits ? 1 : 0);  // the targets after the separator's input
  }
  return b;
}

double sequence_accuracy(const TokenBatch& batch, std::span<const int32_t> predicted) {
  if (predicted.size() != batch.y.size())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} predictions for a batch of {} x {} targets", predicted.size(), batch.B, batch.T));
  if (batch.B == 0) return 0;
  int right = 0;
  for (int b = 0; b < batch.B; ++b) {
    bool all = true;
    for (int t = 0; t < batch.T; ++t) {
      const size_t i = static_cast<size_t>(b) * static_cast<size_t>(batch.T) + static_cast<size_t>(t);
      all = all && (!batch.mask[i] || predicted[i] == batch.y[i]);
    }
    right += all ? 1 : 0;
  }
  return static_cast<double>(right) / batch.B;
}

Dataset token_dataset(const TokenBatch& batch, int vocab, std::string name) {
  auto bad = [&](const std::string& what) { throw Error(ErrorKind::InvalidArgument, name + ": " + what); };
  Dataset d;
  d.name = std::move(name);
  d.count = batch.B;
  d.features = batch.T;
  d.classes = vocab;
  const size_t n = size_t(batch.B) * size_t(batch.T);
  if (batch.x.size() != n || batch.y.size() != n || batch.mask.size() != n) bad("sequences of unequal sizes");
  d.x.resize(n);
  d.y.resize(n);
  for (int b = 0; b < batch.B; ++b) {
    int counted = 0;
    for (int t = 0; t < batch.T; ++t) {
      const size_t i = size_t(b) * size_t(batch.T) + size_t(t);
      if (batch.x[i] < 0 || batch.x[i] >= vocab || batch.y[i] < 0 || batch.y[i] >= vocab)
        bad("a token outside the vocabulary of " + std::to_string(vocab));
      d.x[i] = static_cast<float>(batch.x[i]);
      d.y[i] = batch.mask[i] ? batch.y[i] : -1;
      counted += batch.mask[i] ? 1 : 0;
    }
    if (counted == 0 || (b > 0 && counted != d.counted)) bad("every sequence must count the same positions, at least one");
    d.counted = counted;
  }
  return d;
}

}  // namespace core
