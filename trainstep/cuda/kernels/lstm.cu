// One time step of the peephole LSTM (Gers et al. 2003) of the CPU
// backend, forward and backward, one thread per (row, unit); the GEMMs
// x·Wx + b (all steps at once) and h_{t-1}·Wh (per step) run in cuBLAS
// before the forward kernel, dZ_t·Wh^T after the backward one.
//
//   z = x_t·Wx + h_{t-1}·Wh + b           (columns: zi zf zg zo, H each)
//   i = sig(zi + pi*c_{t-1})  f = sig(zf + pf*c_{t-1})  g = tanh(zg)
//   c_t = f*c_{t-1} + i*g     o = sig(zo + po*c_t)      h_t = o*tanh(c_t)
//
// At padded steps (t >= len[r]) the state is carried unchanged.

__device__ __forceinline__ float sigm(float z) { return 1.0f / (1.0f + expf(-z)); }

// lstm_cell_fwd: z (rows, 4H) holds the pre-activations of step t and is
// overwritten with the activations i f g o (read by the backward kernel).
extern "C" __global__ void lstm_cell_fwd(int rows, int H, int t, const int* lens, float* z,
                                         const float* pi, const float* pf, const float* po,
                                         const float* c_prev, const float* h_prev, float* c_out, float* h_out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * H) return;
    int j = tid % H;
    int r = tid / H;
    float cp = c_prev[tid];
    if (t >= lens[r]) {
        c_out[tid] = cp;
        h_out[tid] = h_prev[tid];
        return;
    }
    float* zr = z + (size_t)r * 4 * H;
    float i = sigm(zr[j] + pi[j] * cp);
    float f = sigm(zr[H + j] + pf[j] * cp);
    float g = tanhf(zr[2 * H + j]);
    float c = f * cp + i * g;
    float o = sigm(zr[3 * H + j] + po[j] * c);
    zr[j] = i;
    zr[H + j] = f;
    zr[2 * H + j] = g;
    zr[3 * H + j] = o;
    c_out[tid] = c;
    h_out[tid] = o * tanhf(c);
}

// lstm_cell_bwd: the gradient through step t. dh = dh_ext + dh_rec is the
// gradient of h_t (from the encoder's output and from step t+1); dc holds
// that of c_t and is overwritten with that of c_{t-1}; dh_carry receives
// the part of the gradient of h_{t-1} that is not through Wh (all of dh at
// a padded step, else 0), dz the gate pre-activation gradients (rows, 4H),
// zero at padded steps.
extern "C" __global__ void lstm_cell_bwd(int rows, int H, int t, const int* lens, const float* act,
                                         const float* pi, const float* pf, const float* po,
                                         const float* c_prev, const float* c_cur, const float* dh_ext,
                                         const float* dh_rec, float* dc, float* dh_carry, float* dz) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * H) return;
    int j = tid % H;
    int r = tid / H;
    float dh = dh_ext[tid] + dh_rec[tid];
    float* dzr = dz + (size_t)r * 4 * H;
    if (t >= lens[r]) {
        dh_carry[tid] = dh;
        dzr[j] = 0.0f;
        dzr[H + j] = 0.0f;
        dzr[2 * H + j] = 0.0f;
        dzr[3 * H + j] = 0.0f;
        return;
    }
    const float* ar = act + (size_t)r * 4 * H;
    float i = ar[j], f = ar[H + j], g = ar[2 * H + j], o = ar[3 * H + j];
    float cp = c_prev[tid];
    float tc = tanhf(c_cur[tid]);
    float dzo = dh * tc * o * (1.0f - o);
    float dcn = dc[tid] + dh * o * (1.0f - tc * tc) + dzo * po[j];
    float dzi = dcn * g * i * (1.0f - i);
    float dzf = dcn * cp * f * (1.0f - f);
    float dzg = dcn * i * (1.0f - g * g);
    dc[tid] = dcn * f + dzi * pi[j] + dzf * pf[j];
    dh_carry[tid] = 0.0f;
    dzr[j] = dzi;
    dzr[H + j] = dzf;
    dzr[2 * H + j] = dzg;
    dzr[3 * H + j] = dzo;
}
