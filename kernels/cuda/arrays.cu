// Array primitives the engine runs between its join kernels (kernels/cupy/array_ops.py launches them): prefix sums,
// the positions of non-zero entries, expanding per-row counts into entries, gathers, run bounds and casts.  CuPy's
// own versions of these (cumsum, flatnonzero, searchsorted, fancy indexing, arithmetic, astype) are compiled by
// NVRTC on first use, one kernel per dtype combination; these come compiled in this module's fatbin.
#if !defined(DSM_AR_BLOCK) || !defined(DSM_AR_ITEMS)
#error "compile with the -D options of kernels/cuda_modules.py (ARRAYS_MODULE)"
#endif
#if DSM_AR_BLOCK > 1024 || DSM_AR_BLOCK % 32 != 0
#error "a scan block is whole warps, at most 32 of them"
#endif

typedef long long i64;
typedef unsigned long long u64;

#define WARPS (DSM_AR_BLOCK / 32)
#define TILE ((i64)DSM_AR_BLOCK * DSM_AR_ITEMS)

// What a scan adds up per entry: the value (mode 0), or 1 where it is selected: non-zero (1), equal to value (2).
#define SUM 0
#define NONZERO 1
#define EQUAL 2

template <typename T>
__device__ __forceinline__ bool selected(const T* x, i64 i, int mode, i64 value) {
    return mode == NONZERO ? x[i] != 0 : (i64)x[i] == value;
}

template <typename T>
__device__ __forceinline__ T scan_value(const T* x, i64 i, i64 n, int mode, i64 value) {
    if (i >= n) return 0;
    return mode == SUM ? x[i] : (T)selected(x, i, mode, value);
}

// The exclusive prefix of v over the block; *total gets the block's sum.  Every thread of the block calls it.
template <typename A>
__device__ __forceinline__ A block_exclusive(A v, A* total) {
    __shared__ A warp_sums[WARPS];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    A s = v;
    for (int o = 1; o < 32; o <<= 1) {
        A y = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o) s += y;
    }
    if (lane == 31) warp_sums[w] = s;
    __syncthreads();
    if (w == 0) {
        A t = lane < WARPS ? warp_sums[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            A y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o) t += y;
        }
        if (lane < WARPS) warp_sums[lane] = t;
    }
    __syncthreads();
    A before = (w ? warp_sums[w - 1] : 0) + s - v;
    *total = warp_sums[WARPS - 1];
    __syncthreads();  // the next call rewrites warp_sums
    return before;
}

