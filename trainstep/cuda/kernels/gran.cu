// The GRAN gate of Wieting & Gimpel (2017) Eq. 1, elementwise over the
// (T, rows, d) step values: a_t = x_t * s_t, s_t = sig(x_t·Wx + h_t·Wh + b),
// the pre-activations computed by cuBLAS beforehand.

// gran_gate_fwd: z is overwritten with s = sig(z); a = x * s.
extern "C" __global__ void gran_gate_fwd(int n, const float* x, float* z, float* a) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float s = 1.0f / (1.0f + expf(-z[tid]));
    z[tid] = s;
    a[tid] = x[tid] * s;
}

// gran_gate_bwd: from da, the direct gradient of x (dx = da * s) and that
// of the gate's pre-activation (dz = da * x * s * (1 - s)).
extern "C" __global__ void gran_gate_bwd(int n, const float* x, const float* s, const float* da, float* dx, float* dz) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    float sv = s[tid];
    dx[tid] = da[tid] * sv;
    dz[tid] = da[tid] * x[tid] * sv * (1.0f - sv);
}
