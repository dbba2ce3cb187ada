// distsm GPU join kernels (loaded by kernels/cupy/launch.py through cupy.RawModule: from the fatbin the build
// compiled, or compiled by NVRTC).
//
// Layout of the data graph (see kernels/index.py): CSR rows sorted by (effective label, neighbour), so the run
// N(v, l) = nbr[run_start[r] .. run_end[r]) is sorted.  With one effective label the run of v is its row
// (r = v); otherwise r is found through the PCSR hash below.  pair_keys[indptr[v] .. indptr[v+1]) holds
// v * n + neighbour for every adjacency entry of v, sorted, which counts the entries between two vertices.
//
// PCSR: an open-addressing hash of (vertex, effective label) -> run id, in groups of 16 eight-byte slots
// (128 bytes, one cache line per lookup).  A slot holds (fingerprint << 32 | run id); a hit is confirmed
// against run_keys[run id] = v * L + l, so lookups are exact.  Slots of a group fill in order and groups
// overflow into the next one (linear probing over groups, no deletions), so an empty slot ends a search.
// Without the hash (gmask < 0, encoding -(runs + 1)) a run is found by binary search in run_keys instead.
//
// The join works over the level's *output space*: every row r of the partial-match table M owns the entries
// [offsets[r-1], offsets[r]) (inclusive prefix sum of |N(M[r, first_col], first_label)|), and entry p reads
// the candidate nbr[p + delta[r]].  Kernels are entry-parallel: a thread takes one entry, finds its row by
// binary search in offsets, and applies every check of the step, so a huge row is spread over the whole
// grid and small rows cost no idle lanes (GSI's "split huge rows" tier is the general case here).  Tables
// that fit one block (<= SMALL entries, set from Python) run in one fused single-block kernel each
// (workload + scan, or extend + in-order compaction) to save launches and host round trips, and a descent whose
// every level fits one block runs all its levels in one launch (descend_small); larger ones run flags -> device
// scan -> scatter over many blocks.
//
// Step program (int32; a small device array, or a page-locked host slot the single-block kernel copies to
// shared memory):
//   [length, n_gt, gt cols..., n_lt, lt cols..., n_dist, distinct cols..., n_chk, (col, label)...,
//    n_pair, (col, need)...]

// Constants shared with Python are defined there once (kernels/cuda_modules.py, JOIN_MODULE) and passed to nvcc
// and NVRTC as -D options; a compilation without them fails here rather than running with sizes Python does not use.
#if !defined(DSM_PCSR_SLOTS) || !defined(DSM_EMPTY_SLOT) || !defined(DSM_SIG_WORDS) || !defined(DSM_PROG_MAX) \
    || !defined(DSM_TIER_COLS) || !defined(DSM_TIER_CHECKS) || !defined(DSM_BLOCK)
#error "join.cu needs -D definitions of its shared constants (kernels/cuda_modules.py, JOIN_MODULE)"
#endif
#if DSM_BLOCK % 32 != 0 || DSM_BLOCK > 1024
#error "DSM_BLOCK must be a multiple of 32 and at most 1024"
#endif

#define DSM_FULL_MASK 0xffffffffu

// ------------------------------------------------------------------------------------------------ helpers
// Adds every thread's survivor count to *counter: one atomic per warp after a shuffle reduction.  Call it with
// the whole warp converged (at the end of a kernel).
__device__ __forceinline__ void dsm_add_count(unsigned long long* counter, unsigned long long local) {
    for (int d = 16; d > 0; d >>= 1) local += __shfl_down_sync(DSM_FULL_MASK, local, d);
    if ((threadIdx.x & 31) == 0 && local) atomicAdd(counter, local);
}

