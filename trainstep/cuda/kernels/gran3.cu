// One step of gran3 and gran4 (Wieting & Gimpel 2017 §3.1), whose running
// sum a_t = x_t * g1 + a_{t-1} * g2 is kept through padded steps; the
// gates' pre-activations z1, z2 = x_t·Wx + h_t·Wh + b (+ a_{t-1}·Wa for
// gran4) come from cuBLAS beforehand. One thread per (row, unit); x, z1,
// z2, dx, dz1, dz2 point at step t's (rows, d) block.

// gran3_step_fwd: z1, z2 overwritten with their sigmoids; a_out = a_prev at
// a padded step (t >= len[r]), else x*s1 + a_prev*s2.
extern "C" __global__ void gran3_step_fwd(int rows, int d, int t, const int* lens, const float* x, float* z1, float* z2,
                                          const float* a_prev, float* a_out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    if (t >= lens[tid / d]) {
        a_out[tid] = a_prev[tid];
        return;
    }
    float s1 = 1.0f / (1.0f + expf(-z1[tid]));
    float s2 = 1.0f / (1.0f + expf(-z2[tid]));
    z1[tid] = s1;
    z2[tid] = s2;
    a_out[tid] = x[tid] * s1 + a_prev[tid] * s2;
}

// gran3_step_bwd: da holds the gradient of a_t and is overwritten with
// that of a_{t-1} through the step (carried whole at a padded step); dx,
// dz1, dz2 receive the step's gradients of x_t and the pre-activations (0
// at a padded step).
extern "C" __global__ void gran3_step_bwd(int rows, int d, int t, const int* lens, const float* x, const float* s1,
                                          const float* s2, const float* a_prev, float* da, float* dx, float* dz1, float* dz2) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    if (t >= lens[tid / d]) {
        dx[tid] = 0.0f;
        dz1[tid] = 0.0f;
        dz2[tid] = 0.0f;
        return;
    }
    float g = da[tid], v1 = s1[tid], v2 = s2[tid];
    dx[tid] = g * v1;
    dz1[tid] = g * x[tid] * v1 * (1.0f - v1);
    dz2[tid] = g * a_prev[tid] * v2 * (1.0f - v2);
    da[tid] = g * v2;
}
