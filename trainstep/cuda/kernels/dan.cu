// The deep averaging network's input (Iyyer et al. 2015, with the hashed
// bigrams of Yang et al. 2018): s = (sum of words + sum of bigrams) /
// sqrt(len). The bigram embeddings are gathered by gather_embed (ids of
// the bigrams, lengths len - 1, no dropout) and their gradient scattered
// by scatter_add_embed; the tanh layers are GEMMs and tanh_fwd.

// dan_sum: out[r][u] = (sum_{t < len[r]} x[t][r][u] + xb[t][r][u]) / sqrt(len[r]);
// x and xb are (T, rows, d), zero at padded steps.
extern "C" __global__ void dan_sum(int rows, int T, int d, const int* lens, const float* x, const float* xb, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int u = tid % d;
    int r = tid / d;
    float s = 0.0f;
    for (int t = 0; t < lens[r]; t++) {
        size_t k = ((size_t)t * rows + r) * d + u;
        s += x[k] + xb[k];
    }
    out[tid] = s * (1.0f / sqrtf((float)lens[r]));
}

// dan_sum_bwd: dv[t][r][u] = dout[r][u] / sqrt(len[r]) for t < len[r], else
// 0: the gradient of every word (and, up to len - 1, of every bigram).
extern "C" __global__ void dan_sum_bwd(int rows, int T, int d, const int* lens, const float* dout, float* dv) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int u = tid % d;
    int r = (tid / d) % rows;
    int t = tid / (d * rows);
    dv[tid] = t < lens[r] ? dout[r * d + u] * (1.0f / sqrtf((float)lens[r])) : 0.0f;
}