__device__ __forceinline__ unsigned long long dsm_mix64(unsigned long long x) {
    // splitmix64 finaliser
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

// First index i in [0, n) with a[i] > x (n when none).
__device__ __forceinline__ long long dsm_upper_bound(const long long* a, long long n, long long x) {
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (a[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Run id of (v, label), or -1 when v has no entry with that effective label.
__device__ __forceinline__ long long dsm_find_run(long long v, int label, int L, const long long* run_keys,
                                                  const unsigned long long* pcsr, long long gmask) {
    if (label < 0 || label >= L) return -1;
    if (L == 1) return v;
    long long key = v * (long long)L + label;
    if (gmask < 0) {  // no hash (gmask = -(runs + 1)): binary search in the sorted run_keys
        long long runs = -gmask - 1, lo = 0, hi = runs;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            if (run_keys[mid] < key) lo = mid + 1; else hi = mid;
        }
        return (lo < runs && run_keys[lo] == key) ? lo : -1;
    }
    unsigned long long h = dsm_mix64((unsigned long long)key);
    unsigned int fp = (unsigned int)(h >> 32);
    long long g = (long long)(h & (unsigned long long)gmask);
    for (;;) {
        const unsigned long long* grp = pcsr + g * DSM_PCSR_SLOTS;
        for (int s = 0; s < DSM_PCSR_SLOTS; ++s) {
            unsigned long long e = grp[s];
            if (e == DSM_EMPTY_SLOT) return -1;
            if ((unsigned int)(e >> 32) == fp) {
                long long r = (long long)(unsigned int)(e & 0xffffffffull);
                if (run_keys[r] == key) return r;
            }
        }
        g = (g + 1) & gmask;
    }
}

// Is y in the sorted slice nbr[lo, hi)?
__device__ __forceinline__ bool dsm_contains(const int* nbr, long long lo, long long hi, int y) {
    long long end = hi;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (nbr[mid] < y) lo = mid + 1; else hi = mid;
    }
    return lo < end && nbr[lo] == y;
}

// Number of adjacency entries of v whose neighbour is x (over all effective labels).
__device__ __forceinline__ long long dsm_pair_count(const long long* pair_keys, const long long* indptr, int v, int x,
                                                    long long n) {
    long long lo = indptr[v], hi = indptr[v + 1];
    long long key = (long long)v * n + x;
    long long a = lo, b = hi;
    while (a < b) {
        long long mid = (a + b) >> 1;
        if (pair_keys[mid] < key) a = mid + 1; else b = mid;
    }
    long long c = a, d = hi;
    while (c < d) {
        long long mid = (c + d) >> 1;
        if (pair_keys[mid] <= key) c = mid + 1; else d = mid;
    }
    return c - a;
}

// cand if it passes every check of the step against the row M, else -1.  runs (may be null) holds the bounds
// [start, end) of the step's membership-check runs for this row, computed once per row by the tiered kernels;
// without it each check finds its run here.
__device__ __forceinline__ int dsm_check(int cand, const int* M, int ncols, const int* nbr, const long long* indptr,
                                         const long long* run_start, const long long* run_end,
                                         const long long* run_keys, const unsigned long long* pcsr,
                                         long long gmask, int L, const long long* pair_keys, long long n,
                                         const unsigned int* bits, const int* part, const int* prog,
                                         const long long* runs) {
    if (!((bits[cand >> 5] >> (cand & 31)) & 1u)) return -1;
    int k = 1;  // prog[0] is the program's length
    int cnt = prog[k++];
    for (int i = 0; i < cnt; ++i)
        if (!(cand > M[prog[k + i]])) return -1;
    k += cnt;
    cnt = prog[k++];
    for (int i = 0; i < cnt; ++i)
        if (!(cand < M[prog[k + i]])) return -1;
    k += cnt;
    cnt = prog[k++];
    for (int i = 0; i < cnt; ++i)
        if (cand == M[prog[k + i]]) return -1;
    k += cnt;
    cnt = prog[k++];
    for (int i = 0; i < cnt; ++i) {
        long long lo, hi;
        if (runs) {
            lo = runs[2 * i];
            hi = runs[2 * i + 1];
        } else {
            long long r = dsm_find_run(M[prog[k + 2 * i]], prog[k + 2 * i + 1], L, run_keys, pcsr, gmask);
            if (r < 0) return -1;
            lo = run_start[r];
            hi = run_end[r];
        }
        if (!dsm_contains(nbr, lo, hi, cand)) return -1;
    }
    k += 2 * cnt;
    cnt = prog[k++];
    for (int i = 0; i < cnt; ++i) {
        int x = M[prog[k + 2 * i]];
        if (dsm_pair_count(pair_keys, indptr, x, cand, n) != (long long)prog[k + 2 * i + 1]) return -1;
    }
    k += 2 * cnt;
    // Spanning searches (see kernels/query_plan.py PrimeEdge): words cross_first, first_col, require_spanning,
    // prime edge index, directed, then the DUPREMOVE triples (column, arc code, query edge index).
    if (prog[k++] == 0) return cand;
    int pc = part[cand];
    if (prog[k] && part[M[prog[k + 1]]] == pc) return -1;
    if (prog[k + 2]) {
        bool spans = false;
        for (int c = 0; c < ncols; ++c) spans |= part[M[c]] != pc;
        if (!spans) return -1;
    }
    int prime_j = prog[k + 3], directed = prog[k + 4];
    k += 5;
    cnt = prog[k++];
    if (cnt == 0) return cand;
    long long a0 = M[0], b0 = (ncols == 1) ? (long long)cand : (long long)M[1];
    long long pk = directed ? a0 * n + b0 : (a0 < b0 ? a0 * n + b0 : b0 * n + a0);
    for (int i = 0; i < cnt; ++i) {
        long long x = M[prog[k + 3 * i]];
        if (part[x] == pc) continue;
        int code = prog[k + 3 * i + 1];
        long long y = cand;
        long long key = (code == 1 || (code == 2 && x < y)) ? x * n + y : y * n + x;
        if (key < pk || (key == pk && prog[k + 3 * i + 2] < prime_j)) return -1;
    }
    return cand;
}

// Candidate of output entry p if it passes every check of the step, else -1.  *row_out gets p's row.
__device__ __forceinline__ int dsm_probe(long long p, const int* table, int ncols, const long long* offsets,
                                         long long nrows, const long long* delta, const int* nbr,
                                         const long long* indptr, const long long* run_start,
                                         const long long* run_end, const long long* run_keys,
                                         const unsigned long long* pcsr, long long gmask, int L,
                                         const long long* pair_keys, long long n, const unsigned int* bits,
                                         const int* part, const int* prog, long long* row_out) {
    long long row = dsm_upper_bound(offsets, nrows, p);
    *row_out = row;
    return dsm_check(nbr[p + delta[row]], table + row * (long long)ncols, ncols, nbr, indptr, run_start, run_end,
                     run_keys, pcsr, gmask, L, pair_keys, n, bits, part, prog, nullptr);
}

// Exclusive scan of one value per thread over the block (blockDim.x a multiple of 32, at most 1024).
// *total gets the block sum.  sh must hold 32 values.  Every thread of the block must call it.
template <typename T>
__device__ __forceinline__ T dsm_block_scan(T v, T* total, T* sh) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    T x = v;
    for (int d = 1; d < 32; d <<= 1) {
        T y = __shfl_up_sync(DSM_FULL_MASK, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) sh[wid] = x;
    __syncthreads();
    if (wid == 0) {
        T w = (lane < nw) ? sh[lane] : (T)0;
        for (int d = 1; d < 32; d <<= 1) {
            T y = __shfl_up_sync(DSM_FULL_MASK, w, d);
            if (lane >= d) w += y;
        }
        if (lane < nw) sh[lane] = w;
    }
    __syncthreads();
    T before = (wid > 0) ? sh[wid - 1] : (T)0;
    *total = sh[nw - 1];
    __syncthreads();
    return before + x - v;
}

// ------------------------------------------------------------------------------------------------ index
extern "C" __global__ void pcsr_build(const long long* __restrict__ run_keys, long long runs,
                                      unsigned long long* table, long long gmask) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += stride) {
        long long key = run_keys[r];
        unsigned long long h = dsm_mix64((unsigned long long)key);
        unsigned long long val = ((h >> 32) << 32) | (unsigned long long)(unsigned int)r;
        long long g = (long long)(h & (unsigned long long)gmask);
        bool done = false;
        while (!done) {
            for (int s = 0; s < DSM_PCSR_SLOTS; ++s) {
                unsigned long long old = atomicCAS(&table[g * DSM_PCSR_SLOTS + s], DSM_EMPTY_SLOT, val);
                if (old == DSM_EMPTY_SLOT) { done = true; break; }
            }
            g = (g + 1) & gmask;
        }
    }
}

