// The mnrl loss's kernels (mnrl.go): the unit vectors of a Matryoshka
// prefix of the embeddings, and their backward pass into the full rows.
// The similarities and their gradients are cuBLAS products, the softmax
// the softmax loss's (losses.cu).

// prefix_normalize: for each of the rows of e (row length ld), its first
// d units as a unit vector: nrm[r] = sqrt(sum_{k<d} e[r][k]^2 + 1e-12),
// u[r][k] = e[r][k] / nrm[r], u (rows, d).
extern "C" __global__ void prefix_normalize(int rows, int d, int ld, const float* e, float* u, float* nrm) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* er = e + (size_t)r * ld;
    float ss = 0.0f;
    for (int k = 0; k < d; k++) ss += er[k] * er[k];
    float s = sqrtf(ss + 1e-12f);
    nrm[r] = s;
    for (int k = 0; k < d; k++) u[(size_t)r * d + k] = er[k] / s;
}

// prefix_normalize_bwd: adds the gradient of the prefix's units to the
// first d units of each row of de (row length ld):
// de[r][k] += (du[r][k] - u[r][k] * (u[r]·du[r])) / nrm[r].
extern "C" __global__ void prefix_normalize_bwd(int rows, int d, int ld, const float* u, const float* nrm, const float* du,
                                                float* de) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* ur = u + (size_t)r * d;
    const float* dur = du + (size_t)r * d;
    float dot = 0.0f;
    for (int k = 0; k < d; k++) dot += ur[k] * dur[k];
    for (int k = 0; k < d; k++) de[(size_t)r * ld + k] += (dur[k] - ur[k] * dot) / nrm[r];
}
