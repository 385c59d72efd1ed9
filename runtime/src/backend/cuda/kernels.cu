// Elementwise and reduction kernels of the placement runtime, compiled once per device with NVRTC.
// Lengths are `unsigned long long` (Rust passes `usize`): NVRTC has no standard headers.
// Every kernel walks its range with a grid-stride loop, so any grid size covers any length.

#define PLACEMENT_BINARY(name, expr)                                                         \
    extern "C" __global__ void name(const float* a, const float* b, float* out, unsigned long long n) { \
        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;                \
             i += (unsigned long long)blockDim.x * gridDim.x) {                                          \
            out[i] = (expr);                                                                 \
        }                                                                                    \
    }

PLACEMENT_BINARY(placement_add, a[i] + b[i])
PLACEMENT_BINARY(placement_sub, a[i] - b[i])
PLACEMENT_BINARY(placement_mul, a[i] * b[i])
PLACEMENT_BINARY(placement_div, a[i] / b[i])

extern "C" __global__ void placement_relu(const float* x, float* out, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        // As PyTorch's relu (clamp_min): NaN stays NaN and -0.0 stays -0.0, which fmaxf would
        // turn into 0.0.
        out[i] = x[i] < 0.0f ? 0.0f : x[i];
    }
}

// Each block reduces its share in shared memory, then adds its partial sum to out[0], which the
// caller zeroes first. The block size must be PLACEMENT_BLOCK. Every sum starts from +0.0, as
// PyTorch's: an empty sum is +0.0, and so is a sum of -0.0s; NaN propagates.
#define PLACEMENT_BLOCK 256
extern "C" __global__ void placement_sum(const float* x, float* out, unsigned long long n) {
    __shared__ float partial[PLACEMENT_BLOCK];
    float acc = 0.0f;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) {
        acc += x[i];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, partial[0]);
    }
}
