// Text for the transformer (issue 35): a character-level corpus read from Debian's `fortunes` package, and a
// synthetic task a class can watch being learned (reversing a string of digits). Both are sequences of token ids
// whose target at each position is the next token, as a decoder-only language model is trained (GPT; Radford et
// al. 2018).
//
// The corpus is byte-level: its vocabulary is the distinct bytes of the text (about 90 for English: letters, digits,
// punctuation, space and newline), a token per byte, so that any valid UTF-8 text can be read (a character outside
// ASCII is two to four tokens, as in GPT-2's byte-level vocabulary). The fortune files' overstrike underlining
// ("_\bx": print, backspace, print) is removed, and tabs become spaces.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dataset.hpp"

namespace core {

// Where Debian's `fortunes` and `fortunes-min` packages put their files.
inline constexpr const char* kDefaultFortunesDir = "/usr/share/games/fortunes";
// The fortune files read by default: quotations, sayings and riddles (about 1 MB). The package's other files are
// ASCII art, or topics a teacher may not want a model to generate on a projector.
inline constexpr const char* kFortuneFiles[] = {"literature", "science", "wisdom", "computers",
                                                "work",       "people",  "platitudes", "riddles"};
// The most bytes read from one fortune file (the largest in the package is under 1 MB).
inline constexpr size_t kMaxFortuneFileBytes = size_t{16} << 20;

struct TextCorpus {
  std::string name;             // for headers and reports: "fortunes: literature, science, ..."
  std::vector<uint8_t> vocab;   // the distinct bytes of the text, ascending: token t stands for vocab[t]
  std::vector<int32_t> tokens;  // the whole text as token ids: the training cookies, then the validation ones
  size_t train_tokens = 0;      // tokens [0, train_tokens) train; the rest (the last cookies) validate

  int vocab_size() const { return static_cast<int>(vocab.size()); }
  // The text of `ids` (each 0..vocab_size()-1). Throws core::Error(InvalidArgument) for an id outside the vocabulary.
  std::string decode(std::span<const int32_t> ids) const;
  // The ids of `text`. Throws core::Error(InvalidArgument) naming the first byte the vocabulary lacks.
  std::vector<int32_t> encode(std::string_view text) const;
};

// The cookies of a fortune file's text (each ends with a line holding only "%"), cleaned: overstrike removed, tabs as
// spaces, other control characters dropped, trailing spaces of a line dropped, empty cookies skipped. `file` names the
// file in messages. Throws core::Error(Data) for text that is not valid UTF-8 or holds a NUL byte (a binary file),
// naming the file and the byte offset.
std::vector<std::string> split_cookies(std::string_view text, const std::string& file);

// A corpus of `cookies` in order, each followed by a blank line; the last `validation_share` of them (at least one)
// held out for validation. Throws core::Error(Data) for fewer than two cookies or empty text.
TextCorpus corpus_from_cookies(const std::vector<std::string>& cookies, std::string name,
                               double validation_share = 0.1);

// Reads `files` of the folder `dir` (fortune files: each a regular file of at most kMaxFortuneFileBytes; the strfile
// indexes `*.dat` are not needed). Throws core::Error(Data) naming the file and what to do: a missing folder or file
// ("install Debian's fortunes package: apt install fortunes"), a file that is not a regular file or too large, text
// that split_cookies refuses.
TextCorpus read_fortunes(const std::filesystem::path& dir = kDefaultFortunesDir,
                         std::span<const char* const> files = kFortuneFiles);

// B sequences of T tokens and their targets, row-major (B, T): y[b][t] is the token after x[b][t]. mask[b][t] is 1
// where the target counts in the loss and the accuracy (everywhere for text; the answer for a task).
struct TokenBatch {
  int B = 0, T = 0;
  std::vector<int32_t> x, y;
  std::vector<uint8_t> mask;
};

// Sequence `index` of the corpus's training (or validation) part as windows of T + 1 tokens laid end to end:
// x = tokens [s, s + T), y = tokens [s + 1, s + T + 1). The windows of one epoch are `text_windows`; a batch takes
// the windows `order[first .. first + B)`. Throws core::Error(InvalidArgument) when the part holds fewer than T + 1
// tokens ("--context T is longer than the validation text ...").
size_t text_windows(const TextCorpus& c, int T, bool validation);
TokenBatch text_batch(const TextCorpus& c, int T, bool validation, std::span<const uint32_t> windows);

// The synthetic task: reverse a string of `digits` digits. Tokens 0..9 are the digits, kReverseSeparator the "|"
// between a string and its reverse: the sequence d1 .. dn | dn .. d1 (2n + 1 tokens) gives x = its first 2n tokens,
// y = its last 2n, and the mask holds the n answer positions (the separator's target onwards). Strings drawn from
// `seed` (core::Pcg32), sequence `first` to `first + count - 1` of that stream, so that any part can be drawn again.
inline constexpr int32_t kReverseSeparator = 10;
inline constexpr int kReverseVocab = 11;
TokenBatch reverse_task_batch(int digits, uint64_t seed, uint64_t first, int count);

// The share of the batch's sequences whose every masked target equals its prediction (`predicted`: B * T token ids,
// the argmax of the logits at each position): the task's sequence accuracy, all of an answer or nothing.
double sequence_accuracy(const TokenBatch& batch, std::span<const int32_t> predicted);

// The sequences of `batch` as a token dataset (core::Dataset::tokens(): what gather_tokens reads): count = B,
// features = T, classes = vocab, x the ids as floats, y the targets with -1 where the mask is 0, counted = the masked
// positions per sequence. Throws core::Error(InvalidArgument) when the sequences count different numbers of
// positions (the loss's divisor is one per batch) or none, or a token or target lies outside 0..vocab-1.
Dataset token_dataset(const TokenBatch& batch, int vocab, std::string name);

}  // namespace core