// Pass 1 of an inclusive scan: block b sums tile b (TILE entries read in coalesced rounds) in A.
template <typename T, typename A>
__device__ void scan_sums(const T* x, i64 n, int mode, i64 value, A* sums) {
    i64 base = (i64)blockIdx.x * TILE;
    A acc = 0, total;
    for (int k = 0; k < DSM_AR_ITEMS; k++)
        acc += (A)scan_value(x, base + (i64)k * DSM_AR_BLOCK + threadIdx.x, n, mode, value);
    block_exclusive(acc, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// Pass 2: block b scans tile b in rounds, starting from the inclusive scan of the tiles before it (carry).
template <typename T, typename A>
__device__ void scan_apply(const T* x, i64 n, int mode, i64 value, const A* carry, A* out) {
    i64 base = (i64)blockIdx.x * TILE;
    A total, running = blockIdx.x ? carry[blockIdx.x - 1] : 0;
    for (int k = 0; k < DSM_AR_ITEMS; k++) {
        i64 i = base + (i64)k * DSM_AR_BLOCK + threadIdx.x;
        A v = (A)scan_value(x, i, n, mode, value);
        A before = block_exclusive(v, &total);
        if (i < n) out[i] = running + before + v;
        running += total;
    }
}

extern "C" __global__ void ar_scan_sums_i64(const i64* x, i64 n, int mode, i64 value, i64* sums) {
    scan_sums(x, n, mode, value, sums);
}
extern "C" __global__ void ar_scan_sums_i32(const int* x, i64 n, int mode, i64 value, i64* sums) {
    scan_sums(x, n, mode, value, sums);
}
extern "C" __global__ void ar_scan_sums_f64(const double* x, i64 n, int mode, i64 value, double* sums) {
    scan_sums(x, n, mode, value, sums);
}
extern "C" __global__ void ar_scan_apply_i64(const i64* x, i64 n, int mode, i64 value, const i64* carry, i64* out) {
    scan_apply(x, n, mode, value, carry, out);
}
extern "C" __global__ void ar_scan_apply_i32(const int* x, i64 n, int mode, i64 value, const i64* carry, i64* out) {
    scan_apply(x, n, mode, value, carry, out);
}
extern "C" __global__ void ar_scan_apply_f64(const double* x, i64 n, int mode, i64 value, const double* carry,
                                             double* out) {
    scan_apply(x, n, mode, value, carry, out);
}

#define GRID_STRIDE(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

// out[incl[i] - 1] = i for each selected x[i] (mode and value as the scan's), incl the scan of the selection.
template <typename T>
__device__ void scatter_selected(const T* x, i64 n, int mode, i64 value, const i64* incl, i64* out) {
    GRID_STRIDE(i, n) {
        if (selected(x, i, mode, value)) out[incl[i] - 1] = i;
    }
}
extern "C" __global__ void ar_scatter_selected_i64(const i64* x, i64 n, int mode, i64 value, const i64* incl, i64* out) {
    scatter_selected(x, n, mode, value, incl, out);
}
extern "C" __global__ void ar_scatter_selected_i32(const int* x, i64 n, int mode, i64 value, const i64* incl, i64* out) {
    scatter_selected(x, n, mode, value, incl, out);
}

// Entry i of counts laid end to end (incl: their inclusive scan over rows rows): its row, and its rank in it.
extern "C" __global__ void ar_expand(const i64* incl, i64 rows, i64 total, i64* row, i64* rank) {
    GRID_STRIDE(i, total) {
        i64 lo = 0, hi = rows;  // the first row whose inclusive sum exceeds i
        while (lo < hi) {
            i64 mid = (lo + hi) >> 1;
            if (incl[mid] <= i) lo = mid + 1; else hi = mid;
        }
        row[i] = lo;
        rank[i] = i - (lo ? incl[lo - 1] : 0);
    }
}

// out[i] = a[idx[i * stride]]: a stride steps down a column of a row-major table.
// The runs values[start[r] : start[r] + counts[r]] laid end to end: entry i is rank[i] into the run of row[i].
extern "C" __global__ void ar_gather_runs(const int* values, const i64* start, const i64* row, const i64* rank, i64 n,
                                          int* out) {
    GRID_STRIDE(i, n) out[i] = values[start[row[i]] + rank[i]];
}

template <typename T, typename I>
__device__ void take(const T* a, const I* idx, i64 stride, i64 n, T* out) {
    GRID_STRIDE(i, n) out[i] = a[idx[i * stride]];
}
extern "C" __global__ void ar_take_i32_i32(const int* a, const int* idx, i64 stride, i64 n, int* out) {
    take(a, idx, stride, n, out);
}
extern "C" __global__ void ar_take_i32_i64(const int* a, const i64* idx, i64 stride, i64 n, int* out) {
    take(a, idx, stride, n, out);
}
extern "C" __global__ void ar_take_i64_i32(const i64* a, const int* idx, i64 stride, i64 n, i64* out) {
    take(a, idx, stride, n, out);
}
extern "C" __global__ void ar_take_f64_i64(const double* a, const i64* idx, i64 stride, i64 n, double* out) {
    take(a, idx, stride, n, out);
}
extern "C" __global__ void ar_take_i64_i64(const i64* a, const i64* idx, i64 stride, i64 n, i64* out) {
    take(a, idx, stride, n, out);
}

// The run [lo[p], hi[p]) of each position p: its start and length (offsets and offsets + 1 give a CSR's rows).
template <typename I>
__device__ void spans(const i64* lo, const i64* hi, const I* pos, i64 n, i64* start, i64* length) {
    GRID_STRIDE(i, n) {
        i64 s = lo[pos[i]];
        start[i] = s;
        length[i] = hi[pos[i]] - s;
    }
}
extern "C" __global__ void ar_spans_i32(const i64* lo, const i64* hi, const int* pos, i64 n, i64* start,
                                        i64* length) {
    spans(lo, hi, pos, n, start, length);
}
extern "C" __global__ void ar_spans_i64(const i64* lo, const i64* hi, const i64* pos, i64 n, i64* start,
                                        i64* length) {
    spans(lo, hi, pos, n, start, length);
}

// out = a * scale + b: composite keys such as (run, label) or (row, vertex).
extern "C" __global__ void ar_scaled_add(const i64* a, i64 scale, const int* b, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = a[i] * scale + (i64)b[i];
}

extern "C" __global__ void ar_subtract_i64(const i64* a, const i64* b, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = a[i] - b[i];
}

// *out = how many entries of the sorted a are at most value (one thread: a chunk boundary between launches).
template <typename T>
__device__ void search_right(const T* a, i64 n, T value, i64* out) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (a[mid] <= value) lo = mid + 1; else hi = mid;
    }
    *out = lo;
}
extern "C" __global__ void ar_search_right_i64(const i64* a, i64 n, i64 value, i64* out) {
    search_right(a, n, value, out);
}
extern "C" __global__ void ar_search_right_f64(const double* a, i64 n, double value, i64* out) {
    search_right(a, n, value, out);
}

