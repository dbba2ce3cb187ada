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
__device__ __forceinline__ i64 scan_value(const T* x, i64 i, i64 n, int mode, i64 value) {
    if (i >= n) return 0;
    return mode == SUM ? (i64)x[i] : (i64)selected(x, i, mode, value);
}

// The exclusive prefix of v over the block; *total gets the block's sum.  Every thread of the block calls it.
__device__ __forceinline__ i64 block_exclusive(i64 v, i64* total) {
    __shared__ i64 warp_sums[WARPS];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    i64 s = v;
    for (int o = 1; o < 32; o <<= 1) {
        i64 y = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o) s += y;
    }
    if (lane == 31) warp_sums[w] = s;
    __syncthreads();
    if (w == 0) {
        i64 t = lane < WARPS ? warp_sums[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            i64 y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o) t += y;
        }
        if (lane < WARPS) warp_sums[lane] = t;
    }
    __syncthreads();
    i64 before = (w ? warp_sums[w - 1] : 0) + s - v;
    *total = warp_sums[WARPS - 1];
    __syncthreads();  // the next call rewrites warp_sums
    return before;
}

// Pass 1 of an inclusive scan: block b sums tile b (TILE entries read in coalesced rounds).
template <typename T>
__device__ void scan_sums(const T* x, i64 n, int mode, i64 value, i64* sums) {
    i64 base = (i64)blockIdx.x * TILE, acc = 0, total;
    for (int k = 0; k < DSM_AR_ITEMS; k++) acc += scan_value(x, base + (i64)k * DSM_AR_BLOCK + threadIdx.x, n, mode, value);
    block_exclusive(acc, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// Pass 2: block b scans tile b in rounds, starting from the inclusive scan of the tiles before it (carry).
template <typename T>
__device__ void scan_apply(const T* x, i64 n, int mode, i64 value, const i64* carry, i64* out) {
    i64 base = (i64)blockIdx.x * TILE, total;
    i64 running = blockIdx.x ? carry[blockIdx.x - 1] : 0;
    for (int k = 0; k < DSM_AR_ITEMS; k++) {
        i64 i = base + (i64)k * DSM_AR_BLOCK + threadIdx.x;
        i64 v = scan_value(x, i, n, mode, value);
        i64 before = block_exclusive(v, &total);
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
extern "C" __global__ void ar_scan_apply_i64(const i64* x, i64 n, int mode, i64 value, const i64* carry, i64* out) {
    scan_apply(x, n, mode, value, carry, out);
}
extern "C" __global__ void ar_scan_apply_i32(const int* x, i64 n, int mode, i64 value, const i64* carry, i64* out) {
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
extern "C" __global__ void ar_take_i64_i64(const i64* a, const i64* idx, i64 stride, i64 n, i64* out) {
    take(a, idx, stride, n, out);
}

// The run [offsets[p], offsets[p + 1]) of each position p: its start and length.
template <typename I>
__device__ void spans(const i64* offsets, const I* pos, i64 n, i64* start, i64* length) {
    GRID_STRIDE(i, n) {
        i64 s = offsets[pos[i]];
        start[i] = s;
        length[i] = offsets[pos[i] + 1] - s;
    }
}
extern "C" __global__ void ar_spans_i32(const i64* offsets, const int* pos, i64 n, i64* start, i64* length) {
    spans(offsets, pos, n, start, length);
}
extern "C" __global__ void ar_spans_i64(const i64* offsets, const i64* pos, i64 n, i64* start, i64* length) {
    spans(offsets, pos, n, start, length);
}

// out = a * scale + b: composite keys such as (run, label) or (row, vertex).
extern "C" __global__ void ar_scaled_add(const i64* a, i64 scale, const int* b, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = a[i] * scale + (i64)b[i];
}

extern "C" __global__ void ar_subtract_i64(const i64* a, const i64* b, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = a[i] - b[i];
}

// *out = how many entries of the sorted a are at most value (one thread: a chunk boundary between launches).
extern "C" __global__ void ar_search_right(const i64* a, i64 n, i64 value, i64* out) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (a[mid] <= value) lo = mid + 1; else hi = mid;
    }
    *out = lo;
}

extern "C" __global__ void ar_i64_to_i32(const i64* x, i64 n, int* out) {
    GRID_STRIDE(i, n) out[i] = (int)x[i];
}
extern "C" __global__ void ar_i32_to_i64(const int* x, i64 n, i64* out) {
    GRID_STRIDE(i, n) out[i] = (i64)x[i];
}
extern "C" __global__ void ar_fill_u64(u64* out, i64 n, u64 value) {
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
