// The margin loss of Wieting & Gimpel (2017) Eq. 2-5 on the 2n sentence
// embeddings of a batch (rows 0..n-1 the A sides, n..2n-1 the B sides):
// rows are normalised, the cosine matrix C = U·U^T comes from cuBLAS, and
//   loss = 1/n sum_r [delta - C[i][i+n] + C[r][neg_r]]_+,  i = r mod n,
// with neg_r the most similar row outside r's pair (MAX), or the batch's
// random draw (RAND, MIX). One thread per row, loops over the row.

// unit_row: u[:d] = e[:d] / nrm with nrm = sqrt(sum_k e[k]^2 + 1e-12),
// returned (also the mnrl loss's prefixes, mnrl.cu).
__device__ __forceinline__ float unit_row(const float* e, int d, float* u) {
    float ss = 0.0f;
    for (int k = 0; k < d; k++) ss += e[k] * e[k];
    float s = sqrtf(ss + 1e-12f);
    for (int k = 0; k < d; k++) u[k] = e[k] / s;
    return s;
}

// unit_row_bwd: the gradient through unit_row, (du - u * (u·du)) / nrm,
// added to de[:d] when add, else written there.
__device__ __forceinline__ void unit_row_bwd(const float* u, float nrm, const float* du, int d, int add, float* de) {
    float dot = 0.0f;
    for (int k = 0; k < d; k++) dot += u[k] * du[k];
    for (int k = 0; k < d; k++) {
        float g = (du[k] - u[k] * dot) / nrm;
        de[k] = add ? de[k] + g : g;
    }
}

// row_normalize: nrm[r] = sqrt(sum_u e[r][u]^2 + 1e-12), u[r] = e[r] / nrm[r].
extern "C" __global__ void row_normalize(int rows, int d, const float* e, float* u, float* nrm) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    nrm[r] = unit_row(e + (size_t)r * d, d, u + (size_t)r * d);
}

// row_normalize_bwd: de[r] = (du[r] - u[r] * (u[r]·du[r])) / nrm[r].
extern "C" __global__ void row_normalize_bwd(int rows, int d, const float* u, const float* nrm, const float* du, float* de) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    unit_row_bwd(u + (size_t)r * d, nrm[r], du + (size_t)r * d, d, 0, de + (size_t)r * d);
}

// margin_fwd: for each of the 2n rows, the negative neg[r] and the hinge
// h[r] = max(0, delta - C[i][i+n] + C[r][neg[r]]). neg is the masked argmax
// of row r of C (its own pair's two columns excluded, as the CPU backend's
// -4 penalty does; the first maximum wins) when neg_rand is NULL (MAX) or
// use_max[r] != 0 (MIX), else neg_rand[r].
extern "C" __global__ void margin_fwd(int n, const float* C, float delta, const int* neg_rand, const int* use_max,
                                      float* h, int* neg) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= 2 * n) return;
    int i = r % n;
    const float* cr = C + (size_t)r * 2 * n;
    int best = neg_rand != 0 ? neg_rand[r] : 0;
    if (neg_rand == 0 || use_max[r] != 0) {
        float bv = -1e30f;
        for (int c = 0; c < 2 * n; c++) {
            float v = cr[c];
            if (c == i || c == i + n) v -= 4.0f;
            if (v > bv) {
                bv = v;
                best = c;
            }
        }
    }
    float hv = delta - C[(size_t)i * 2 * n + i + n] + cr[best];
    h[r] = hv > 0.0f ? hv : 0.0f;
    neg[r] = best;
}

// margin_bwd: dC (2n, 2n, zeroed before) of the mean hinge: +1/n at
// (r, neg[r]) for every active row, and -1/n at (i, i+n) for each active
// row of pair i (both written by row i: no two threads touch one entry).
extern "C" __global__ void margin_bwd(int n, const float* h, const int* neg, float* dC) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= 2 * n) return;
    float g = 1.0f / (float)n;
    if (h[r] > 0.0f) dC[(size_t)r * 2 * n + neg[r]] = g;
    if (r < n) {
        float a = (h[r] > 0.0f ? 1.0f : 0.0f) + (h[r + n] > 0.0f ? 1.0f : 0.0f);
        dC[(size_t)r * 2 * n + r + n] = -a * g;
    }
}
