// The losses other than margin, on the 2n sentence embeddings emb (rows
// 0..n-1 the A sides, n..2n-1 the B sides), E values each; their products
// are cuBLAS GEMMs.

// hinge_fwd: Elgohary & Carpuat (2016) Eq. 1, one thread per pair i:
//   h[i][m]   = max(0, delta + |a_i - b_i|^2 - |a_i - b_j|^2), j = neg_b[i][m]
//   h[i][k+m] = max(0, delta + |a_i - b_i|^2 - |b_i - a_j|^2), j = neg_a[i][m]
// h is (n, 2k); the loss is sum(h)/n.
extern "C" __global__ void hinge_fwd(int n, int E, int k, const float* emb, float delta, const int* neg_b, const int* neg_a,
                                     float* h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* a = emb + (size_t)i * E;
    const float* b = emb + (size_t)(n + i) * E;
    float pd = 0.0f;
    for (int u = 0; u < E; u++) pd += (a[u] - b[u]) * (a[u] - b[u]);
    for (int m = 0; m < k; m++) {
        const float* bj = emb + (size_t)(n + neg_b[i * k + m]) * E;
        const float* aj = emb + (size_t)neg_a[i * k + m] * E;
        float d1 = 0.0f, d2 = 0.0f;
        for (int u = 0; u < E; u++) {
            d1 += (a[u] - bj[u]) * (a[u] - bj[u]);
            d2 += (b[u] - aj[u]) * (b[u] - aj[u]);
        }
        float h1 = delta + pd - d1, h2 = delta + pd - d2;
        h[(size_t)i * 2 * k + m] = h1 > 0.0f ? h1 : 0.0f;
        h[(size_t)i * 2 * k + k + m] = h2 > 0.0f ? h2 : 0.0f;
    }
}

// hinge_bwd: the gradient of scale*sum(h) with respect to emb, one thread
// per (row, unit): the row's own terms, and the terms in which it is
// another pair's negative, listed by in_b (entries i*k+m of neg_b whose
// value is the row's pair, for B rows; CSR offsets in_b_off) and in_a
// (of neg_a, for A rows).
extern "C" __global__ void hinge_bwd(int n, int E, int k, const float* emb, const int* neg_b, const int* neg_a,
                                     const float* h, const int* in_b_off, const int* in_b, const int* in_a_off,
                                     const int* in_a, float scale, float* demb) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= 2 * n * E) return;
    int u = tid % E;
    int r = tid / E;
    int i = r % n;
    float ai = emb[(size_t)i * E + u], bi = emb[(size_t)(n + i) * E + u];
    float g = 0.0f;
    if (r < n) {
        for (int m = 0; m < k; m++) {
            if (h[(size_t)i * 2 * k + m] > 0.0f) g += 2.0f * (emb[(size_t)(n + neg_b[i * k + m]) * E + u] - bi);
            if (h[(size_t)i * 2 * k + k + m] > 0.0f) g += 2.0f * (ai - bi);
        }
        for (int q = in_a_off[i]; q < in_a_off[i + 1]; q++) {
            int e = in_a[q];
            int i2 = e / k;
            if (h[(size_t)i2 * 2 * k + k + e % k] > 0.0f) g += 2.0f * (emb[(size_t)(n + i2) * E + u] - ai);
        }
    } else {
        for (int m = 0; m < k; m++) {
            if (h[(size_t)i * 2 * k + m] > 0.0f) g -= 2.0f * (ai - bi);
            if (h[(size_t)i * 2 * k + k + m] > 0.0f) g += 2.0f * (emb[(size_t)neg_a[i * k + m] * E + u] - ai);
        }
        for (int q = in_b_off[i]; q < in_b_off[i + 1]; q++) {
            int e = in_b[q];
            int i2 = e / k;
            if (h[(size_t)i2 * 2 * k + e % k] > 0.0f) g += 2.0f * (emb[(size_t)i2 * E + u] - bi);
        }
    }
    demb[tid] = scale * g;
}

// softmax_xent_fwd: cross-entropy of a row softmax, one thread per row of
// the (rows, K) logits z, which are overwritten with the probabilities p:
//   loss[r] = -sum_k target[r][k] * log p[r][k],  tsum[r] = sum_k target[r][k]
// target NULL is the identity (rows = K): the softmax loss of Yang et al.
// (2018), each input's own response the answer.
extern "C" __global__ void softmax_xent_fwd(int rows, int K, float* z, const float* target, float* loss, float* tsum) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float* zr = z + (size_t)r * K;
    float mx = zr[0];
    for (int k = 1; k < K; k++) mx = zr[k] > mx ? zr[k] : mx;
    float s = 0.0f;
    for (int k = 0; k < K; k++) s += expf(zr[k] - mx);
    float lse = mx + logf(s);
    float l = 0.0f, ts = 0.0f;
    for (int k = 0; k < K; k++) {
        float t = target != 0 ? target[(size_t)r * K + k] : (k == r ? 1.0f : 0.0f);
        float lp = zr[k] - lse;
        if (t != 0.0f) l -= t * lp;
        ts += t;
        zr[k] = expf(lp);
    }
    loss[r] = l;
    tsum[r] = ts;
}

// softmax_xent_bwd: dz = scale * (p * tsum[r] - target) over (rows, K); dz
// may be p.
extern "C" __global__ void softmax_xent_bwd(int rows, int K, const float* p, const float* target, const float* tsum,
                                            float scale, float* dz) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * K) return;
    int k = tid % K;
    int r = tid / K;
    float t = target != 0 ? target[tid] : (k == r ? 1.0f : 0.0f);
    dz[tid] = scale * (p[tid] * tsum[r] - t);
}

// sim_feats: the features of Tai et al. (2015) for pair i, one thread per
// (i, u): hx = a*b, hp = |a - b|, both (n, E).
extern "C" __global__ void sim_feats(int n, int E, const float* emb, float* hx, float* hp) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n * E) return;
    float a = emb[tid], b = emb[(size_t)n * E + tid];
    hx[tid] = a * b;
    hp[tid] = fabsf(a - b);
}

// sim_feats_bwd: from dhx and dhp, the gradients of a_i and b_i (rows i and
// n+i of demb), written by the thread of (i, u).
extern "C" __global__ void sim_feats_bwd(int n, int E, const float* emb, const float* dhx, const float* dhp, float* demb) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n * E) return;
    float a = emb[tid], b = emb[(size_t)n * E + tid];
    float sg = a > b ? 1.0f : (a < b ? -1.0f : 0.0f);
    demb[tid] = dhx[tid] * b + dhp[tid] * sg;
    demb[(size_t)n * E + tid] = dhx[tid] * a - dhp[tid] * sg;
}