// out[i] = run id of (vs[i], labels[i]) or -1 (checks the hash against run_keys).
extern "C" __global__ void pcsr_lookup(const int* __restrict__ vs, const int* __restrict__ labels, long long m,
                                       int L, const long long* __restrict__ run_keys,
                                       const unsigned long long* __restrict__ pcsr, long long gmask,
                                       long long* __restrict__ out) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride)
        out[i] = dsm_find_run(vs[i], labels[i], L, run_keys, pcsr, gmask);
}

// ------------------------------------------------------------------------------------------------ filter
// qinfo (int64): [lo[nq] | ioff[nq+1] | qdeg[nq] | qsig[DSM_SIG_WORDS * nq] (word-major)].  Item i of the
// concatenated pools belongs to u with ioff[u] <= i < ioff[u+1] and names vertex by_label[lo[u] + i - ioff[u]].
__device__ __forceinline__ int dsm_filter_item(long long i, const int* by_label, const long long* qinfo, int nq,
                                               const unsigned int* sig, long long n, const long long* degrees,
                                               int check_deg, int* u_out) {
    const long long* lo = qinfo;
    const long long* ioff = qinfo + nq;
    const long long* qdeg = qinfo + 2 * nq + 1;
    const long long* qsig = qinfo + 3 * nq + 1;
    int u = (int)dsm_upper_bound(ioff, nq + 1, i) - 1;
    *u_out = u;
    int v = by_label[lo[u] + i - ioff[u]];
    for (int w = 0; w < DSM_SIG_WORDS; ++w) {
        unsigned int q = (unsigned int)qsig[w * nq + u];
        if ((sig[w * n + v] & q) != q) return -1;
    }
    if (check_deg && degrees[v] < qdeg[u]) return -1;
    return v;
}

// One block (every thread calls it): filter, compact in order, per-vertex counts and all candidate bitsets.
__device__ __forceinline__ void dsm_block_filter(const int* by_label, const long long* qinfo, int nq,
                                                 const unsigned int* sig, long long n, const long long* degrees,
                                                 int check_deg, long long items, int* out, long long* seg_counts,
                                                 unsigned int* words, long long nwords, long long* sh) {
    for (long long k = threadIdx.x; k < (long long)nq * nwords; k += blockDim.x) words[k] = 0u;
    for (long long k = threadIdx.x; k < nq; k += blockDim.x) seg_counts[k] = 0;
    __syncthreads();
    long long running = 0;
    for (long long base = 0; base < items; base += blockDim.x) {
        long long i = base + threadIdx.x;
        int v = -1, u = 0;
        if (i < items) v = dsm_filter_item(i, by_label, qinfo, nq, sig, n, degrees, check_deg, &u);
        long long tot;
        long long excl = dsm_block_scan<long long>(v >= 0 ? 1 : 0, &tot, sh);
        if (v >= 0) {
            out[running + excl] = v;
            atomicOr(&words[(long long)u * nwords + (v >> 5)], 1u << (v & 31));
            atomicAdd((unsigned long long*)&seg_counts[u], 1ull);
        }
        running += tot;
    }
}

// One block: one query's filter in one launch (see dsm_block_filter).
extern "C" __global__ void filter_small(const int* __restrict__ by_label, const long long* __restrict__ qinfo, int nq,
                                        const unsigned int* __restrict__ sig, long long n,
                                        const long long* __restrict__ degrees, int check_deg, long long items,
                                        int* __restrict__ out, long long* __restrict__ seg_counts,
                                        unsigned int* __restrict__ words, long long nwords) {
    __shared__ long long sh[32];
    dsm_block_filter(by_label, qinfo, nq, sig, n, degrees, check_deg, items, out, seg_counts, words, nwords, sh);
}

// One block per query: the filters of a batch of queries in one launch.  Query b's header, at
// head[DSM_FILTER_HEAD * b]: the offset of its qinfo in head, its size nq, its items, the offset of its first item
// in out and that of its first query vertex among the batch's (its seg_counts, and its bitsets of nwords words each).
#if !defined(DSM_FILTER_HEAD)
#error "join.cu needs -D DSM_FILTER_HEAD (kernels/cuda_modules.py, JOIN_MODULE)"
#endif
extern "C" __global__ void filter_batch(const int* __restrict__ by_label, const long long* __restrict__ head,
                                        const unsigned int* __restrict__ sig, long long n,
                                        const long long* __restrict__ degrees, int check_deg, int* __restrict__ out,
                                        long long* __restrict__ seg_counts, unsigned int* __restrict__ words,
                                        long long nwords) {
    __shared__ long long sh[32];
    const long long* h = head + DSM_FILTER_HEAD * (long long)blockIdx.x;
    dsm_block_filter(by_label, head + h[0], (int)h[1], sig, n, degrees, check_deg, h[2], out + h[3], seg_counts + h[4],
                     words + h[4] * nwords, nwords, sh);
}

