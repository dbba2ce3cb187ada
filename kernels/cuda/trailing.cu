// distsm's fused trailing count and core extension (loaded by kernels/cupy/launch.py through cupy.RawModule:
// from the fatbin the build compiled, or compiled by NVRTC).
//
// For every row of a table of core matches (int32, row-major, columns in core order) it computes what
// kernels/trailing.py's TrailingCounter computes with arrays: each trailing vertex j's set S_j (its first link's
// candidate-edge run, kept where every other link's run holds the entry, minus the core images in its distinct
// columns), the sizes of the intersections the inclusion-exclusion terms of each label group need, and the row's
// completions: the product over groups of sum_P coef(P) prod_{B in P} |intersection of B|.  Nothing is written
// per row: each block sums its rows and writes one total, one bound and one entry count (see trailing_count).
//
// Intersections of a group (members m_0 < ... < m_{k-1}, k <= DSM_TR_MAX_GROUP) come from one walk of each
// member's set: an element x of S_{m_i} is probed in the later members' sets only, and h[mask] counts the x of
// S_{m_i} whose membership among m_i..m_{k-1} is mask (lowest bit i).  |intersection of block B| is then the sum
// of h[F] over the F that contain B and have B's lowest bit: a superset sum that adds bits above the lowest only.
// Runs are sorted, so a probe is a binary search of one run.
//
// trailing_count_bits counts the same from bit rows where they are cheaper than the runs (kernels/cupy/trailing.py
// decides): a label group's members share one space, the sorted union U of their candidates, and each link's arc
// has a bit row over U per candidate of its source (tr_bit_rows builds them from the runs).  A member's raw set is
// the AND of its links' rows; |intersection of block B| is the popcount of the AND of B's members' words, summed
// over the ceil(|U| / 64) words, less the images of distinct columns that lie in every member of B and are distinct
// from one of them.  A row reads (links of the group) x words 8-byte words instead of walking and probing runs.
//
// Program (int32, copied to shared memory):
//   [length, T, G, offset of trailing entry 0..T-1, offset of group entry 0..G-1, entries...]
//   trailing entry: [first link id, nlinks, (col, arc)*nlinks, ndist, distinct cols*ndist]
//   group entry:    [k, k!, members*k, nterms, (coef, nblocks, block masks*nblocks)*nterms]
// The core join's extension (ce_extend_*) reads a program of one trailing entry and no group.
// Arcs (int64, 4 words each, copied to shared memory): addresses of the arc's offsets (int64) and values (int32),
// the address of its source's position map (int32[n]; size word -1) or sorted int32 candidates (size word their
// number), and that size word.  Homomorphisms are programs with one group per trailing vertex and no distinct
// columns.

// Constants shared with Python are defined there once (kernels/cuda_modules.py, TRAILING_MODULE).
#if !defined(DSM_TR_BLOCK) || !defined(DSM_TR_MAX_LINKS) || !defined(DSM_TR_MAX_GROUP) || !defined(DSM_TR_PROG_MAX)
#error "trailing.cu needs -D definitions of its shared constants (kernels/cupy/launch.py, TRAILING_DEFINES)"
#endif
#if DSM_TR_BLOCK % 32 != 0 || DSM_TR_BLOCK > 1024
#error "DSM_TR_BLOCK must be a multiple of 32 and at most 1024"
#endif
#if DSM_TR_MAX_GROUP > 5
#error "DSM_TR_MAX_GROUP above 5 needs a larger mask histogram"
#endif

#define DSM_TR_FULL_MASK 0xffffffffu

