// Activations and their derivatives, as the CPU's (src/cpu/fast_math.hpp) and the references in double
// (src/cpu/op_helpers.cpp). ACT_RELU = 0, ACT_GELU = 1 (the tanh approximation: Hendrycks & Gimpel 2016, torch
// approximate='tanh'), ACT_SILU = 2 (x sigmoid(x): Elfwing et al. 2018, torch.nn.SiLU); cpu::ops::act_code maps
// core::Activation to these codes.
const uint ACT_RELU = 0;
const uint ACT_GELU = 1;
const uint ACT_SILU = 2;
const float GELU_SCALE = 0.7978845608028654;  // sqrt(2/pi)

// Where tanh saturates in fp32: for |u| >= 9.1 the correctly rounded tanh(u) is exactly +-1 (1 - tanh(9.1) =
// 2.5e-8 is below half an ulp of 1, 2^-25 = 3.0e-8). Past it the GELU takes +-1 itself instead of calling tanh: no
// bit of a correct tanh changes, and the drivers whose tanh is (e^2u - 1) / (e^2u + 1) without a guard, which gives
// inf / inf = NaN from |u| > 44 (|x| > 4.6; reported for AMD on Windows, Mali and MoltenVK in llama.cpp and PyTorch
// issues), or whose tanh is merely within the spec's loose bound of 1 there (Vulkan's tanh precision is inherited
// from sinh/cosh, i.e. from exp's 3 + 2|x| ulp), give the exact limit. A NaN argument stays NaN (the comparison is
// false), so a diverged model is still seen as one.
const float GELU_TANH_SATURATES = 9.1;

// sigmoid(x) = 1 / (1 + e^-x): for x < -88 e^-x is inf and the sigmoid exactly 0 (no NaN); within exp's
// precision (3 + 2|x| ulp in Vulkan) elsewhere.
float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

float act_forward(float x, uint act) {
  if (act == ACT_RELU) return max(x, 0.0);
  if (act == ACT_SILU) return x * sigmoid(x);
  // ACT_GELU
  float u = GELU_SCALE * (x + 0.044715 * x * x * x);
  float t = abs(u) >= GELU_TANH_SATURATES ? sign(u) : tanh(u);
  return 0.5 * x * (1.0 + t);
}

// d act(x) / dx
float act_derivative(float x, uint act) {
  if (act == ACT_RELU) return x > 0.0 ? 1.0 : 0.0;
  if (act == ACT_SILU) {
    float s = sigmoid(x);
    return s + x * s * (1.0 - s);  // s (1 + x (1 - s))
  }
  // ACT_GELU
  float u = GELU_SCALE * (x + 0.044715 * x * x * x);
  // Saturated: 1 - t*t is exactly 0 and the derivative 0.5 (1 + t), i.e. 1 or 0, without du (whose x*x overflows to
  // inf for |x| > 5e19, and 0 * inf is NaN).
  if (abs(u) >= GELU_TANH_SATURATES) return u > 0.0 ? 1.0 : 0.0;
  float t = tanh(u);
  float du = GELU_SCALE * (1.0 + 3.0 * 0.044715 * x * x);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

// The same, four elements at a time (the 4-wide memory-bound kernels): each lane exactly as the scalar function.
vec4 act_forward(vec4 x, uint act) {
  return vec4(act_forward(x.x, act), act_forward(x.y, act), act_forward(x.z, act), act_forward(x.w, act));
}
vec4 act_derivative(vec4 x, uint act) {
  return vec4(act_derivative(x.x, act), act_derivative(x.y, act), act_derivative(x.z, act), act_derivative(x.w, act));
}