extern "C" __global__ void ar_i64_to_i32(const i64* x, i64 n, int* out) {
    GRID_STRIDE(i, n) out[i] = (int)x[i];
}
extern "C" __global__ void ar_i32_to_i64(const int* x, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = (i64)x[i];
}
extern "C" __global__ void ar_i64_to_f64(const i64* x, i64 n, double* out) {
    GRID_STRIDE(i, n) out[i] = (double)x[i];
}
extern "C" __global__ void ar_fill_u64(u64* out, i64 n, u64 value) {
    GRID_STRIDE(i, n) out[i] = value;
}
extern "C" __global__ void ar_fill_i32(int* out, i64 n, int value) {
    GRID_STRIDE(i, n) out[i] = value;
}

// *out += the sum of a[idx[i]] (a block sums its entries, then one atomic).
extern "C" __global__ void ar_take_sum_i64_i32(const i64* a, const int* idx, i64 n, u64* out) {
    i64 acc = 0, total;
    for (i64 base = (i64)blockIdx.x * blockDim.x; base < n; base += (i64)gridDim.x * blockDim.x) {
        i64 i = base + threadIdx.x;
        if (i < n) acc += a[idx[i]];
    }
    block_exclusive(acc, &total);
    if (threadIdx.x == 0 && total) atomicAdd(out, (u64)total);
}

extern "C" __global__ void ar_iota_i64(i64 n, i64 start, i64 step, i64* out) {
    GRID_STRIDE(i, n) out[i] = start + i * step;
}
extern "C" __global__ void ar_iota_i32(i64 n, i64 start, i64 step, int* out) {
    GRID_STRIDE(i, n) out[i] = (int)(start + i * step);
}

// out[idx[i]] = i: the inverse of the permutation idx.
extern "C" __global__ void ar_scatter_iota(const i64* idx, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[idx[i]] = i;
}
extern "C" __global__ void ar_scatter_i32(const i64* idx, const int* values, i64 n, int* out) {
    GRID_STRIDE(i, n) out[idx[i]] = values[i];
}

// quot = keys / d, rem = keys % d (keys non-negative, rem below 2^31).
extern "C" __global__ void ar_divmod(const i64* keys, i64 n, i64 d, i64* quot, int* rem) {
    GRID_STRIDE(i, n) {
        i64 k = keys[i];
        quot[i] = k / d;
        rem[i] = (int)(k % d);
    }
}

// Per run r of a ranked adjacency (runs of rank v = r / R, each sorted): the first entry above v.
extern "C" __global__ void ar_run_upper(const i64* ptr, const int* nbr, i64 R, i64 nruns, i64* up) {
    GRID_STRIDE(r, nruns) {
        i64 lo = ptr[r], hi = ptr[r + 1], v = r / R;
        while (lo < hi) {
            i64 mid = (lo + hi) >> 1;
            if ((i64)nbr[mid] <= v) lo = mid + 1; else hi = mid;
        }
        up[r] = lo;
    }
}

// *out = max(*out, the largest of x), x non-negative.
extern "C" __global__ void ar_max_i64(const i64* x, i64 n, u64* out) {
    i64 m = 0;
    GRID_STRIDE(i, n) m = max(m, x[i]);
    for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0 && m) atomicMax(out, (u64)m);
}

// *out += how many of x lie in the sorted array s of m entries.
extern "C" __global__ void ar_count_members(const int* s, i64 m, const int* x, i64 n, u64* out) {
    u64 hits = 0;
    GRID_STRIDE(i, n) {
        i64 lo = 0, hi = m;
        int v = x[i];
        while (lo < hi) {
            i64 mid = (lo + hi) >> 1;
            if (s[mid] < v) lo = mid + 1; else hi = mid;
        }
        hits += lo < m && s[lo] == v;
    }
    for (int o = 16; o > 0; o >>= 1) hits += __shfl_down_sync(0xffffffffu, hits, o);
    if ((threadIdx.x & 31) == 0 && hits) atomicAdd(out, hits);
}