// Position of candidate v of an arc's source in its candidates: a map read or a binary search.
__device__ __forceinline__ long long tr_position(const long long* arc, int v) {
    const int* lookup = reinterpret_cast<const int*>(arc[2]);
    long long size = arc[3];
    if (size < 0) return lookup[v];
    long long lo = 0, hi = size;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (lookup[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Is x in the sorted slice values[lo, hi)?
__device__ __forceinline__ bool tr_contains(const int* values, long long lo, long long hi, int x) {
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        int y = values[mid];
        if (y == x) return true;
        if (y < x) lo = mid + 1; else hi = mid;
    }
    return false;
}

// A core match read in place: a table row, or (trailing_count over pairs) a row and the image x of one more column
// `last`, so that no thread copies a match into local memory.
struct tr_extended_row {
    const int* row;
    int last, x;
    __device__ __forceinline__ int operator[](int c) const { return c == last ? x : row[c]; }
};

// A block's copy of the program and the arc table in shared memory.
__device__ __forceinline__ void tr_stage(const int* prog, const long long* arcs, int narcs, int* sprog,
                                         long long* sarcs) {
    for (int i = threadIdx.x; i < prog[0]; i += blockDim.x) sprog[i] = prog[i];
    for (int i = threadIdx.x; i < 4 * narcs; i += blockDim.x) sarcs[i] = arcs[i];
    __syncthreads();
}

// Is x, an entry of a run of trailing vertex t's link `skip` (-1: of none), in S_t?  Every other link's run must
// hold it, and it must differ from the images in t's distinct columns.
template <typename Row>
__device__ __forceinline__ bool tr_in_set(const int* prog, const long long* arcs, int t, int skip, int x,
                                          const Row& row, const long long* lo, const long long* hi) {
    const int* e = prog + prog[3 + t];
    int first = e[0], nlinks = e[1];
    for (int l = 0; l < nlinks; ++l) {
        if (l == skip) continue;
        const int* values = reinterpret_cast<const int*>(arcs[4 * e[3 + 2 * l] + 1]);
        if (!tr_contains(values, lo[first + l], hi[first + l], x)) return false;
    }
    const int* dist = e + 2 + 2 * nlinks;
    for (int d = 0; d < dist[0]; ++d)
        if (row[dist[1 + d]] == x) return false;
    return true;
}

// A label group's inclusion-exclusion sum from h[B] = |intersection of block B| (B a mask over the group entry
// ge's members); bound gets multiplied by the group's k! * prod_j |S_j|.
__device__ __forceinline__ long long tr_group_value(const int* ge, const int* h, double& bound) {
    const int k = ge[0];
    const int* term = ge + 2 + k;
    const int nterms = *term++;
    long long acc = 0;
    for (int s = 0; s < nterms; ++s) {
        long long prod = term[0];
        for (int b = 0; b < term[1]; ++b) prod *= h[term[2 + b]];
        acc += prod;
        term += 2 + term[1];
    }
    double group_bound = (double)ge[1];
    for (int i = 0; i < k; ++i) group_bound *= (double)h[1 << i];
    bound *= group_bound;
    return acc;
}

// The completions of one core match `row` (its trailing links' run bounds go to lo/hi): the product over label
// groups of the inclusion-exclusion sums; `bound` gets the row's bound (prod over groups of k! * prod_j |S_j|)
// and `entries` the first-link run entries walked.
template <typename Row>
__device__ __forceinline__ long long tr_row(const int* sprog, const long long* sarcs, const Row& row,
                                            long long* lo, long long* hi, double& bound, long long& entries) {
    const int T = sprog[1], G = sprog[2];
    int h[1 << DSM_TR_MAX_GROUP];
    for (int t = 0; t < T; ++t) {
        const int* e = sprog + sprog[3 + t];
        for (int l = 0; l < e[1]; ++l) {
            const long long* arc = sarcs + 4 * e[3 + 2 * l];
            const long long* offsets = reinterpret_cast<const long long*>(arc[0]);
            long long p = tr_position(arc, row[e[2 + 2 * l]]);
            lo[e[0] + l] = offsets[p];
            hi[e[0] + l] = offsets[p + 1];
        }
    }
    long long value = 1;
    bound = 1.0;
    for (int g = 0; g < G && value; ++g) {
        const int* ge = sprog + sprog[3 + T + g];
        const int k = ge[0], full = 1 << k;
        const int* members = ge + 2;
        for (int f = 0; f < full; ++f) h[f] = 0;
        for (int i = 0; i < k; ++i) {
            const int t = members[i];
            const int* e = sprog + sprog[3 + t];
            const int first = e[0];
            const int* values = reinterpret_cast<const int*>(sarcs[4 * e[3] + 1]);
            int found = 0;
            entries += hi[first] - lo[first];
            for (long long p = lo[first]; p < hi[first]; ++p) {
                int x = values[p];
                if (!tr_in_set(sprog, sarcs, t, 0, x, row, lo, hi)) continue;
                int mask = 1 << i;
                for (int m = i + 1; m < k; ++m)
                    if (tr_in_set(sprog, sarcs, members[m], -1, x, row, lo, hi)) mask |= 1 << m;
                ++h[mask];
                ++found;
            }
            if (!found) { value = 0; break; }
        }
        if (!value) { bound = 0.0; break; }
        // Superset sums over the bits above each mask's lowest: h[B] becomes |intersection of block B|.
        for (int b = 1; b < k; ++b)
            for (int f = 1; f < full; ++f)
                if (!(f >> b & 1) && (f & ((1 << b) - 1))) h[f] += h[f | 1 << b];
        value *= tr_group_value(ge, h, bound);
    }
    return value;
}

// A block's sums (every thread's total, bound and entries) written by its thread 0.
__device__ __forceinline__ void tr_block_sums(long long total, double bound, long long entries,
                                              long long* block_total, double* block_bound,
                                              long long* block_entries) {
    __shared__ long long red_total[DSM_TR_BLOCK / 32], red_entries[DSM_TR_BLOCK / 32];
    __shared__ double red_bound[DSM_TR_BLOCK / 32];
    for (int d = 16; d > 0; d >>= 1) {
        total += __shfl_down_sync(DSM_TR_FULL_MASK, total, d);
        entries += __shfl_down_sync(DSM_TR_FULL_MASK, entries, d);
        bound += __shfl_down_sync(DSM_TR_FULL_MASK, bound, d);
    }
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        red_total[warp] = total;
        red_entries[warp] = entries;
        red_bound[warp] = bound;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
            total += red_total[w];
            entries += red_entries[w];
            bound += red_bound[w];
        }
        block_total[blockIdx.x] = total;
        block_bound[blockIdx.x] = bound;
        block_entries[blockIdx.x] = entries;
    }
}

