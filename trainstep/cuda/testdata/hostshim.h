// hostshim.h: what kernels/*.cu need from CUDA, for the host harness
// (hostharness_test.go), which compiles the kernels with the machine's C++
// compiler and runs every launch's grid on the CPU: blocks one after
// another, the threads of a block one after another. That is faithful
// because no kernel shares memory between threads or waits at a barrier
// (TestSourcesEmbedded forbids both); __shared__ and __syncthreads stop
// the compilation here rather than run with the wrong meaning.
#include <math.h>
#include <stddef.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ _Pragma("GCC error \"__shared__: the host harness runs a block's threads one by one\"")
#define __syncthreads() _Pragma("GCC error \"__syncthreads: the host harness runs a block's threads one by one\"")

// The launch's coordinates, unsigned as in CUDA; set before each thread.
struct ps_dim3 {
    unsigned int x, y, z;
};
static ps_dim3 blockIdx, threadIdx, blockDim, gridDim;

// Atomics: the threads run one at a time, so a plain read-modify-write is
// atomic; each returns the old value as CUDA's do.
static inline float atomicAdd(float* p, float v) {
    float old = *p;
    *p = old + v;
    return old;
}
static inline int atomicOr(int* p, int v) {
    int old = *p;
    *p = old | v;
    return old;
}

// ps_run_grid runs kernel (one thread's body) for every thread of a
// one-dimensional grid of grid blocks of block threads.
template <class F>
static void ps_run_grid(int grid, int block, F kernel) {
    gridDim = {(unsigned int)grid, 1, 1};
    blockDim = {(unsigned int)block, 1, 1};
    blockIdx = threadIdx = {0, 0, 0};
    for (int b = 0; b < grid; b++) {
        blockIdx.x = (unsigned int)b;
        for (int t = 0; t < block; t++) {
            threadIdx.x = (unsigned int)t;
            kernel();
        }
    }
}
