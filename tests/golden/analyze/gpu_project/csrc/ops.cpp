#include <torch/extension.h>

torch::Tensor fused_add(torch::Tensor a, torch::Tensor b);

class Accumulator {};

// PYBIND11_MODULE(commented, m) { m.def("ghost", &fused_add); }

PYBIND11_MODULE(fused, m) {
  m.def("fused_add", &fused_add, "a + b on the GPU");  // expect: AN105 fused.fused_add
  py::class_<Accumulator>(m, "Accumulator");  // expect: AN105 fused.Accumulator
}

TORCH_LIBRARY(myops, m) {
  m.def("scaled_add(Tensor a, Tensor b, float alpha) -> Tensor");  // expect: AN105 myops::scaled_add
}

TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("scaled_add", &fused_add);  // expect: AN105 myops::scaled_add
}
