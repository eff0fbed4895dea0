// The margin loss of Wieting & Gimpel (2017) Eq. 2-5 on the 2n sentence
// embeddings of a batch (rows 0..n-1 the A sides, n..2n-1 the B sides):
// rows are normalised, the cosine matrix C = U·U^T comes from cuBLAS, and
//   loss = 1/n sum_r [delta - C[i][i+n] + C[r][neg_r]]_+,  i = r mod n,
// with neg_r the most similar row outside r's pair (MAX), or the batch's
// random draw (RAND, MIX). One thread per row, loops over the row.

// row_normalize: nrm[r] = sqrt(sum_u e[r][u]^2 + 1e-12), u[r] = e[r] / nrm[r].
extern "C" __global__ void row_normalize(int rows, int d, const float* e, float* u, float* nrm) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* er = e + (size_t)r * d;
    float ss = 0.0f;
    for (int k = 0; k < d; k++) ss += er[k] * er[k];
    float s = sqrtf(ss + 1e-12f);
    nrm[r] = s;
    for (int k = 0; k < d; k++) u[(size_t)r * d + k] = er[k] / s;
}

// row_normalize_bwd: de[r] = (du[r] - u[r] * (u[r]·du[r])) / nrm[r].
extern "C" __global__ void row_normalize_bwd(int rows, int d, const float* u, const float* nrm, const float* du, float* de) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* ur = u + (size_t)r * d;
    const float* dur = du + (size_t)r * d;
    float dot = 0.0f;
    for (int k = 0; k < d; k++) dot += ur[k] * dur[k];
    for (int k = 0; k < d; k++) de[(size_t)r * d + k] = (dur[k] - ur[k] * dot) / nrm[r];
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