extern "C" __global__ void filter_flags(const int* __restrict__ by_label, const long long* __restrict__ qinfo, int nq,
                                        const unsigned int* __restrict__ sig, long long n,
                                        const long long* __restrict__ degrees, int check_deg, long long items,
                                        int* __restrict__ flags) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
        int u;
        flags[i] = dsm_filter_item(i, by_label, qinfo, nq, sig, n, degrees, check_deg, &u) >= 0 ? 1 : 0;
    }
}

// After filter_flags and an inclusive scan: scatter survivors, count them per u and set their bitset bits
// (words and seg_counts zeroed by the caller).
extern "C" __global__ void filter_scatter(const int* __restrict__ by_label, const long long* __restrict__ qinfo,
                                          int nq, long long items, const int* __restrict__ flags,
                                          const long long* __restrict__ scan, int* __restrict__ out,
                                          long long* __restrict__ seg_counts, unsigned int* __restrict__ words,
                                          long long nwords) {
    const long long* lo = qinfo;
    const long long* ioff = qinfo + nq;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
        if (!flags[i]) continue;
        int u = (int)dsm_upper_bound(ioff, nq + 1, i) - 1;
        int v = by_label[lo[u] + i - ioff[u]];
        out[scan[i] - 1] = v;
        atomicOr(&words[(long long)u * nwords + (v >> 5)], 1u << (v & 31));
        atomicAdd((unsigned long long*)&seg_counts[u], 1ull);
    }
}

// words (zeroed by the caller) |= bit of every member.
extern "C" __global__ void bitset_set(const int* __restrict__ members, long long m, unsigned int* __restrict__ words) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        int v = members[i];
        atomicOr(&words[v >> 5], 1u << (v & 31));
    }
}

// Row rows[i] of the bitset rows words (nwords words each, zeroed by the caller) |= bit of members[i]: the sets of
// several query vertices uploaded together, in one launch.
extern "C" __global__ void bitset_rows(const int* __restrict__ members, const int* __restrict__ rows, long long m,
                                       unsigned int* __restrict__ words, long long nwords) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        int v = members[i];
        atomicOr(&words[(long long)rows[i] * nwords + (v >> 5)], 1u << (v & 31));
    }
}

// ------------------------------------------------------------------------------------------------ workload
__device__ __forceinline__ void dsm_row_run(long long r, const int* table, int ncols, int first_col, int label,
                                            int L, const long long* run_keys, const unsigned long long* pcsr,
                                            long long gmask, const long long* run_start, const long long* run_end,
                                            long long* s, long long* c) {
    int v = table[r * (long long)ncols + first_col];
    long long run = dsm_find_run(v, label, L, run_keys, pcsr, gmask);
    if (run < 0) { *s = 0; *c = 0; return; }
    *s = run_start[run];
    *c = run_end[run] - *s;
}

// One block (every thread calls it): offsets (inclusive prefix sum of the rows' run sizes) and delta (run start
// minus the row's first entry) of a table's rows; returns the level's output space to every thread.  offsets and
// delta may be read back by the same block after a __syncthreads() (no __restrict__: no non-coherent loads).
__device__ __forceinline__ long long dsm_block_workload(const int* table, int ncols, long long nrows, int first_col,
                                                        int label, int L, const long long* run_keys,
                                                        const unsigned long long* pcsr, long long gmask,
                                                        const long long* run_start, const long long* run_end,
                                                        long long* offsets, long long* delta, long long* sh) {
    long long running = 0;
    for (long long base = 0; base < nrows; base += blockDim.x) {
        long long r = base + threadIdx.x;
        long long s = 0, c = 0;
        if (r < nrows) dsm_row_run(r, table, ncols, first_col, label, L, run_keys, pcsr, gmask, run_start, run_end, &s, &c);
        long long tot;
        long long excl = dsm_block_scan<long long>(c, &tot, sh);
        if (r < nrows) {
            offsets[r] = running + excl + c;
            delta[r] = s - (running + excl);
        }
        running += tot;
    }
    return running;
}

// One block: offsets and delta of the table's rows (see dsm_block_workload).
extern "C" __global__ void workload_small(const int* __restrict__ table, int ncols, long long nrows, int first_col,
                                          int label, int L, const long long* __restrict__ run_keys,
                                          const unsigned long long* __restrict__ pcsr, long long gmask,
                                          const long long* __restrict__ run_start,
                                          const long long* __restrict__ run_end, long long* __restrict__ offsets,
                                          long long* __restrict__ delta, long long* __restrict__ total) {
    // *total (may be page-locked host memory) gets the level's output size, so the host needs no extra copy.
    __shared__ long long sh[32];
    long long running = dsm_block_workload(table, ncols, nrows, first_col, label, L, run_keys, pcsr, gmask, run_start,
                                           run_end, offsets, delta, sh);
    if (threadIdx.x == 0) *total = running;
}

extern "C" __global__ void workload_counts(const int* __restrict__ table, int ncols, long long nrows, int first_col,
                                           int label, int L, const long long* __restrict__ run_keys,
                                           const unsigned long long* __restrict__ pcsr, long long gmask,
                                           const long long* __restrict__ run_start,
                                           const long long* __restrict__ run_end, long long* __restrict__ counts,
                                           long long* __restrict__ starts) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < nrows; r += stride) {
        long long s, c;
        dsm_row_run(r, table, ncols, first_col, label, L, run_keys, pcsr, gmask, run_start, run_end, &s, &c);
        counts[r] = c;
        starts[r] = s;
    }
}

