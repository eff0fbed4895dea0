// The transformer encoder's pieces (compute/transformer.go has the
// formulas): the scaled input with the timing signal, layer norm, masked
// multi-head self-attention, relu, and the bias-plus-residual that a
// projection's GEMM (beta = 1) then adds to. The position-wise products
// (q, k, v, the output projection, the feed-forward layer) are cuBLAS
// GEMMs over every position at once.
//
// Layouts (row-major): the residual stream and the layer-norm outputs are
// (T, rows, d), time-major like x; qkv is (T, rows, 3d) with q, k and v as
// column blocks and head h in columns h*dk ... (h+1)*dk - 1 of each;
// attention probabilities are (rows, H, T, T), [r][h][t][u]. lens[r] is
// sentence r's length n: keys u >= n are masked out. One thread per output
// value, or per row where the row's statistics are needed, with serial
// loops, no shared memory and no __syncthreads (the emulator runs the
// threads one by one).

// tf_input: out[t][r][u] = scale * x[t][r][u] + PE(t, u), the timing
// signal sin(t*w_i) in the first d/2 units and cos(t*w_i) in the second,
// w_i = 10000^(-2i/d), computed in double as compute.TimingSignal.
extern "C" __global__ void tf_input(int rows, int T, int d, float scale, const float* x, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int u = tid % d;
    int t = tid / (d * rows);
    int h = d / 2;
    int i = u < h ? u : u - h;
    double w = pow(10000.0, -2.0 * (double)i / (double)d);
    double pe = u < h ? sin((double)t * w) : cos((double)t * w);
    out[tid] = scale * x[tid] + (float)pe;
}

// scale_to: out[i] = s * v[i] (the input gradient of tf_input).
extern "C" __global__ void scale_to(int n, float s, const float* v, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    out[tid] = s * v[tid];
}

// layer_norm_stats: per row of x (rows, d): the mean mu and rstd =
// 1/sqrt(var + eps) with the biased variance var. One thread per row (its
// values read serially; the outputs are written by layer_norm_apply, one
// thread per value).
extern "C" __global__ void layer_norm_stats(int rows, int d, float eps, const float* x, float* mean, float* rstd) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (size_t)r * d;
    float s = 0.0f;
    for (int j = 0; j < d; j++) s += xr[j];
    float mu = s / (float)d;
    float v = 0.0f;
    for (int j = 0; j < d; j++) {
        float c = xr[j] - mu;
        v += c * c;
    }
    mean[r] = mu;
    rstd[r] = 1.0f / sqrtf(v / (float)d + eps);
}

// layer_norm_apply: y = g * (x - mu) * rstd + b. One thread per value.
extern "C" __global__ void layer_norm_apply(int rows, int d, const float* x, const float* mean, const float* rstd, const float* g,
                                           const float* b, float* y) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int r = tid / d;
    int j = tid % d;
    y[tid] = g[j] * ((x[tid] - mean[r]) * rstd[r]) + b[j];
}

// layer_norm_bwd_stats: per row, with xh = (x - mu)*rstd and e = dy*g, the
// means se = mean(e) and sex = mean(e*xh) that the input gradient needs.
// One thread per row.
extern "C" __global__ void layer_norm_bwd_stats(int rows, int d, const float* x, const float* mean, const float* rstd,
                                               const float* g, const float* dy, float* se, float* sex) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (size_t)r * d;
    const float* dr = dy + (size_t)r * d;
    float mu = mean[r], rs = rstd[r];
    float a = 0.0f, c = 0.0f;
    for (int j = 0; j < d; j++) {
        float e = dr[j] * g[j];
        a += e;
        c += e * ((xr[j] - mu) * rs);
    }
    se[r] = a / (float)d;
    sex[r] = c / (float)d;
}

// layer_norm_bwd: the input gradient of the layer norm,
// rstd * (e - se - xh * sex), added to dx with beta (0: written). One
// thread per value.
extern "C" __global__ void layer_norm_bwd(int rows, int d, const float* x, const float* mean, const float* rstd, const float* g,
                                         const float* dy, const float* se, const float* sex, float beta, float* dx) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int r = tid / d;
    int j = tid % d;
    float rs = rstd[r];
    float v = rs * (dy[tid] * g[j] - se[r] - ((x[tid] - mean[r]) * rs) * sex[r]);
    dx[tid] = beta != 0.0f ? beta * dx[tid] + v : v;
}

// layer_norm_dy_xhat: out[r][j] = dy[r][j] * (x[r][j] - mu[r]) * rstd[r], the
// terms of the gain's gradient, summed over the rows by a GEMM with a row
// of ones (as the bias's, of dy). One thread per value.
extern "C" __global__ void layer_norm_dy_xhat(int rows, int d, const float* x, const float* mean, const float* rstd,
                                             const float* dy, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int r = tid / d;
    out[tid] = dy[tid] * ((x[tid] - mean[r]) * rstd[r]);
}

// fill_value: out[i] = v (the row of ones whose GEMM sums a matrix's rows).
extern "C" __global__ void fill_value(int n, float v, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    out[tid] = v;
}

// bias_residual: out[i][j] = x[i][j] + b[j] over (rows, cols): the
// residual and the bias that a projection's GEMM (beta = 1) then adds to.
extern "C" __global__ void bias_residual(int rows, int cols, const float* x, const float* b, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * cols) return;
    out[tid] = x[tid] + b[tid % cols];
}

// relu_fwd: z = max(z, 0) in place.
extern "C" __global__ void relu_fwd(int n, float* z) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    z[tid] = fmaxf(z[tid], 0.0f);
}