// out = max(x * scale + offset, floor): a run number from a rank, a degree less one, and the like.
template <typename T>
__device__ void affine(const T* x, i64 scale, i64 offset, i64 floor, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = max((i64)x[i] * scale + offset, floor);
}
extern "C" __global__ void ar_affine_i32(const int* x, i64 scale, i64 offset, i64 floor, i64 n, i64* out) {
    affine(x, scale, offset, floor, n, out);
}
extern "C" __global__ void ar_affine_i64(const i64* x, i64 scale, i64 offset, i64 floor, i64 n, i64* out) {
    affine(x, scale, offset, floor, n, out);
}

extern "C" __global__ void ar_minimum_i64(const i64* a, const i64* b, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = min(a[i], b[i]);
}

// out[j] = the first position of the sorted a (m entries) whose entry is not below values[j].
extern "C" __global__ void ar_search_left_f64(const double* a, i64 m, const double* values, i64 k, i64* out) {
    GRID_STRIDE(j, k) {
        i64 lo = 0, hi = m;
        while (lo < hi) {
            i64 mid = (lo + hi) >> 1;
            if (a[mid] < values[j]) lo = mid + 1; else hi = mid;
        }
        out[j] = lo;
    }
}

// out = c0 + c1 * x + c2 * x * x.
extern "C" __global__ void ar_poly2_f64(const double* x, double c0, double c1, double c2, i64 n, double* out) {
    GRID_STRIDE(i, n) {
        double v = x[i];
        out[i] = c0 + v * (c1 + c2 * v);
    }
}

__device__ __forceinline__ i64 lower_bound(const i64* a, i64 m, i64 value) {
    i64 lo = 0, hi = m;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (a[mid] < value) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Per i, the entries of the sorted keys in [base[i] + c0, base[i] + min(bound[i], c1)): where they start and how
// many (none where the range is empty).
extern "C" __global__ void ar_key_ranges(const i64* keys, i64 m, const i64* base, const i64* bound, i64 c0, i64 c1,
                                         i64 n, i64* lo, i64* length) {
    GRID_STRIDE(i, n) {
        i64 a = lower_bound(keys, m, base[i] + c0);
        i64 b = lower_bound(keys, m, base[i] + min(bound[i], c1));
        lo[i] = a;
        length[i] = b > a ? b - a : 0;
    }
}

// *out += the sum over groups of equal sorted keys of C(size, 2): each entry adds the equal ones before it.
extern "C" __global__ void ar_equal_pairs(const i64* keys, i64 n, u64* out) {
    u64 pairs = 0;
    GRID_STRIDE(i, n) pairs += (u64)(i - lower_bound(keys, i, keys[i]));
    for (int o = 16; o > 0; o >>= 1) pairs += __shfl_down_sync(0xffffffffu, pairs, o);
    if ((threadIdx.x & 31) == 0 && pairs) atomicAdd(out, pairs);
}

// *out += sum over rows r of s1^2 - s2 (mod 2^64), s1 and s2 the sums of w and w^2 over the run
// nbr[start[r] : start[r] + length[r]], w = weights[x] (0 where label >= 0 and vlab[x] != label).  A warp takes a
// row, its lanes the run's entries: runs of a skewed graph's hubs are long.
extern "C" __global__ void ar_walk_sums(const int* nbr, const i64* start, const i64* length, const i64* weights,
                                        const int* vlab, int label, i64 rows, u64* out) {
    int lane = threadIdx.x & 31;
    i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = ((i64)gridDim.x * blockDim.x) >> 5;
    u64 acc = 0;
    for (i64 r = warp; r < rows; r += warps) {
        u64 s1 = 0, s2 = 0;
        for (i64 j = start[r] + lane, e = start[r] + length[r]; j < e; j += 32) {
            int x = nbr[j];
            u64 w = (label < 0 || vlab[x] == label) ? (u64)weights[x] : 0;
            s1 += w;
            s2 += w * w;
        }
        for (int o = 16; o > 0; o >>= 1) {
            s1 += __shfl_down_sync(0xffffffffu, s1, o);
            s2 += __shfl_down_sync(0xffffffffu, s2, o);
        }
        if (lane == 0) acc += s1 * s1 - s2;
    }
    if (lane == 0 && acc) atomicAdd(out, acc);
}
