// The mnrl loss's kernels (mnrl.go): the unit vectors of a Matryoshka
// prefix of the embeddings, and their backward pass into the full rows
// (unit_row and unit_row_bwd, margin.cu).
// The similarities and their gradients are cuBLAS products, the softmax
// the softmax loss's (losses.cu).

// prefix_normalize: for each of the rows of e (row length ld), its first
// d units as a unit vector: nrm[r] = sqrt(sum_{k<d} e[r][k]^2 + 1e-12),
// u[r][k] = e[r][k] / nrm[r], u (rows, d).
extern "C" __global__ void prefix_normalize(int rows, int d, int ld, const float* e, float* u, float* nrm) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    nrm[r] = unit_row(e + (size_t)r * ld, d, u + (size_t)r * d);
}

// prefix_normalize_bwd: adds the gradient of the prefix's units to the
// first d units of each row of de (row length ld):
// de[r][k] += (du[r][k] - u[r][k] * (u[r]·du[r])) / nrm[r].
extern "C" __global__ void prefix_normalize_bwd(int rows, int d, int ld, const float* u, const float* nrm, const float* du,
                                                float* de) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    unit_row_bwd(u + (size_t)r * d, nrm[r], du + (size_t)r * d, d, 1, de + (size_t)r * ld);
}
