// The parity test's values (tests/parity.cpp): a binding's values as doubles, fields(elem) per element, what a binding
// of an element type can hold in a precision, and the bytes a buffer (or a CPU pointer) holds for them, and back.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/kernel_table.hpp"

namespace test {

using Values = std::vector<double>;  // one binding: elements x fields(elem) doubles

// The numbers per element: 8 for the loss scaler's struct, 2 for a scale-history entry, else 1.
size_t fields(core::Elem e);
// x rounded to the 16-bit type of p (fp16 or bf16), as bits, and back.
uint16_t to16(double x, core::Precision p);
double from16(uint16_t h, core::Precision p);
// The value a binding of type e can hold in precision p: x rounded to fp32 or the 16-bit type.
double representable(double x, core::Elem e, core::Precision p);
// The bytes of v as a binding of type e holds them in precision p (at least 16 bytes), and `count` values back from
// such bytes.
std::vector<std::byte> encode(const Values& v, core::Elem e, core::Precision p);
Values decode(const std::byte* data, size_t count, core::Elem e, core::Precision p);

}  // namespace test
