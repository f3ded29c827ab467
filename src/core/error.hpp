// core::Error: the one exception type for set-up and user-input failures. Its message is meant for the user:
// what is wrong, which file/field/option, and what to do about it.
#pragma once
#include <stdexcept>
#include <string>

namespace core {

enum class ErrorKind {
  InvalidArgument,  // a setting the user gave is out of range (CLI exit code 2)
  Data,             // a dataset file is missing, corrupt or of the wrong kind
  Vulkan,           // no loader/device, or a Vulkan call failed
  Io,               // a file could not be written (or read: a settings file or script that is not a regular file)
  Diverged,         // training cannot go on: the loss (or, in fp16, the gradients at every loss scale) is inf/NaN
  Internal,         // a bug: an invariant of trainscope itself did not hold
  Interrupted,      // the user stopped it (SIGINT/SIGTERM) before it was done: not a failure of its own
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace core