// In place: starts[r] -> delta[r] = starts[r] - offsets[r-1] (offsets = inclusive scan of counts).
extern "C" __global__ void workload_delta(long long* __restrict__ starts, const long long* __restrict__ offsets,
                                          long long nrows) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < nrows; r += stride)
        starts[r] -= (r > 0) ? offsets[r - 1] : 0;
}

// ------------------------------------------------------------------------------------------------ extend
#define DSM_PROBE_ARGS const int* __restrict__ table, int ncols, const long long* __restrict__ offsets, \
    long long nrows, const long long* __restrict__ delta, const int* __restrict__ nbr,                  \
    const long long* __restrict__ indptr, const long long* __restrict__ run_start,                      \
    const long long* __restrict__ run_end, const long long* __restrict__ run_keys,                      \
    const unsigned long long* __restrict__ pcsr, long long gmask, int L,                                \
    const long long* __restrict__ pair_keys, long long n, const unsigned int* __restrict__ bits,        \
    const int* __restrict__ part, const int* __restrict__ prog
#define DSM_PROBE_CALL(p, rowp) dsm_probe((p), table, ncols, offsets, nrows, delta, nbr, indptr, run_start, run_end, \
    run_keys, pcsr, gmask, L, pair_keys, n, bits, part, prog, (rowp))
#define DSM_PROBE_CALL_P(p, rowp, progp) dsm_probe((p), table, ncols, offsets, nrows, delta, nbr, indptr, run_start, \
    run_end, run_keys, pcsr, gmask, L, pair_keys, n, bits, part, (progp), (rowp))

// One block (every thread calls it): entries [a, a+m) probed against the step program sprog (in shared memory);
// survivors written in entry order to out (ncols+1 columns) when write; returns their number to every thread.
// out holds limit rows: a write that would pass it stops at the end of that round (the result then exceeds limit).
__device__ __forceinline__ long long dsm_block_extend(long long a, long long m, bool write, long long limit, int* out,
                                                      const int* table, int ncols, const long long* offsets,
                                                      long long nrows, const long long* delta, const int* nbr,
                                                      const long long* indptr, const long long* run_start,
                                                      const long long* run_end, const long long* run_keys,
                                                      const unsigned long long* pcsr, long long gmask, int L,
                                                      const long long* pair_keys, long long n,
                                                      const unsigned int* bits, const int* part, const int* sprog,
                                                      long long* sh) {
    long long running = 0;
    int oc = ncols + 1;
    for (long long base = 0; base < m; base += blockDim.x) {
        long long i = base + threadIdx.x;
        long long row = 0;
        int cand = -1;
        if (i < m)
            cand = dsm_probe(a + i, table, ncols, offsets, nrows, delta, nbr, indptr, run_start, run_end, run_keys,
                             pcsr, gmask, L, pair_keys, n, bits, part, sprog, &row);
        long long tot;
        long long excl = dsm_block_scan<long long>(cand >= 0 ? 1 : 0, &tot, sh);
        if (cand >= 0 && write && running + excl < limit) {
            int* dst = out + (running + excl) * oc;
            const int* src = table + row * (long long)ncols;
            for (int c = 0; c < ncols; ++c) dst[c] = src[c];
            dst[ncols] = cand;
        }
        running += tot;
        if (write && running > limit) break;  // block-uniform: every thread leaves in the same round
    }
    return running;
}

// One block: entries [a, a+m) -> survivors written in entry order to out (ncols+1 columns), their number to
// *count (out unused when count_only).  The program (at most DSM_PROG_MAX words; it and *count may live in
// page-locked host memory) is copied to shared memory first.
extern "C" __global__ void extend_small(DSM_PROBE_ARGS, long long a, long long m, int count_only,
                                        int* __restrict__ out, long long* __restrict__ count) {
    __shared__ long long sh[32];
    __shared__ int sprog[DSM_PROG_MAX];
    int plen = prog[0];
    for (int k = threadIdx.x; k < plen; k += blockDim.x) sprog[k] = prog[k];
    __syncthreads();
    long long running = dsm_block_extend(a, m, !count_only, m, out, table, ncols, offsets, nrows, delta, nbr, indptr,
                                         run_start, run_end, run_keys, pcsr, gmask, L, pair_keys, n, bits, part,
                                         sprog, sh);
    if (threadIdx.x == 0) *count = running;
}

// ------------------------------------------------------------------------------------------------ fused descent
// One block runs levels level0 .. nq-1 of a join whose tables stay small: per level the workload (row runs and
// their prefix sum into offsets/delta) and then the extension with in-order compaction, ping-ponging between
// two scratch tables.  One launch and one host round trip for the whole descent, where the level-by-level path
// takes two per level.  A level stops the descent, with offsets/delta holding its workload and its table intact
// (so the host may resume it without computing it again), when its output space exceeds cap entries, when the
// entries read by the descent would then exceed allow, or when its survivors outgrow the scratch tables.
//
// desc (int32): per level l in [1, nq), at 4 * (l - 1): first_col, first_label, offset in desc of the level's
// step program, index of its candidate bitset in bits_list (device addresses).  res (int64; may be
// page-locked host memory): [0] the level reached (nq: finished), [1] rows of the table at that level (finished:
// the matches), [2] stopped: that level's output space, [3] where that table lives (0: table0, 1: buf0,
// 2: buf1); then per level l at 4 + 2l: its output space and its survivors.  Tables at level l have l columns.

#define DSM_NO_LIMIT 0x7fffffffffffffffll

// A descent's scratch: two tables of rows x (query size) int32, one level's workload of rows int64 each.
struct DsmScratch {
    int* buf0;
    int* buf1;
    long long* offsets;
    long long* delta;
    long long rows;
};