// The bit-row sizes of one label group (entry ge) of core match `row`: h[B] = |intersection of block B| for every
// non-empty mask B over its members.  bits holds per trailing vertex its space (the address of U's sorted int32
// vertices, |U| and the words per row) and then per arc slot the address of its bit rows (uint64, a row of the
// space's words per candidate of the arc's source); rp keeps each link's row of this match, by link id.
template <typename Row>
__device__ __forceinline__ void tr_group_bits(const int* sprog, const long long* sarcs, const long long* sbits,
                                              const int* ge, const Row& row, int* h, long long& words) {
    const int T = sprog[1], k = ge[0], full = 1 << k;
    const int* members = ge + 2;
    const long long* space = sbits + 3 * members[0];
    const int W = (int)space[2];
    const unsigned long long* rp[DSM_TR_MAX_LINKS];
    int links = 0;
    for (int i = 0; i < k; ++i) {
        const int* e = sprog + sprog[3 + members[i]];
        for (int l = 0; l < e[1]; ++l) {
            const int slot = e[3 + 2 * l];
            const long long p = tr_position(sarcs + 4 * slot, row[e[2 + 2 * l]]);
            rp[e[0] + l] = reinterpret_cast<const unsigned long long*>(sbits[3 * T + slot]) + p * W;
        }
        links += e[1];
    }
    words += (long long)W * links;
    for (int f = 0; f < full; ++f) h[f] = 0;
    if (k == 1) {  // most groups: no subset table
        const int* e = sprog + sprog[3 + members[0]];
        for (int w = 0; w < W; ++w) {
            unsigned long long x = ~0ull;
            for (int l = 0; l < e[1]; ++l) x &= rp[e[0] + l][w];
            h[1] += __popcll(x);
        }
    } else {
        for (int w = 0; w < W; ++w) {
            unsigned long long r[DSM_TR_MAX_GROUP], a[1 << DSM_TR_MAX_GROUP];
            for (int i = 0; i < k; ++i) {
                const int* e = sprog + sprog[3 + members[i]];
                unsigned long long x = ~0ull;
                for (int l = 0; l < e[1]; ++l) x &= rp[e[0] + l][w];
                r[i] = x;
            }
            a[0] = ~0ull;
            for (int f = 1; f < full; ++f) {
                a[f] = a[f & (f - 1)] & r[__ffs(f) - 1];
                h[f] += __popcll(a[f]);
            }
        }
    }
    // The images of distinct columns: x = row[col] leaves the intersection of block B when every member of B holds
    // it raw and col is a distinct column of one of them (sets of one group share their label, so the core's
    // same-label images are the only ones that can lie in them).  A column listed by several members counts once.
    const int* U = reinterpret_cast<const int*>(space[0]);
    const long long usize = space[1];
    for (int i = 0; i < k; ++i) {
        const int* e = sprog + sprog[3 + members[i]];
        const int* dist = e + 2 + 2 * e[1];
        for (int d = 1; d <= dist[0]; ++d) {
            const int col = dist[d];
            int listed = 0;
            for (int j = 0; j < k; ++j) {
                const int* ej = sprog + sprog[3 + members[j]];
                const int* dj = ej + 2 + 2 * ej[1];
                for (int c = 1; c <= dj[0]; ++c)
                    if (dj[c] == col) listed |= 1 << j;
            }
            if (listed & ((1 << i) - 1)) continue;
            const int x = row[col];
            long long lo = 0, hi = usize;
            while (lo < hi) {
                long long mid = (lo + hi) >> 1;
                if (U[mid] < x) lo = mid + 1; else hi = mid;
            }
            if (lo == usize || U[lo] != x) continue;
            int held = 0;
            for (int j = 0; j < k; ++j) {
                const int* ej = sprog + sprog[3 + members[j]];
                bool all = true;
                for (int l = 0; l < ej[1] && all; ++l) all = rp[ej[0] + l][lo >> 6] >> (lo & 63) & 1ull;
                if (all) held |= 1 << j;
            }
            for (int f = 1; f < full; ++f)
                if (!(f & ~held) && (f & listed)) --h[f];
        }
    }
}

