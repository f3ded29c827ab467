// Activations and their derivatives, as in cpu/kernels.cpp.
// ACT_RELU = 0, ACT_GELU = 1 (the tanh approximation: Hendrycks & Gimpel 2016, torch approximate='tanh').
const uint ACT_RELU = 0;
const uint ACT_GELU = 1;
const float GELU_SCALE = 0.7978845608028654;  // sqrt(2/pi)

float act_forward(float x, uint act) {
  if (act == ACT_RELU) return max(x, 0.0);
  float u = GELU_SCALE * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + tanh(u));
}

// d act(x) / dx
float act_derivative(float x, uint act) {
  if (act == ACT_RELU) return x > 0.0 ? 1.0 : 0.0;
  float u = GELU_SCALE * (x + 0.044715 * x * x * x);
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