// One block (every thread calls it, with shared sprog[DSM_PROG_MAX] and sh[32]): the descent described above.
__device__ __forceinline__ void dsm_block_descend(const int* table0, long long nrows0, int level0, int nq,
                                                  const int* desc, const unsigned long long* bits_list,
                                                  int count_only, long long cap, long long allow, DsmScratch s,
                                                  const int* nbr, const long long* indptr,
                                                  const long long* run_start, const long long* run_end,
                                                  const long long* run_keys, const unsigned long long* pcsr,
                                                  long long gmask, int L, const long long* pair_keys, long long n,
                                                  const int* part, long long* res, int* sprog, long long* sh) {
    // offsets, delta and the scratch tables are written and read by this block: no __restrict__ (no
    // non-coherent loads); __syncthreads() orders the writes before other threads' reads.
    const int* cur = table0;
    int where = 0;
    long long nrows = nrows0, read = 0;
    for (int level = level0; level < nq; ++level) {
        const int* d = desc + 4 * (level - 1);
        int ncols = level;
        long long m = dsm_block_workload(cur, ncols, nrows, d[0], d[1], L, run_keys, pcsr, gmask, run_start, run_end,
                                         s.offsets, s.delta, sh);
        long long running = 0;
        bool write = !(count_only && level == nq - 1);
        int* nxt = (where == 1) ? s.buf1 : s.buf0;
        bool fits = m <= cap && read + m <= allow;
        if (fits) {
            const int* prog = desc + d[2];
            int plen = prog[0];
            for (int k = threadIdx.x; k < plen; k += blockDim.x) sprog[k] = prog[k];
            __syncthreads();
            const unsigned int* bits = (const unsigned int*)bits_list[d[3]];
            running = dsm_block_extend(0, m, write, s.rows, nxt, cur, ncols, s.offsets, nrows, s.delta, nbr, indptr,
                                       run_start, run_end, run_keys, pcsr, gmask, L, pair_keys, n, bits, part, sprog,
                                       sh);
            fits = !(write && running > s.rows);
        }
        if (!fits) {
            if (threadIdx.x == 0) {
                res[0] = level;
                res[1] = nrows;
                res[2] = m;
                res[3] = where;
            }
            return;
        }
        if (threadIdx.x == 0) {
            res[4 + 2 * level] = m;
            res[5 + 2 * level] = running;
        }
        __syncthreads();  // the new table is complete before it is read, sprog is free for the next program
        read += m;
        where = (where == 1) ? 2 : 1;
        if (level == nq - 1 || running == 0) {
            if (threadIdx.x == 0) {
                res[0] = nq;
                res[1] = running;
                res[2] = 0;
                res[3] = write ? where : 0;
            }
            return;
        }
        cur = nxt;
        nrows = running;
    }
}

// One block: the descent of one table (scratch tables of cap rows, so only cap stops it).
extern "C" __global__ void descend_small(const int* __restrict__ table0, long long nrows0, int level0, int nq,
                                         const int* __restrict__ desc,
                                         const unsigned long long* __restrict__ bits_list, int count_only,
                                         long long cap, int* buf0, int* buf1, long long* offsets,
                                         long long* delta, const int* __restrict__ nbr,
                                         const long long* __restrict__ indptr,
                                         const long long* __restrict__ run_start,
                                         const long long* __restrict__ run_end,
                                         const long long* __restrict__ run_keys,
                                         const unsigned long long* __restrict__ pcsr, long long gmask, int L,
                                         const long long* __restrict__ pair_keys, long long n,
                                         const int* __restrict__ part, long long* res) {
    __shared__ long long sh[32];
    __shared__ int sprog[DSM_PROG_MAX];
    DsmScratch s = {buf0, buf1, offsets, delta, cap};
    dsm_block_descend(table0, nrows0, level0, nq, desc, bits_list, count_only, cap, DSM_NO_LIMIT, s, nbr, indptr,
                      run_start, run_end, run_keys, pcsr, gmask, L, pair_keys, n, part, res, sprog, sh);
}

// Many blocks: the counts of a batch of queries, each a descent from level 1 by one block.  A block takes the
// next query from the counter head[0] (zero at launch) until none is left, so any grid size covers the batch; block
// b uses the scratch tables bufs[2 * b * table_words ..] (table_words = rows x the batch's largest query) and the
// workload work[2 * b * rows ..].  Query q's header, at head[1 + DSM_BATCH_HEAD * q]: the address of its start
// table (its candidates of the first query vertex, one column), their number, the query size, the offset of its
// level table and programs (desc, as in descend_small) in the int32 words from head + progs_at, the offset in head
// of its bitset addresses, the offset in res of its result (descend_small's layout) and the entries its descent may
// read (allow): DSM_BATCH_HEAD words, a size shared with Python.
#if !defined(DSM_BATCH_HEAD)
#error "join.cu needs -D DSM_BATCH_HEAD (kernels/cuda_modules.py, JOIN_MODULE)"
#endif
extern "C" __global__ void descend_batch(long long* head, long long nqueries, long long progs_at, long long rows,
                                         long long table_words, int* bufs, long long* work,
                                         const int* __restrict__ nbr, const long long* __restrict__ indptr,
                                         const long long* __restrict__ run_start,
                                         const long long* __restrict__ run_end,
                                         const long long* __restrict__ run_keys,
                                         const unsigned long long* __restrict__ pcsr, long long gmask, int L,
                                         const long long* __restrict__ pair_keys, long long n, long long* res) {
    __shared__ long long sh[32];
    __shared__ int sprog[DSM_PROG_MAX];
    __shared__ long long next;
    int* mine = bufs + 2 * (long long)blockIdx.x * table_words;
    long long* wk = work + 2 * (long long)blockIdx.x * rows;
    DsmScratch s = {mine, mine + table_words, wk, wk + rows, rows};
    const int* progs = (const int*)(head + progs_at);
    for (;;) {
        if (threadIdx.x == 0) next = (long long)atomicAdd((unsigned long long*)head, 1ull);
        __syncthreads();
        long long q = next;
        __syncthreads();  // every thread has read next before thread 0 takes the following query
        if (q >= nqueries) return;
        const long long* h = head + 1 + DSM_BATCH_HEAD * q;
        // Plans without spanning filters: the partition is never read (part = nullptr).
        dsm_block_descend((const int*)h[0], h[1], 1, (int)h[2], progs + h[3], (const unsigned long long*)(head + h[4]),
                          1, DSM_NO_LIMIT, h[6], s, nbr, indptr, run_start, run_end, run_keys, pcsr, gmask, L,
                          pair_keys, n, nullptr, res + h[5], sprog, sh);
    }
}

