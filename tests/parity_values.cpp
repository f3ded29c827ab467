// The parity test's values: see parity_values.hpp.
#include "parity_values.hpp"

#include <algorithm>
#include <cstring>

#include "core/half.hpp"

namespace test {

using core::Elem;
using core::Precision;

size_t fields(Elem e) { return e == Elem::LossScaler ? 8 : e == Elem::ScaleHistory ? 2 : 1; }

uint16_t to16(double x, Precision p) {
  return p == Precision::FP16 ? core::float_to_fp16(static_cast<float>(x)) : core::float_to_bf16(static_cast<float>(x));
}
double from16(uint16_t h, Precision p) {
  return p == Precision::FP16 ? core::fp16_to_float(h) : core::bf16_to_float(h);
}

// The value the binding can hold: rounded to fp32 or the 16-bit type.
double representable(double x, Elem e, Precision p) {
  if (e == Elem::Storage && p != Precision::FP32) return from16(to16(x, p), p);
  if (e == Elem::Storage || e == Elem::F32) return static_cast<float>(x);
  return x;
}

// The bytes a buffer (or a CPU pointer) holds for `v`, and back.
std::vector<std::byte> encode(const Values& v, Elem e, Precision p) {
  std::vector<std::byte> out(std::max<size_t>(v.size() / fields(e) * core::elem_bytes(e, p), 16));
  auto put = [&](size_t i, auto x) { std::memcpy(out.data() + i * sizeof x, &x, sizeof x); };
  for (size_t i = 0; i < v.size(); ++i) {
    switch (e) {
      case Elem::Storage:
        if (p == Precision::FP32) put(i, static_cast<float>(v[i]));
        else put(i, to16(v[i], p));
        break;
      case Elem::F32: put(i, static_cast<float>(v[i])); break;
      case Elem::I32: put(i, static_cast<int32_t>(v[i])); break;
      case Elem::U32: put(i, static_cast<uint32_t>(v[i])); break;
      case Elem::LossScaler:  // scale, 4 uints, 2 floats, reserved
      case Elem::ScaleHistory: {  // scale, found_inf
        const size_t f = i % fields(e);
        const bool is_float = f == 0 || (e == Elem::LossScaler && (f == 5 || f == 6));
        if (is_float) put(i, static_cast<float>(v[i]));
        else put(i, static_cast<uint32_t>(v[i]));
        break;
      }
    }
  }
  return out;
}

Values decode(const std::byte* data, size_t count, Elem e, Precision p) {
  Values v(count);
  auto get = [&](size_t i, auto x) {
    std::memcpy(&x, data + i * sizeof x, sizeof x);
    return static_cast<double>(x);
  };
  for (size_t i = 0; i < count; ++i) {
    switch (e) {
      case Elem::Storage: v[i] = p == Precision::FP32 ? get(i, 0.0f) : from16(uint16_t(get(i, uint16_t{0})), p); break;
      case Elem::F32: v[i] = get(i, 0.0f); break;
      case Elem::I32: v[i] = get(i, int32_t{0}); break;
      case Elem::U32: v[i] = get(i, uint32_t{0}); break;
      case Elem::LossScaler:
      case Elem::ScaleHistory: {
        const size_t f = i % fields(e);
        const bool is_float = f == 0 || (e == Elem::LossScaler && (f == 5 || f == 6));
        v[i] = is_float ? get(i, 0.0f) : get(i, uint32_t{0});
        break;
      }
    }
  }
  return v;
}

}  // namespace test