// The completions of one core match by bit rows (see tr_group_bits), as tr_row gives them.
template <typename Row>
__device__ __forceinline__ long long tr_row_bits(const int* sprog, const long long* sarcs, const long long* sbits,
                                                 const Row& row, double& bound, long long& words) {
    const int T = sprog[1], G = sprog[2];
    int h[1 << DSM_TR_MAX_GROUP];
    long long value = 1;
    bound = 1.0;
    for (int g = 0; g < G; ++g) {
        const int* ge = sprog + sprog[3 + T + g];
        tr_group_bits(sprog, sarcs, sbits, ge, row, h, words);
        for (int i = 0; i < ge[0]; ++i)
            if (!h[1 << i]) { bound = 0.0; return 0; }
        value *= tr_group_value(ge, h, bound);
    }
    return value;
}

// How a pass counts one core match: by walking and probing runs (tr_row), or by bit rows (tr_row_bits).
struct tr_by_runs {
    const int* sprog;
    const long long* sarcs;
    template <typename Row>
    __device__ __forceinline__ long long operator()(const Row& row, double& bound, long long& work) const {
        long long lo[DSM_TR_MAX_LINKS], hi[DSM_TR_MAX_LINKS];
        return tr_row(sprog, sarcs, row, lo, hi, bound, work);
    }
};

struct tr_by_bits {
    const int* sprog;
    const long long* sarcs;
    const long long* sbits;
    template <typename Row>
    __device__ __forceinline__ long long operator()(const Row& row, double& bound, long long& work) const {
        return tr_row_bits(sprog, sarcs, sbits, row, bound, work);
    }
};

// Per block b (the rows [b * rows_per_block, min((b + 1) * rows_per_block, nrows)) of the core matches):
//   block_total[b] the sum of the rows' completions in int64 (exact when block_bound[b] < 2^62: every product and
//                  partial sum is bounded by a row's bound, prod over groups of k! * prod_j |S_j|),
//   block_bound[b] the sum of the rows' bounds (double),
//   block_work[b]  trailing_count: the run entries walked (the first links' runs of every trailing vertex of every
//                  row, up to a row's first empty set); trailing_count_bits: the 8-byte bit-row words read.
// The core matches are table's rows, or where parents is not null the pairs of the core's last level as
// ce_extend_pairs gives them: match r is row parents[r] of table followed by xs[r] in column ncols (read in place,
// 8 bytes per match written instead of the whole row).
template <typename Count>
__device__ __forceinline__ void tr_count_rows(const int* table, int ncols, const int* parents, const int* xs,
                                              long long nrows, long long rows_per_block, const Count& count,
                                              long long* block_total, double* block_bound, long long* block_work) {
    long long total = 0, work = 0;
    double bound = 0.0;
    long long r0 = (long long)blockIdx.x * rows_per_block;
    long long r1 = min(r0 + rows_per_block, nrows);
    for (long long r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
        double row_bound;
        if (parents) {
            tr_extended_row match{table + (long long)parents[r] * ncols, ncols, xs[r]};
            total += count(match, row_bound, work);
        } else {
            total += count(table + r * ncols, row_bound, work);
        }
        bound += row_bound;
    }
    tr_block_sums(total, bound, work, block_total, block_bound, block_work);
}

