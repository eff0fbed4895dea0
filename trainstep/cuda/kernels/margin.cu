// The margin loss of Wieting & Gimpel (2017) Eq. 2-5 on the 2n sentence
// embeddings of a batch (rows 0..n-1 the A sides, n..2n-1 the B sides):
// rows are normalised, the cosine matrix C = U·U^T comes from cuBLAS, and
//   loss = 1/n sum_r [delta - C[i][i+n] + C[r][neg_r]]_+,  i = r mod n,
// with neg_r the most similar row outside r's pair (MAX), or the batch's
// random draw (RAND, MIX).

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

// The rows' norms, their backward pass and the hardest negatives take two
// passes each: ROW_LANES threads a row side by side, lane l over the
// columns l, l + ROW_LANES, ..., then one thread a value (or a row) adding
// the lanes' results in lane order. (One thread a row, looping over its
// 300 or 2,000 values, took 114-166 us a kernel at batch 1,000 on an H200.)
#define ROW_LANES 32

// row_dot_part: part[r][l] = sum over k = l, l + ROW_LANES, ... < d of
// a[r][k] * b[r][k].
extern "C" __global__ void row_dot_part(int rows, int d, const float* a, const float* b, float* part) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * ROW_LANES) return;
    int r = tid / ROW_LANES;
    const float* ar = a + (size_t)r * d;
    const float* br = b + (size_t)r * d;
    float s = 0.0f;
    for (int k = tid % ROW_LANES; k < d; k += ROW_LANES) s += ar[k] * br[k];
    part[tid] = s;
}

// lane_sum: a row's ROW_LANES partial sums added in lane order.
__device__ __forceinline__ float lane_sum(const float* part) {
    float s = 0.0f;
    for (int l = 0; l < ROW_LANES; l++) s += part[l];
    return s;
}

// row_normalize_apply: nrm[r] = sqrt(sum_u e[r][u]^2 + 1e-12), the sum
// from row_dot_part(e, e), and u[r] = e[r] / nrm[r]. One thread a value.
extern "C" __global__ void row_normalize_apply(int rows, int d, const float* e, const float* part, float* u, float* nrm) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int r = tid / d;
    float s = sqrtf(lane_sum(part + (size_t)r * ROW_LANES) + 1e-12f);
    u[tid] = e[tid] / s;
    if (tid % d == 0) nrm[r] = s;
}

// row_normalize_bwd_apply: de[r] = (du[r] - u[r] * (u[r]·du[r])) / nrm[r],
// the dot product from row_dot_part(u, du). One thread a value.
extern "C" __global__ void row_normalize_bwd_apply(int rows, int d, const float* u, const float* nrm, const float* du, const float* part,
                                                   float* de) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= rows * d) return;
    int r = tid / d;
    float dot = lane_sum(part + (size_t)r * ROW_LANES);
    de[tid] = (du[tid] - u[tid] * dot) / nrm[r];
}

// margin_max_part: for each of the 2n rows that takes its most similar
// negative (neg_rand NULL, or use_max[r] != 0), lane l's candidate over
// the columns c = l, l + ROW_LANES, ... of row r of C, its own pair's two
// columns less 4 (as the CPU backend's penalty): the first maximum above
// -1e30, its value in pv[r][l] and its column in pidx[r][l] (-1: none).
extern "C" __global__ void margin_max_part(int n, const float* C, const int* neg_rand, const int* use_max, float* pv, int* pidx) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= 2 * n * ROW_LANES) return;
    int r = tid / ROW_LANES;
    if (neg_rand != 0 && use_max[r] == 0) return;
    int i = r % n;
    const float* cr = C + (size_t)r * 2 * n;
    float bv = -1e30f;
    int best = -1;
    for (int c = tid % ROW_LANES; c < 2 * n; c += ROW_LANES) {
        float v = cr[c];
        if (c == i || c == i + n) v -= 4.0f;
        if (v > bv) {
            bv = v;
            best = c;
        }
    }
    pv[tid] = bv;
    pidx[tid] = best;
}

// margin_fwd: for each of the 2n rows, the negative neg[r] and the hinge
// h[r] = max(0, delta - C[i][i+n] + C[r][neg[r]]). neg is the masked argmax
// of row r of C when neg_rand is NULL (MAX) or use_max[r] != 0 (MIX): the
// largest of margin_max_part's lanes, the lowest column among equals, so
// the row's first maximum; else neg_rand[r]. One thread a row.
extern "C" __global__ void margin_fwd(int n, const float* C, float delta, const int* neg_rand, const int* use_max,
                                      const float* pv, const int* pidx, float* h, int* neg) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= 2 * n) return;
    int i = r % n;
    int best = neg_rand != 0 ? neg_rand[r] : 0;
    if (neg_rand == 0 || use_max[r] != 0) {
        float bv = -1e30f;
        int bi = -1;
        for (int l = 0; l < ROW_LANES; l++) {
            int c = pidx[r * ROW_LANES + l];
            float v = pv[r * ROW_LANES + l];
            if (c >= 0 && (v > bv || (v == bv && c < bi))) {
                bv = v;
                bi = c;
            }
        }
        if (bi >= 0) best = bi;
    }
    float hv = delta - C[(size_t)i * 2 * n + i + n] + C[(size_t)r * 2 * n + best];
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
