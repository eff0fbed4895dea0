// Embedding gather and gradient scatter.
//
// Layouts (row-major): ids and lens describe `rows` sentences padded to T
// steps, ids[r*T + t]; x is time-major (T, rows, d) like the CPU backend's
// input tensor; drop is [r][t][u] (the Batch's DropA then DropB), or NULL.
// One thread per (t, r, u); no shared memory.

// gather_embed: x[t][r][u] = emb[ids[r][t]][u] * drop[r][t][u] for t < len[r], else 0.
extern "C" __global__ void gather_embed(int rows, int T, int d, const int* ids, const int* lens,
                                        const float* emb, const float* drop, float* x) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int u = tid % d;
    int r = (tid / d) % rows;
    int t = tid / (d * rows);
    if (t >= lens[r]) {
        x[tid] = 0.0f;
        return;
    }
    float v = emb[(size_t)ids[r * T + t] * d + u];
    if (drop != 0) v *= drop[((size_t)r * T + t) * d + u];
    x[tid] = v;
}

// scatter_add_embed: grad[ids[r][t]][u] += dx[t][r][u] * drop[r][t][u] for
// t < len[r]. A word seen twice in the batch is added twice: atomicAdd.
extern "C" __global__ void scatter_add_embed(int rows, int T, int d, const int* ids, const int* lens,
                                             const float* drop, const float* dx, float* grad) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T * rows * d) return;
    int u = tid % d;
    int r = (tid / d) % rows;
    int t = tid / (d * rows);
    if (t >= lens[r]) return;
    float g = dx[tid];
    if (drop != 0) g *= drop[((size_t)r * T + t) * d + u];
    atomicAdd(&grad[(size_t)ids[r * T + t] * d + u], g);
}
