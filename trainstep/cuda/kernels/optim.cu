// Optimiser steps, elementwise over one parameter of n values, with the
// update rules of compute.Optimizer (float32, the host computes the bias
// corrections c1 = 1/(1-beta1^t), c2 = 1/(1-beta2^t) in float64). The
// dense forms read what changes every step from device memory, hyper =
// {lr, c1, c2}, so that a captured update (a CUDA graph) replays with the
// step's values.

// adam: m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2; w -= lr*(m*c1)/(sqrt(v*c2)+eps).
extern "C" __global__ void adam(int n, float* w, const float* g, float* m, float* v, const float* hyper, float b1, float b2,
                                float eps) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float lr = hyper[0], c1 = hyper[1], c2 = hyper[2];
    float gi = g[tid];
    float mi = b1 * m[tid] + (1.0f - b1) * gi;
    float vi = b2 * v[tid] + (1.0f - b2) * gi * gi;
    m[tid] = mi;
    v[tid] = vi;
    w[tid] -= lr * (mi * c1) / (sqrtf(vi * c2) + eps);
}

// sgd: w -= lr*g.
extern "C" __global__ void sgd(int n, float* w, const float* g, const float* hyper) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    w[tid] -= hyper[0] * g[tid];
}

// rmsprop: v = rho*v + (1-rho)*g^2; w -= lr*g/(sqrt(v)+eps).
extern "C" __global__ void rmsprop(int n, float* w, const float* g, float* v, const float* hyper, float rho, float eps) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float lr = hyper[0];
    float gi = g[tid];
    float vi = rho * v[tid] + (1.0f - rho) * gi * gi;
    v[tid] = vi;
    w[tid] -= lr * gi / (sqrtf(vi) + eps);
}

// The row-sparse forms (Config.EmbeddingUpdate sparse): the same rules over
// the nrows rows of width values of a table listed in rows (distinct row
// indexes), the other rows and their state left as they are.

// adam_rows: adam over the listed rows, each first caught up with the
// steps it was skipped (compute.CatchUp): w steps s[k]·m/√v of its last
// update, m and v decay by d1[k] and d2[k], k being the row's place in
// rows.
extern "C" __global__ void adam_rows(int nrows, int width, const int* rows, float* w, const float* g, float* m, float* v,
                                     const float* d1, const float* d2, const float* s,
                                     float lr, float b1, float b2, float c1, float c2, float eps) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nrows * width) return;
    int k = tid / width;
    size_t i = (size_t)rows[k] * width + tid % width;
    float m0 = m[i], v0 = v[i];
    float wi = w[i];
    if (s[k] != 0.0f && v0 > 0.0f) wi -= s[k] * m0 / sqrtf(v0);
    m0 *= d1[k];
    v0 *= d2[k];
    float gi = g[i];
    float mi = b1 * m0 + (1.0f - b1) * gi;
    float vi = b2 * v0 + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] = wi - lr * (mi * c1) / (sqrtf(vi * c2) + eps);
}

// sgd_rows: sgd over the listed rows.
extern "C" __global__ void sgd_rows(int nrows, int width, const int* rows, float* w, const float* g, float lr) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nrows * width) return;
    size_t i = (size_t)rows[tid / width] * width + tid % width;
    w[i] -= lr * g[i];
}

// rmsprop_rows: rmsprop over the listed rows, v first decayed by d2[k]
// for the steps the row was skipped (compute.CatchUp).
extern "C" __global__ void rmsprop_rows(int nrows, int width, const int* rows, float* w, const float* g, float* v,
                                        const float* d2, float lr, float rho, float eps) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nrows * width) return;
    int k = tid / width;
    size_t i = (size_t)rows[k] * width + tid % width;
    float gi = g[i];
    float vi = rho * (v[i] * d2[k]) + (1.0f - rho) * gi * gi;
    v[i] = vi;
    w[i] -= lr * gi / (sqrtf(vi) + eps);
}

// catch_up_rows: the listed rows of an Adam table caught up with the steps
// since their last update (compute.CatchUp.Flush): w steps s[k]·m/√v, m and
// v decay by d1[k] and d2[k].
extern "C" __global__ void catch_up_rows(int nrows, int width, const int* rows, float* w, float* m, float* v,
                                         const float* d1, const float* d2, const float* s) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nrows * width) return;
    int k = tid / width;
    size_t i = (size_t)rows[k] * width + tid % width;
    float m0 = m[i], v0 = v[i];
    if (s[k] != 0.0f && v0 > 0.0f) w[i] -= s[k] * m0 / sqrtf(v0);
    m[i] = m0 * d1[k];
    v[i] = v0 * d2[k];
}

// scale_rows: the listed rows of a table multiplied by d[k] (RMSProp's v
// caught up).
extern "C" __global__ void scale_rows(int nrows, int width, const int* rows, float* v, const float* d) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nrows * width) return;
    size_t i = (size_t)rows[tid / width] * width + tid % width;
    v[i] *= d[tid / width];
}
