// Elementwise pieces of the bidirectional encoders, the DAN and the loss
// towers: time reversal, sums, activations of feed-forward layers (whose
// products are cuBLAS GEMMs). One thread per output value.

// reverse_steps: out[t][r][u] = beta*out[t][r][u] + x[len[r]-1-t][r][u] for
// t < len[r] (else + 0): each sentence's own words reversed in time, the
// padding kept at the end. x and out are (T, rows, d) and distinct; the
// map is its own inverse, so with beta = 1 it also adds a reversed
// direction's gradient back. beta = 0 ignores out's content.
extern "C" __global__ void reverse_steps(int rows, int T, int d, const int* lens, const float* x, float beta, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int u = tid % d;
    int r = (tid / d) % rows;
    int t = tid / (d * rows);
    int len = lens[r];
    float v = t < len ? x[((size_t)(len - 1 - t) * rows + r) * d + u] : 0.0f;
    out[tid] = beta != 0.0f ? beta * out[tid] + v : v;
}

// add_to: out[i] += a[i].
extern "C" __global__ void add_to(int n, const float* a, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    out[tid] += a[tid];
}

// tanh_fwd: z = tanh(z) in place.
extern "C" __global__ void tanh_fwd(int n, float* z) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    z[tid] = tanhf(z[tid]);
}

// tanh_bwd: dz = dy * (1 - y^2) from the output y; dz may be dy.
extern "C" __global__ void tanh_bwd(int n, const float* y, const float* dy, float* dz) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float v = y[tid];
    dz[tid] = dy[tid] * (1.0f - v * v);
}

// sigmoid_fwd: z = 1/(1+exp(-z)) in place.
extern "C" __global__ void sigmoid_fwd(int n, float* z) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    z[tid] = 1.0f / (1.0f + expf(-z[tid]));
}

// sigmoid_bwd: dz = dy * y * (1 - y) from the output y; dz may be dy.
extern "C" __global__ void sigmoid_bwd(int n, const float* y, const float* dy, float* dz) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float v = y[tid];
    dz[tid] = dy[tid] * v * (1.0f - v);
}

// div_len: out[r][u] = v[r][u] / len[r] over (rows, d): gran3's and
// gran4's last running state over the sentence's length, and (the same
// map) its gradient.
extern "C" __global__ void div_len(int rows, int d, const int* lens, const float* v, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    out[tid] = v[tid] * (1.0f / (float)lens[tid / d]);
}