extern "C" __global__ void __launch_bounds__(DSM_TR_BLOCK)
trailing_count(const int* __restrict__ table, int ncols, const int* __restrict__ parents, const int* __restrict__ xs,
               long long nrows, long long rows_per_block, const int* __restrict__ prog,
               const long long* __restrict__ arcs, int narcs, long long* __restrict__ block_total,
               double* __restrict__ block_bound, long long* __restrict__ block_work) {
    __shared__ int sprog[DSM_TR_PROG_MAX];
    __shared__ long long sarcs[4 * DSM_TR_MAX_LINKS];
    tr_stage(prog, arcs, narcs, sprog, sarcs);
    tr_count_rows(table, ncols, parents, xs, nrows, rows_per_block, tr_by_runs{sprog, sarcs}, block_total,
                  block_bound, block_work);
}

// trailing_count by bit rows: bits as tr_group_bits reads it (3 words per trailing vertex, then one per arc slot).
extern "C" __global__ void __launch_bounds__(DSM_TR_BLOCK)
trailing_count_bits(const int* __restrict__ table, int ncols, const int* __restrict__ parents,
                    const int* __restrict__ xs, long long nrows, long long rows_per_block,
                    const int* __restrict__ prog, const long long* __restrict__ arcs, int narcs,
                    const long long* __restrict__ bits, long long* __restrict__ block_total,
                    double* __restrict__ block_bound, long long* __restrict__ block_work) {
    __shared__ int sprog[DSM_TR_PROG_MAX];
    __shared__ long long sarcs[4 * DSM_TR_MAX_LINKS];
    __shared__ long long sbits[4 * DSM_TR_MAX_LINKS];
    for (int i = threadIdx.x; i < 3 * prog[1] + narcs; i += blockDim.x) sbits[i] = bits[i];
    tr_stage(prog, arcs, narcs, sprog, sarcs);
    tr_count_rows(table, ncols, parents, xs, nrows, rows_per_block, tr_by_bits{sprog, sarcs, sbits}, block_total,
                  block_bound, block_work);
}

// The bit rows of every arc of a program, in one launch: arc a (of narcs) takes blocks [a * per_arc, (a + 1) *
// per_arc) and its descriptor desc[7a..7a+6] = [offsets (int64), values (int32), sources, space (sorted int32), its
// size, words per row, out (uint64)].  Row p of out holds bit i where the run of the source's p-th candidate holds
// space[i].  Runs are sorted and lie inside the space, so a thread writes its row's words in order, each once, from
// one pass over its run.
extern "C" __global__ void __launch_bounds__(DSM_TR_BLOCK)
tr_bit_rows(const long long* __restrict__ desc, int narcs, int per_arc) {
    const int a = blockIdx.x / per_arc;
    if (a >= narcs) return;
    const long long* d = desc + 7 * a;
    const long long* offsets = reinterpret_cast<const long long*>(d[0]);
    const int* values = reinterpret_cast<const int*>(d[1]);
    const long long nsrc = d[2], size = d[4];
    const int* space = reinterpret_cast<const int*>(d[3]);
    const int words = (int)d[5];
    unsigned long long* out = reinterpret_cast<unsigned long long*>(d[6]);
    const long long stride = (long long)per_arc * blockDim.x;
    for (long long p = (long long)(blockIdx.x % per_arc) * blockDim.x + threadIdx.x; p < nsrc; p += stride) {
        unsigned long long* row = out + p * words;
        unsigned long long word = 0;
        long long at = 0;
        int w = 0;
        for (long long q = offsets[p]; q < offsets[p + 1]; ++q) {
            const int x = values[q];
            long long hi = size;
            while (at < hi) {
                long long mid = (at + hi) >> 1;
                if (space[mid] < x) at = mid + 1; else hi = mid;
            }
            if (at == size) break;
            if (space[at] != x) continue;
            for (; w < (int)(at >> 6); ++w, word = 0) row[w] = word;
            word |= 1ull << (at & 63);
        }
        for (; w < words; ++w, word = 0) row[w] = word;
    }
}