// Many blocks: flags[i] = entry a+i survives; cand_out[i] = its candidate (or -1).
extern "C" __global__ void extend_flags(DSM_PROBE_ARGS, long long a, long long m, int* __restrict__ cand_out,
                                        int* __restrict__ flags) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        long long row;
        int cand = DSM_PROBE_CALL(a + i, &row);
        cand_out[i] = cand;
        flags[i] = cand >= 0 ? 1 : 0;
    }
}

// Many blocks: survivors to their slot (inclusive scan of flags) of the new table.
extern "C" __global__ void extend_write(const int* __restrict__ table, int ncols, const long long* __restrict__ offsets,
                                        long long nrows, long long a, long long m,
                                        const int* __restrict__ cand_out, const long long* __restrict__ scan,
                                        int* __restrict__ out) {
    long long stride = (long long)gridDim.x * blockDim.x;
    int oc = ncols + 1;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        int cand = cand_out[i];
        if (cand < 0) continue;
        long long row = dsm_upper_bound(offsets, nrows, a + i);
        int* dst = out + (scan[i] - 1) * oc;
        const int* src = table + row * (long long)ncols;
        for (int c = 0; c < ncols; ++c) dst[c] = src[c];
        dst[ncols] = cand;
    }
}

// Many blocks: *counter += survivors of entries [a, a+m) (the last level of a count never materialises rows).
extern "C" __global__ void extend_count(DSM_PROBE_ARGS, long long a, long long m,
                                        unsigned long long* __restrict__ counter) {
    long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long local = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        long long row;
        if (DSM_PROBE_CALL(a + i, &row) >= 0) ++local;
    }
    dsm_add_count(counter, local);
}

// ------------------------------------------------------------------------------------------------ tiered extend
// Row-parallel alternative to the entry-parallel kernels (GSI/SGSI load balance).  The host sorts the rows of a
// chunk into tiers by workload and passes work items (row, first entry, end entry, ordinal): one launch gives
// each item a warp (group = 32, small rows), another a whole block (group = blockDim.x, medium rows, and pieces
// of huge rows split over many blocks).  A group reads its row into shared memory and finds the runs of the
// step's membership checks once per row, where the entry-parallel kernels search the row in offsets and find
// every run again for every entry.  The host falls back to entry-parallel kernels for steps over DSM_TIER_COLS
// columns or DSM_TIER_CHECKS checks.
//
// mode 0 adds survivors to *counter.  mode 1 compacts through a per-group write cache (GSI): each round of
// `group` entries ranks its survivors (warp ballot, or a block scan) and appends them to a shared-memory cache,
// which is flushed `group` candidates at a time, one coalesced store, to the front of the item's own range of
// cand_out (entry - a); item_out[3 * ordinal] gets (survivors, row, first entry).  A scan over the items' counts
// (ordinals follow entry order) then places every item's survivors in the new table (extend_write_items), so
// only survivors are written and moved, and the scan runs over items, not entries.
// Groups of a block are warps at most (extend_tiered runs with DSM_BLOCK threads); the write cache holds 2 x 32
// candidates per warp group or 2 x DSM_BLOCK per block group.
#define DSM_TIER_GROUPS (DSM_BLOCK / 32)
#define DSM_TIER_CACHE (2 * DSM_BLOCK)

__device__ __forceinline__ void dsm_group_sync(int group) {
    if (group == 32) __syncwarp(); else __syncthreads();
}