// relu_bwd: dz = dy where the output y > 0, else 0; dz may be dy.
extern "C" __global__ void relu_bwd(int n, const float* y, const float* dy, float* dz) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    dz[tid] = y[tid] > 0.0f ? dy[tid] : 0.0f;
}

// attn_scores: p[r][h][t][u] = scale * q_h[t][r] . k_h[u][r] for u <
// len[r], 0 for the masked keys (softmax rows then read only u < len[r]).
// One thread per (r, h, t, u).
extern "C" __global__ void attn_scores(int rows, int T, int d, int H, const int* lens, float scale, const float* qkv, float* p) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * H * T * T) return;
    int u = tid % T;
    int t = (tid / T) % T;
    int h = (tid / (T * T)) % H;
    int r = tid / (T * T * H);
    if (u >= lens[r]) {
        p[tid] = 0.0f;
        return;
    }
    int dk = d / H;
    const float* q = qkv + ((size_t)t * rows + r) * 3 * d + h * dk;
    const float* k = qkv + ((size_t)u * rows + r) * 3 * d + d + h * dk;
    float s = 0.0f;
    for (int j = 0; j < dk; j++) s += q[j] * k[j];
    p[tid] = scale * s;
}

// attn_softmax: each row p[r][h][t][:] becomes the softmax of its first
// len[r] scores (the rest 0: padding keys). One thread per (r, h, t).
extern "C" __global__ void attn_softmax(int rows, int T, int H, const int* lens, float* p) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * H * T) return;
    int r = tid / (T * H);
    int n = lens[r];
    float* pr = p + (size_t)tid * T;
    float mx = pr[0];
    for (int u = 1; u < n; u++) mx = fmaxf(mx, pr[u]);
    float s = 0.0f;
    for (int u = 0; u < n; u++) {
        float e = expf(pr[u] - mx);
        pr[u] = e;
        s += e;
    }
    float inv = 1.0f / s;
    for (int u = 0; u < n; u++) pr[u] *= inv;
}

// attn_pv: o[t][r][h*dk + j] = sum_{u < len[r]} p[r][h][t][u] * v_h[u][r][j],
// the heads side by side in o (T, rows, d). One thread per value of o.
extern "C" __global__ void attn_pv(int rows, int T, int d, int H, const int* lens, const float* p, const float* qkv, float* o) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int c = tid % d;
    int r = (tid / d) % rows;
    int t = tid / (d * rows);
    int dk = d / H;
    int h = c / dk;
    const float* pr = p + (((size_t)r * H + h) * T + t) * T;
    float s = 0.0f;
    for (int u = 0; u < lens[r]; u++) s += pr[u] * qkv[((size_t)u * rows + r) * 3 * d + 2 * d + c];
    o[tid] = s;
}

// attn_scores_bwd: ds[r][h][t][u] = scale * p * (dp - sum_u' p*dp) with
// dp[u] = do_h[t][r] . v_h[u][r], the gradient of the scores through the
// softmax (0 at masked keys). One thread per (r, h, t).
extern "C" __global__ void attn_scores_bwd(int rows, int T, int d, int H, const int* lens, float scale, const float* p,
                                          const float* qkv, const float* dout, float* ds) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * H * T) return;
    int t = tid % T;
    int h = (tid / T) % H;
    int r = tid / (T * H);
    int n = lens[r];
    int dk = d / H;
    const float* pr = p + (size_t)tid * T;
    float* dr = ds + (size_t)tid * T;
    const float* g = dout + ((size_t)t * rows + r) * d + h * dk;
    float dot = 0.0f;
    for (int u = 0; u < n; u++) {
        const float* v = qkv + ((size_t)u * rows + r) * 3 * d + 2 * d + h * dk;
        float dp = 0.0f;
        for (int j = 0; j < dk; j++) dp += g[j] * v[j];
        dr[u] = dp;
        dot += pr[u] * dp;
    }
    for (int u = 0; u < T; u++) dr[u] = u < n ? scale * pr[u] * (dr[u] - dot) : 0.0f;
}

// attn_qkv_bwd: the gradient of qkv (T, rows, 3d) from ds and dout:
// dq_h[t] = sum_u ds[t][u] k_h[u], dk_h[u] = sum_t ds[t][u] q_h[t],
// dv_h[u] = sum_t p[t][u] do_h[t] (sums over every t: a padded query's
// output has no gradient, so its terms are 0). One thread per value.
extern "C" __global__ void attn_qkv_bwd(int rows, int T, int d, int H, const int* lens, const float* p, const float* ds,
                                       const float* qkv, const float* dout, float* dqkv) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * 3 * d) return;
    int c = tid % (3 * d);
    int r = (tid / (3 * d)) % rows;
    int t = tid / (3 * d * rows);
    int part = c / d;
    int cc = c % d;
    int dk = d / H;
    int h = cc / dk;
    const float* ph = p + ((size_t)r * H + h) * T * T;
    const float* dh = ds + ((size_t)r * H + h) * T * T;
    float s = 0.0f;
    if (part == 0) {
        for (int u = 0; u < lens[r]; u++) s += dh[(size_t)t * T + u] * qkv[((size_t)u * rows + r) * 3 * d + d + cc];
    } else if (part == 1) {
        for (int q = 0; q < T; q++) s += dh[(size_t)q * T + t] * qkv[((size_t)q * rows + r) * 3 * d + cc];
    } else {
        for (int q = 0; q < T; q++) s += ph[(size_t)q * T + t] * dout[((size_t)q * rows + r) * d + cc];
    }
    dqkv[tid] = s;
}