// The core join's extension of a table by one query vertex (kernels/ce_join.py's extension_set and the
// concatenation walk_core does after it, in passes instead of a dozen array operations): the program holds one
// trailing entry (T = 1, G = 0), the extension, and each row's extensions are the entries of its first link's run
// that tr_in_set keeps, in run order (sorted, as extension_set gives them).
//   ce_extend_count: counts[r] = the number of extensions of row r;
//   ce_extend_pairs: parents[k] = r and xs[k] = x for the k-th extension (from starts[r] on, starts the exclusive
//                    prefix sum of counts): what trailing_count reads in place, or ce_gather_rows lays out;
//   ce_gather_rows:  the extended rows of ncols + 1 columns (the parent row, then x), an output word per thread
//                    so that a warp writes 128 contiguous bytes (a thread writing its own rows' words wrote one
//                    4-byte word per 32-byte sector).
__device__ __forceinline__ void ce_runs(const int* sprog, const long long* sarcs, const int* row, long long* lo,
                                        long long* hi) {
    const int* e = sprog + sprog[3];
    for (int l = 0; l < e[1]; ++l) {
        const long long* arc = sarcs + 4 * e[3 + 2 * l];
        const long long* offsets = reinterpret_cast<const long long*>(arc[0]);
        long long p = tr_position(arc, row[e[2 + 2 * l]]);
        lo[l] = offsets[p];
        hi[l] = offsets[p + 1];
    }
}

// The two passes walk the same rows and runs and differ only in what they do with a kept extension: a Sink
// starts at row r, takes each kept x, and finishes the row.
struct CountExtensions {
    long long* counts;
    long long n;
    __device__ void begin(long long) { n = 0; }
    __device__ void keep(long long, int) { ++n; }
    __device__ void end(long long r) { counts[r] = n; }
};

struct WriteExtensions {
    const long long* starts;
    int* parents;
    int* xs;
    long long k;
    __device__ void begin(long long r) { k = starts[r]; }
    __device__ void keep(long long r, int x) {
        parents[k] = (int)r;
        xs[k] = x;
        ++k;
    }
    __device__ void end(long long) {}
};

template <typename Sink>
__device__ __forceinline__ void ce_extensions(const int* __restrict__ table, int ncols, long long nrows,
                                              const int* __restrict__ prog, const long long* __restrict__ arcs,
                                              int narcs, Sink sink) {
    __shared__ int sprog[DSM_TR_PROG_MAX];
    __shared__ long long sarcs[4 * DSM_TR_MAX_LINKS];
    tr_stage(prog, arcs, narcs, sprog, sarcs);
    const int* values = reinterpret_cast<const int*>(sarcs[4 * sprog[sprog[3] + 3] + 1]);
    long long lo[DSM_TR_MAX_LINKS], hi[DSM_TR_MAX_LINKS];
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < nrows; r += stride) {
        const int* row = table + r * ncols;
        ce_runs(sprog, sarcs, row, lo, hi);
        sink.begin(r);
        for (long long p = lo[0]; p < hi[0]; ++p) {
            int x = values[p];
            if (tr_in_set(sprog, sarcs, 0, 0, x, row, lo, hi)) sink.keep(r, x);
        }
        sink.end(r);
    }
}

extern "C" __global__ void __launch_bounds__(DSM_TR_BLOCK)
ce_extend_count(const int* __restrict__ table, int ncols, long long nrows, const int* __restrict__ prog,
                const long long* __restrict__ arcs, int narcs, long long* __restrict__ counts) {
    ce_extensions(table, ncols, nrows, prog, arcs, narcs, CountExtensions{counts, 0});
}

extern "C" __global__ void __launch_bounds__(DSM_TR_BLOCK)
ce_extend_pairs(const int* __restrict__ table, int ncols, long long nrows, const int* __restrict__ prog,
                const long long* __restrict__ arcs, int narcs, const long long* __restrict__ starts,
                int* __restrict__ parents, int* __restrict__ xs) {
    ce_extensions(table, ncols, nrows, prog, arcs, narcs, WriteExtensions{starts, parents, xs, 0});
}

extern "C" __global__ void __launch_bounds__(DSM_TR_BLOCK)
ce_gather_rows(const int* __restrict__ table, int ncols, const int* __restrict__ parents, const int* __restrict__ xs,
               long long nrows, int* __restrict__ out) {
    const long long width = ncols + 1, words = nrows * width;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        long long r = i / width;
        int c = (int)(i - r * width);
        out[i] = c < ncols ? table[(long long)parents[r] * ncols + c] : xs[r];
    }
}
