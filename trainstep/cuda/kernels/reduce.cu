// Masked means over time, column reductions, bias fills and checks.
// Every kernel is one thread per output value with a serial loop, no
// shared memory and no __syncthreads, so that a thread-by-thread host
// emulation (emulate.go) runs the same arithmetic.

// masked_mean: out[r][u] = (1/len[r]) * sum_{t < len[r]} v[t][r][u]; v is (T, rows, d).
extern "C" __global__ void masked_mean(int rows, int T, int d, const int* lens, const float* v, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int u = tid % d;
    int r = tid / d;
    float s = 0.0f;
    for (int t = 0; t < lens[r]; t++) s += v[((size_t)t * rows + r) * d + u];
    out[tid] = s * (1.0f / (float)lens[r]);
}

// masked_mean_bwd: dv[t][r][u] = dout[r][u] / len[r] for t < len[r], else 0.
extern "C" __global__ void masked_mean_bwd(int rows, int T, int d, const int* lens, const float* dout, float* dv) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int u = tid % d;
    int r = (tid / d) % rows;
    int t = tid / (d * rows);
    dv[tid] = t < lens[r] ? dout[r * d + u] * (1.0f / (float)lens[r]) : 0.0f;
}

// fill_rows: out[i][j] = b[j] for a (rows, cols) matrix: the bias that a
// following GEMM with beta = 1 adds to.
extern "C" __global__ void fill_rows(int rows, int cols, const float* b, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * cols) return;
    out[tid] = b[tid % cols];
}

// col_reduce: column sums of a (rows, cols) matrix in chunks of chunk
// rows (the last one shorter): out[c][j] = sum over chunk c's rows i of
// a[i*lda + j] * mul[i*ldm + j], or of a[i*lda + j] alone when mul is NULL
// (bias gradients; the peephole gradients: a column block of the gate
// gradients against the cell states). One thread per (c, j), neighbouring
// threads on neighbouring columns. With chunk >= rows it is one pass; over
// a tall matrix (an LSTM's T*R rows) the Go side takes two: chunks of
// about sqrt(rows) rows, then this again over their sums. (One thread a
// column looping over an LSTM's rows at batch 1,000 took 1.7 ms on an
// H200.)
extern "C" __global__ void col_reduce(int rows, int cols, int chunk, int lda, const float* a, int ldm, const float* mul, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int chunks = (rows + chunk - 1) / chunk;
    if (tid >= chunks * cols) return;
    int j = tid % cols;
    int c = tid / cols;
    int end = (c + 1) * chunk < rows ? (c + 1) * chunk : rows;
    float s = 0.0f;
    for (int i = c * chunk; i < end; i++) s += mul != 0 ? a[(size_t)i * lda + j] * mul[(size_t)i * ldm + j] : a[(size_t)i * lda + j];
    out[tid] = s;
}

// sumsq_grad: the L2 terms. Over w (n values), with w0 NULL (lambda_c) or
// the initial embeddings (lambda_w): g += 2*lambda*(w - w0), and each of
// the launch's threads writes its partial sum of (w - w0)^2, in double, to
// partial[tid]; the host adds the partials. Grid-stride loop.
extern "C" __global__ void sumsq_grad(int n, const float* w, const float* w0, float lambda, float* g, double* partial) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    double s = 0.0;
    for (int i = tid; i < n; i += stride) {
        float dv = w0 != 0 ? w[i] - w0[i] : w[i];
        s += (double)dv * (double)dv;
        g[i] += 2.0f * lambda * dv;
    }
    partial[tid] = s;
}

// nonfinite: flag[0] = 1 when any of v's n values is NaN or infinite.
extern "C" __global__ void nonfinite(int n, const float* v, int* flag) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    if (!isfinite(v[tid])) atomicOr(flag, 1);
}

// sumsq_grad_rows: sumsq_grad over the nrows listed rows of width values
// (the lazy lambda_w of a sparse embedding update). Grid-stride loop.
extern "C" __global__ void sumsq_grad_rows(int nrows, int width, const int* rows, const float* w, const float* w0, float lambda,
                                           float* g, double* partial) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    double s = 0.0;
    for (int k = tid; k < nrows * width; k += stride) {
        size_t i = (size_t)rows[k / width] * width + k % width;
        float dv = w0 != 0 ? w[i] - w0[i] : w[i];
        s += (double)dv * (double)dv;
        g[i] += 2.0f * lambda * dv;
    }
    partial[tid] = s;
}