extern "C" __global__ void extend_tiered(DSM_PROBE_ARGS, const long long* __restrict__ items, long long count,
                                         int group, long long a, int mode, unsigned long long* __restrict__ counter,
                                         int* __restrict__ cand_out, long long* __restrict__ item_out) {
    __shared__ int sM[DSM_TIER_GROUPS][DSM_TIER_COLS];
    __shared__ long long sRuns[DSM_TIER_GROUPS][2 * DSM_TIER_CHECKS];
    __shared__ int sCache[DSM_TIER_CACHE];
    __shared__ long long sh[32];
    int per_block = blockDim.x / group;
    int g = threadIdx.x / group, lane = threadIdx.x % group;
    int* cache = sCache + g * 2 * group;
    int k = 1;
    k += 1 + prog[k];  // greater-than columns
    k += 1 + prog[k];  // less-than columns
    k += 1 + prog[k];  // distinct columns
    int nchk = prog[k];
    const int* chk = prog + k + 1;
    unsigned long long local = 0;
    for (long long it = (long long)blockIdx.x * per_block + g; it < count; it += (long long)gridDim.x * per_block) {
        long long row = items[4 * it], p0 = items[4 * it + 1], p1 = items[4 * it + 2];
        const int* M = table + row * (long long)ncols;
        for (int c = lane; c < ncols; c += group) sM[g][c] = M[c];
        for (int i = lane; i < nchk; i += group) {
            long long r = dsm_find_run(M[chk[2 * i]], chk[2 * i + 1], L, run_keys, pcsr, gmask);
            sRuns[g][2 * i] = r < 0 ? 0 : run_start[r];
            sRuns[g][2 * i + 1] = r < 0 ? 0 : run_end[r];
        }
        dsm_group_sync(group);
        long long d = delta[row];
        int* dst = cand_out + (p0 - a);
        long long written = 0;  // (uniform over the group) survivors stored so far, and waiting in the cache
        int cached = 0;
        for (long long base = p0; base < p1; base += group) {  // rounds: every lane of the group takes part
            long long p = base + lane;
            int cand = -1;
            if (p < p1)
                cand = dsm_check(nbr[p + d], sM[g], ncols, nbr, indptr, run_start, run_end, run_keys, pcsr, gmask,
                                 L, pair_keys, n, bits, part, prog, sRuns[g]);
            if (mode == 0) {
                local += cand >= 0 ? 1 : 0;
                continue;
            }
            int rank, tot;
            if (group == 32) {
                unsigned int ballot = __ballot_sync(DSM_FULL_MASK, cand >= 0);
                rank = __popc(ballot & ((1u << lane) - 1u));
                tot = __popc(ballot);
            } else {
                long long t;
                rank = (int)dsm_block_scan<long long>(cand >= 0 ? 1 : 0, &t, sh);
                tot = (int)t;
            }
            if (cand >= 0) cache[cached + rank] = cand;
            cached += tot;
            dsm_group_sync(group);
            if (cached >= group) {  // a full line: one coalesced store, then the overflow moves to the front
                dst[written + lane] = cache[lane];
                dsm_group_sync(group);
                if (lane < cached - group) cache[lane] = cache[group + lane];
                written += group;
                cached -= group;
                dsm_group_sync(group);
            }
        }
        if (mode != 0) {
            if (lane < cached) dst[written + lane] = cache[lane];
            if (lane == 0) {
                long long ord = items[4 * it + 3];
                item_out[3 * ord] = written + cached;
                item_out[3 * ord + 1] = row;
                item_out[3 * ord + 2] = p0;
            }
        }
        dsm_group_sync(group);  // the row's shared copy and the cache are reused by the next item
    }
    if (mode != 0) return;
    dsm_add_count(counter, local);
}

// Many blocks: output row o of the new table from the item holding it (scan: inclusive scan of the items'
// survivor counts in item_out, see extend_tiered).
extern "C" __global__ void extend_write_items(const int* __restrict__ table, int ncols,
                                              const long long* __restrict__ item_out,
                                              const long long* __restrict__ scan, long long n_items, long long a,
                                              const int* __restrict__ cand_out, long long total,
                                              int* __restrict__ out) {
    long long stride = (long long)gridDim.x * blockDim.x;
    int oc = ncols + 1;
    for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += stride) {
        long long it = dsm_upper_bound(scan, n_items, o);
        long long before = scan[it] - item_out[3 * it];
        const int* src = table + item_out[3 * it + 1] * (long long)ncols;
        int* dst = out + o * oc;
        for (int c = 0; c < ncols; ++c) dst[c] = src[c];
        dst[ncols] = cand_out[item_out[3 * it + 2] - a + (o - before)];
    }
}

// Self-test of zero-copy access (page-locked host memory used directly by a kernel): dst[0] = sum of src[0..3).
extern "C" __global__ void staging_echo(const int* src, long long* dst) {
    if (threadIdx.x == 0 && blockIdx.x == 0) dst[0] = (long long)src[0] + src[1] + src[2];
}

// ------------------------------------------------------------------------------------------------ array reductions
// Counting primitives the engine runs on arrays of every size (kernels/cupy/array_ops.py).  CuPy's own bincount,
// count_nonzero, any and all go through CUB block reductions that NVRTC compiles once per array-size class, so a
// warm-up on small graphs left them to the first large graph; these compile once, with this module.

// out[0] += number of nonzero bytes of mask[0..n).
extern "C" __global__ void count_true(const unsigned char* __restrict__ mask, long long n,
                                      unsigned long long* __restrict__ out) {
    unsigned long long mine = 0;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) mine += mask[i] != 0;
    for (int o = 16; o > 0; o >>= 1) mine += __shfl_down_sync(DSM_FULL_MASK, mine, o);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(out, mine);
}

// out[x[i]] += 1 for every i with 0 <= x[i] < size (others are not counted: callers pass values in range).
template <typename K>
__device__ __forceinline__ void dsm_histogram(const K* x, long long n, long long size, unsigned long long* out) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        long long v = (long long)x[i];
        if (v >= 0 && v < size) atomicAdd(&out[v], 1ull);
    }
}

// out[x[i]] += w[i] for every i with 0 <= x[i] < size.
template <typename K>
__device__ __forceinline__ void dsm_weighted_histogram(const K* x, const double* w, long long n, long long size,
                                                       double* out) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        long long v = (long long)x[i];
        if (v >= 0 && v < size) atomicAdd(&out[v], w[i]);
    }
}

extern "C" __global__ void histogram_i32(const int* __restrict__ x, long long n, long long size,
                                         unsigned long long* __restrict__ out) {
    dsm_histogram(x, n, size, out);
}

extern "C" __global__ void histogram_i64(const long long* __restrict__ x, long long n, long long size,
                                         unsigned long long* __restrict__ out) {
    dsm_histogram(x, n, size, out);
}

extern "C" __global__ void weighted_histogram_i32(const int* __restrict__ x, const double* __restrict__ w,
                                                  long long n, long long size, double* __restrict__ out) {
    dsm_weighted_histogram(x, w, n, size, out);
}

extern "C" __global__ void weighted_histogram_i64(const long long* __restrict__ x, const double* __restrict__ w,
                                                  long long n, long long size, double* __restrict__ out) {
    dsm_weighted_histogram(x, w, n, size, out);
}
