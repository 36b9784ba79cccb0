// expect-lines: 1-9 AN105 add_kernel, scale_kernel
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

template <typename T> __global__ void scale_kernel(T* x, T s) { x[threadIdx.x] *= s; }
