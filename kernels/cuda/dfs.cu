// The depth-first set-intersection search (kernels/dfs_plan.py lays out its program words; kernels/cupy/dfs.py
// launches it).  A warp takes tasks, each a data edge mapped to the first two levels, and walks the later
// levels depth first: level i's set is the intersection of sorted runs (a lane per entry of the shortest,
// a binary search into each other run, one ballot to compact), kept in the warp's own buffer for the levels
// below it; the last level is only counted, and a pair tail counts the last two levels by binary searches.
// Nothing per match is written.  Control flow is uniform across a warp; its state (images, positions, set
// sizes) sits in shared memory, written by lane 0 behind __syncwarp.
#ifndef DSM_DFS_MAX_LEVELS
#error "compile with the -D options of kernels/cuda_modules.py (DFS_MODULE)"
#endif

#define MAXK DSM_DFS_MAX_LEVELS
#define HEAD DSM_DFS_HEAD_WORDS
#define LW DSM_DFS_LEVEL_WORDS
#define WARPS (DSM_DFS_BLOCK / 32)
#define GRAB DSM_DFS_GRAB
#if GRAB > 32
#error "a warp loads its grabbed tasks a lane each"
#endif
#define FULL 0xffffffffu
#define NO_HI 0x7fffffff

typedef long long i64;
typedef unsigned long long u64;

struct Ranked {
    const int* nbr;
    const i64* ptr;
    const i64* up;   // per run, the first entry above the run's own vertex
    const int* vlab;
    int L;
};

struct WarpState {
    int v[MAXK];
    i64 pos[MAXK];
    i64 size[MAXK];
    i64 olo[MAXK];
    i64 ohi[MAXK];
};

// First position in a[lo, hi) whose entry is >= x.
__device__ __forceinline__ i64 lower_bound(const int* a, i64 lo, i64 hi, int x) {
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// lower_bound for a key the whole warp shares: each round probes 32 evenly spaced entries at once and keeps the
// stretch between the last probe below x and the first not below, so a run of n entries costs about log32(n)
// rounds of loads instead of log2(n) dependent ones.  Called by all 32 lanes with the same arguments.
__device__ __forceinline__ i64 warp_lower_bound(const int* a, i64 lo, i64 hi, int x, int lane) {
    while (hi - lo > 32) {
        const i64 step = (hi - lo + 31) >> 5;
        const i64 at = lo + lane * step;
        const int below = __popc(__ballot_sync(FULL, at < hi && a[at] < x));  // the probes below x: a prefix
        if (below == 0) return lo;
        hi = min(hi, lo + below * step);
        lo += (below - 1) * step + 1;
    }
    const i64 at = lo + lane;
    return lo + __popc(__ballot_sync(FULL, at < hi && a[at] < x));
}

// A sorted run [b0, b1) as the warp samples it: lane l holds the first entry of the run's l-th of 32 equal
// segments (the whole run, an entry a lane, when it has at most 32), so that a lane finds its key's segment by
// five shuffles and searches global memory only within it (G2Miner's two-phase binary search, with the cache in
// registers).
struct Sampled {
    const int* a;
    i64 b0, len;
    int sample;
};

__device__ __forceinline__ i64 segment_start(const Sampled& r, int l) {
    return r.b0 + (r.len <= 32 ? min((i64)l, r.len) : l * r.len / 32);
}

__device__ __forceinline__ Sampled sampled(const int* a, i64 b0, i64 b1, int lane) {
    Sampled r{a, b0, b1 - b0, 0x7fffffff};
    const i64 at = segment_start(r, lane);
    if (at < b1) r.sample = a[at];
    return r;
}

// Whether x is in the run.  Every lane calls it (for the shuffles), each with its own x; only lanes with `want`
// read global memory, and their answers are the ones that count.
__device__ __forceinline__ bool sampled_has(const Sampled& r, int x, bool want) {
    int seg = 0;  // the last segment whose first entry is <= x (0 when none is)
    for (int d = 16; d; d >>= 1)
        if (__shfl_sync(FULL, r.sample, seg + d) <= x) seg += d;
    const int first = __shfl_sync(FULL, r.sample, seg);
    if (!want || first > x) return false;
    if (first == x) return true;
    if (r.len <= 32) return false;
    const i64 lo = segment_start(r, seg) + 1, hi = seg == 31 ? r.b0 + r.len : segment_start(r, seg + 1);
    const i64 q = lower_bound(r.a, lo, hi, x);
    return q < hi && r.a[q] == x;
}

__device__ __forceinline__ u64 warp_sum(u64 c) {
    for (int d = 16; d; d >>= 1) c += __shfl_xor_sync(FULL, c, d);
    return c;
}

// The run N(v_j, e) as [lo, hi): from the first entry above v_j where the level lies above v_j (ranks rise with
// degree, so that is the short end of a hub's run, and no search is needed), cut further to the bounds (lo_b, hi_b)
// by binary search only when it is long: a short run is read whole and the bounds are tested per entry.
__device__ __forceinline__ void run_of(const Ranked& g, int v, int e, bool above, int lo_b, int hi_b, i64& lo,
                                       i64& hi, int lane) {
    const i64 r = (i64)v * g.L + e;
    lo = above ? g.up[r] : g.ptr[r];
    hi = g.ptr[r + 1];
    if (hi - lo > DSM_DFS_TRIM) {
        lo = warp_lower_bound(g.nbr, lo, hi, lo_b + 1, lane);
        if (hi_b != NO_HI) hi = warp_lower_bound(g.nbr, lo, hi, hi_b, lane);
    }
}

// C_i (see dfs_plan.py) for the images in s.v: stored at out when out != nullptr; returns |C_i| on every lane.
__device__ i64 build(const Ranked& g, const int* P, WarpState& s, const int* stored, i64 cap, int i, int* out,
                     int lane) {
    const int label = P[0], lower = P[2], upper = P[3], distinct = P[4], reuse = P[5];
    int extra = P[6];
    int lo = -1, hi = NO_HI;  // x > lo and x < hi
    for (int j = 0; j < i; ++j) {
        if (lower >> j & 1) lo = max(lo, s.v[j]);
        if (upper >> j & 1) hi = min(hi, s.v[j]);
    }
    if (lo + 1 >= hi) return 0;
    const int* A;
    i64 a0, a1;
    if (reuse >= 0) {
        A = stored + (i64)(reuse - 2) * cap;
        a0 = 0;
        a1 = s.size[reuse];
        // The stored set is sorted and its own image was taken from it at pos - 1: where that image is the lower
        // bound (every clique level), the entries above it are those after it, with no search.
        if ((lower >> reuse & 1) && lo == s.v[reuse]) a0 = s.pos[reuse];
        else if (a1 > DSM_DFS_TRIM) a0 = warp_lower_bound(A, a0, a1, lo + 1, lane);
        if (hi != NO_HI && a1 - a0 > DSM_DFS_TRIM) a1 = warp_lower_bound(A, a0, a1, hi, lane);
    } else {
        int best = -1;
        i64 bl = 0, bh = 0;
        for (int j = 0; j < i; ++j) {
            if (!(extra >> j & 1)) continue;
            i64 r = (i64)s.v[j] * g.L + P[7 + j];
            i64 rl = (lower >> j & 1) ? g.up[r] : g.ptr[r], rh = g.ptr[r + 1];
            if (best < 0 || rh - rl < bh - bl) { best = j; bl = rl; bh = rh; }
        }
        extra &= ~(1 << best);
        A = g.nbr;
        run_of(g, s.v[best], P[7 + best], lower >> best & 1, lo, hi, a0, a1, lane);
    }
    int nother = 0;
    __syncwarp();
    for (int j = 0; j < i; ++j) {
        if (!(extra >> j & 1)) continue;
        i64 rl, rh;
        run_of(g, s.v[j], P[7 + j], lower >> j & 1, lo, hi, rl, rh, lane);
        if (rl >= rh) return 0;
        if (lane == 0) { s.olo[nother] = rl; s.ohi[nother] = rh; }
        ++nother;
    }
    __syncwarp();
    const int* B = g.nbr;  // the runs searched; the one other run and a stored driver swap when it is shorter
    if (nother == 1 && A != g.nbr && s.ohi[0] - s.olo[0] < a1 - a0) {
        i64 l = s.olo[0], h = s.ohi[0];
        __syncwarp();
        if (lane == 0) { s.olo[0] = a0; s.ohi[0] = a1; }
        __syncwarp();
        B = A;
        A = g.nbr;
        a0 = l;
        a1 = h;
    }
    const Sampled first = sampled(B, nother ? s.olo[0] : 0, nother ? s.ohi[0] : 0, lane);
    i64 count = 0;
    for (i64 base = a0; base < a1; base += 32) {
        i64 at = base + lane;
        bool ok = at < a1;
        int x = ok ? A[at] : 0;
        ok = ok && x > lo && x < hi;
        if (ok && label >= 0) ok = g.vlab[x] == label;
        if (ok && distinct) {
            for (int j = 0; j < i; ++j)
                if ((distinct >> j & 1) && x == s.v[j]) ok = false;
        }
        if (nother) {
            ok = sampled_has(first, x, ok);
            for (int t = 1; ok && t < nother; ++t) {
                i64 q = lower_bound(g.nbr, s.olo[t], s.ohi[t], x);
                ok = q < s.ohi[t] && g.nbr[q] == x;
            }
        }
        unsigned m = __ballot_sync(FULL, ok);
        if (out != nullptr && ok) out[count + __popc(m & ((1u << lane) - 1))] = x;
        count += __popc(m);
    }
    __syncwarp();
    return count;
}

// The last two levels a = k - 2 and b = k - 1 (b not adjacent to a): both sets once, then per x of C_a the
// entries of C_b it admits under the relation rel (1: y > x, -1: y < x, 0: y != x).
__device__ u64 pair_tail(const Ranked& g, const int* prog, WarpState& s, int* stored, i64 cap, int a, int rel,
                         int lane) {
    int* ca = stored + (i64)(a - 2) * cap;
    int* cb = ca + cap;
    i64 sa = build(g, prog + HEAD + a * LW, s, stored, cap, a, ca, lane);
    if (sa == 0) return 0;
    if (lane == 0) s.size[a] = sa;
    __syncwarp();
    i64 sb = build(g, prog + HEAD + (a + 1) * LW, s, stored, cap, a + 1, cb, lane);
    if (sb == 0) return 0;
    __syncwarp();
    u64 c = 0;
    for (i64 q = lane; q < sa; q += 32) {
        int x = ca[q];
        if (rel > 0) c += sb - lower_bound(cb, 0, sb, x + 1);
        else if (rel < 0) c += lower_bound(cb, 0, sb, x);
        else {
            i64 p = lower_bound(cb, 0, sb, x);
            c += sb - (p < sb && cb[p] == x);
        }
    }
    return warp_sum(c);
}

// Matches below the images s.v[0], s.v[1] of one task.
__device__ u64 search(const Ranked& g, const int* prog, WarpState& s, int* stored, i64 cap, int lane) {
    const int k = prog[0], tail = prog[1], rel = prog[2];
    if (k == 2) return 1;
    if (k == 3) return build(g, prog + HEAD + 2 * LW, s, stored, cap, 2, nullptr, lane);
    if (tail && k == 4) return pair_tail(g, prog, s, stored, cap, 2, rel, lane);
    u64 found = 0;
    i64 size = build(g, prog + HEAD + 2 * LW, s, stored, cap, 2, stored, lane);
    if (lane == 0) { s.size[2] = size; s.pos[2] = 0; }
    __syncwarp();
    int lvl = 2;
    for (;;) {
        if (s.pos[lvl] >= s.size[lvl]) {
            if (lvl == 2) break;
            --lvl;
            continue;
        }
        int x = stored[(i64)(lvl - 2) * cap + s.pos[lvl]];
        __syncwarp();
        if (lane == 0) { s.pos[lvl] += 1; s.v[lvl] = x; }
        __syncwarp();
        int next = lvl + 1;
        if (next == k - 1) {
            found += build(g, prog + HEAD + next * LW, s, stored, cap, next, nullptr, lane);
        } else if (tail && next == k - 2) {
            found += pair_tail(g, prog, s, stored, cap, next, rel, lane);
        } else {
            i64 n = build(g, prog + HEAD + next * LW, s, stored, cap, next, stored + (i64)(next - 2) * cap, lane);
            if (lane == 0) { s.size[next] = n; s.pos[next] = 0; }
            __syncwarp();
            lvl = next;
        }
    }
    return found;
}

// Per level-0 vertex: where its tasks start in its first-edge run and how many there are (the run cut by the
// first two levels' symmetry-breaking bound).
extern "C" __global__ void dfs_tasks(const int* prog, const int* verts, i64 nv, const i64* ptr, const i64* up,
                                     int L, i64* start, i64* count) {
    const int e01 = prog[3];
    const int* P1 = prog + HEAD + LW;
    for (i64 r = blockIdx.x * (i64)blockDim.x + threadIdx.x; r < nv; r += (i64)gridDim.x * blockDim.x) {
        int v = verts[r];
        i64 run = (i64)v * L + e01;
        i64 lo = ptr[run], hi = ptr[run + 1];
        if (P1[2] & 1) lo = up[run];
        if (P1[3] & 1) hi = up[run];
        start[r] = lo;
        count[r] = hi > lo ? hi - lo : 0;
    }
}

// Runs a warp's share of the tasks: per_task() for each task whose images sit in s.v[0], s.v[1]; returns the sum of
// what it returned.  Lane j loads task t0 + j of a grab (its row, images and label test) so that a batch costs one
// round of loads, not one per task: lane 0 finds the first task's row, the others find theirs among the next 32
// (rows without tasks are left out of the list: kernels/cupy/dfs.py).
// A lane first offers its own task to by_lane(v0, v1, found), which returns whether it settled the task alone
// (adding to found); the warp then takes the tasks no lane settled together.
template <class ByLane, class PerTask>
__device__ u64 for_each_task(const int* prog, const Ranked& g, const int* verts, const i64* task_ptr,
                             const i64* task_start, i64 nv, i64 ntasks, i64* next, WarpState& s, int lane,
                             ByLane by_lane, PerTask per_task) {
    const int label1 = prog[HEAD + LW];
    u64 total = 0, alone = 0;
    for (;;) {
        i64 t0 = 0;
        if (lane == 0) t0 = (i64)atomicAdd((u64*)next, (u64)GRAB);
        t0 = __shfl_sync(FULL, t0, 0);
        if (t0 >= ntasks) break;
        i64 r = 0;
        if (lane == 0) {
            i64 lo = 0, hi = nv;  // the last row r with task_ptr[r] <= t0
            while (hi - lo > 1) {
                i64 mid = (lo + hi) >> 1;
                if (task_ptr[mid] <= t0) lo = mid; else hi = mid;
            }
            r = lo;
        }
        r = __shfl_sync(FULL, r, 0);
        // Every row holds a task, so rows r .. r + 31 hold the grab: lane l keeps where row r + l ends, and each
        // lane finds its task's row among them by five shuffles.
        const i64 end = r + 1 + lane <= nv ? task_ptr[r + 1 + lane] : 0x7fffffffffffffffLL;
        const i64 t = t0 + lane;
        int below = 0;  // rows of the 32 that end at or before t
        for (int d = 16; d; d >>= 1)
            if (__shfl_sync(FULL, end, below + d - 1) <= t) below += d;
        r += below;
        int v0 = 0, v1 = -1;
        if (lane < GRAB && t < ntasks) {
            v0 = verts[r];
            v1 = g.nbr[task_start[r] + (t - task_ptr[r])];
            if (label1 >= 0 && g.vlab[v1] != label1) v1 = -1;
            if (v1 >= 0 && by_lane(v0, v1, alone)) v1 = -1;
        }
        for (unsigned live = __ballot_sync(FULL, v1 >= 0); live; live &= live - 1) {
            const int j = __ffs(live) - 1;
            const int a = __shfl_sync(FULL, v0, j), b = __shfl_sync(FULL, v1, j);
            __syncwarp();
            if (lane == 0) { s.v[0] = a; s.v[1] = b; }
            __syncwarp();
            total += per_task();
        }
    }
    return total + warp_sum(alone);
}

#define DFS_COUNT_ARGS                                                                                            \
    const int *words, const int *nbr, const i64 *ptr, const i64 *up, const int *vlab, int L, const int *verts,    \
        const i64 *task_ptr, const i64 *task_start, i64 nv, i64 ntasks, int *bufs, i64 cap

extern "C" __global__ void __launch_bounds__(DSM_DFS_BLOCK, DSM_DFS_MIN_BLOCKS) dfs_count(
        DFS_COUNT_ARGS, i64* next, u64* result) {
    __shared__ int prog[HEAD + MAXK * LW];
    __shared__ WarpState states[WARPS];
    for (int t = threadIdx.x; t < HEAD + MAXK * LW; t += blockDim.x) prog[t] = words[t];
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int k = prog[0];
    WarpState& s = states[warp];
    const Ranked g{nbr, ptr, up, vlab, L};
    int* stored = bufs + (i64)(blockIdx.x * WARPS + warp) * (k > 2 ? k - 2 : 0) * cap;
    const u64 total = for_each_task(prog, g, verts, task_ptr, task_start, nv, ntasks, next, s, lane,
                                    [](int, int, u64&) { return false; },
                                    [&]() { return search(g, prog, s, stored, cap, lane); });
    if (lane == 0 && total) atomicAdd(result, total);
}

// ------------------------------------------------------------------------------------------------ cliques
// A k-clique program (kernels/dfs_plan.py's DfsProgram.clique: every level adjacent to all before it and above
// them, one run offset o, no label tests) counts, per task (v0, v1), the (k-2)-cliques of the graph its set
// C = C_2 = N+(v0) & N+(v1) induces.  Instead of intersecting runs level after level, each member i of C gets a
// bit row: bit j set where j > i and C[j] is adjacent to C[i].  A clique of C is then a chain of bit rows, and the
// levels below are ANDs and popcounts of words the warp holds, not searches of global memory (the local bitmap
// graph of Almasri et al.'s k-clique counting, per edge).  A set of at most 32 members keeps its rows in shared
// memory, one word each, and each lane counts the cliques that start at its own member; a set of at most `bmax`
// keeps them in the warp's global rows (k <= 5); a larger one takes the general search.  A triangle program may
// weigh its matches instead (`weight` not null: each triangle adds its vertices' weights).

// Pair p of the c (c - 1) / 2 pairs (i < j) of c members, numbered row by row.
__device__ __forceinline__ void pair_of(int p, int c, int& i, int& j) {
    const float b = 2.0f * c - 1.0f;
    i = (int)((b - sqrtf(b * b - 8.0f * p)) * 0.5f);
    // row i starts at pair i (2c - i - 1) / 2; the float estimate may be off by one either way
    while (i > 0 && i * (2 * c - i - 1) / 2 > p) --i;
    while ((i + 1) * (2 * c - i - 2) / 2 <= p) ++i;
    j = p - i * (2 * c - i - 1) / 2 + i + 1;
}

// Whether w < x are adjacent: the shorter of N+(w) (w's run above w) and N-(x) (x's run below x) searched.
__device__ __forceinline__ bool adjacent(const Ranked& g, int w, int x, int o) {
    const i64 rw = (i64)w * g.L + o, rx = (i64)x * g.L + o;
    const i64 a0 = g.up[rw], a1 = g.ptr[rw + 1], b0 = g.ptr[rx], b1 = g.up[rx];
    if (a1 - a0 <= b1 - b0) {
        const i64 q = lower_bound(g.nbr, a0, a1, x);
        return q < a1 && g.nbr[q] == x;
    }
    const i64 q = lower_bound(g.nbr, b0, b1, w);
    return q < b1 && g.nbr[q] == w;
}

// The edges within the one-word set m (rows: one word per member, each its later neighbours).
__device__ __forceinline__ u64 word_edges(const unsigned* rows, unsigned m) {
    u64 c = 0;
    for (unsigned t = m; t; t &= t - 1) c += __popc(m & rows[__ffs(t) - 1]);
    return c;
}

// Sets of d more members, a clique, within the one-word set m (rows: one word per member), by one thread.
__device__ u64 word_cliques(const unsigned* rows, unsigned m, int d) {
    if (d == 1) return __popc(m);
    if (d == 2) return word_edges(rows, m);
    u64 c = 0;
    unsigned cand[MAXK], todo[MAXK];  // per depth: the set chosen within, and its members not yet tried
    int depth = 0;
    cand[0] = todo[0] = m;
    while (depth >= 0) {
        if (!todo[depth]) { --depth; continue; }
        const int j = __ffs(todo[depth]) - 1;
        todo[depth] &= todo[depth] - 1;
        const unsigned below = cand[depth] & rows[j];
        const int need = d - depth - 1;  // members still to choose within `below`
        if (__popc(below) < need) continue;
        if (need == 2) {
            c += word_edges(rows, below);
        } else {
            ++depth;
            cand[depth] = todo[depth] = below;
        }
    }
    return c;
}

// The (k-2)-cliques of C[0, c), c <= 32: the rows in `srow` (the warp's 32 shared words), a pair of members a lane
// for the adjacency tests, then a member a lane for the counts.
__device__ u64 small_cliques(const Ranked& g, const int* C, int c, int k, int o, unsigned* srow, int lane) {
    srow[lane] = 0;
    __syncwarp();
    const int pairs = c * (c - 1) / 2;
    for (int p = lane; p < pairs; p += 32) {
        int i, j;
        pair_of(p, c, i, j);
        if (adjacent(g, C[i], C[j], o)) atomicOr(&srow[i], 1u << j);
    }
    __syncwarp();
    const u64 n = lane < c ? word_cliques(srow, srow[lane], k - 3) : 0;
    __syncwarp();
    return warp_sum(n);
}

// The (k-2)-cliques of C[0, c), 32 < c <= bmax, k 4 or 5: row i's words from (i + 1) / 32 on in `rows`, built by
// the warp a word at a time (the run N+(C[i]) sampled in registers), then a word of the matrix a lane.
__device__ u64 bitmap_cliques(const Ranked& g, const int* C, int c, int k, int o, unsigned* rows, int lane) {
    const int W = (c + 31) >> 5;
    for (int i = 0; i < c; ++i) {
        const i64 r = (i64)C[i] * g.L + o;
        const Sampled run = sampled(g.nbr, g.up[r], g.ptr[r + 1], lane);
        for (int wd = (i + 1) >> 5; wd < W; ++wd) {
            const int j = wd * 32 + lane;
            const bool want = j > i && j < c;
            const unsigned m = __ballot_sync(FULL, sampled_has(run, want ? C[j] : 0, want));
            if (lane == 0) rows[(i64)i * W + wd] = m;
        }
    }
    __syncwarp();
    u64 n = 0;
    for (int q = lane; q < c * W; q += 32) {
        const int i = q / W, wd = q % W;
        if (wd < (i + 1) >> 5) continue;
        const unsigned* ri = rows + (i64)i * W;
        if (k == 4) {
            n += __popc(ri[wd]);
            continue;
        }
        for (unsigned t = ri[wd]; t; t &= t - 1) {
            const int j = wd * 32 + __ffs(t) - 1;
            const unsigned* rj = rows + (i64)j * W;
            for (int x = (j + 1) >> 5; x < W; ++x) n += __popc(ri[x] & rj[x]);
        }
    }
    __syncwarp();
    return warp_sum(n);
}

// A task one lane settles: none of a larger clique's where a run is too short to hold the k - 2 other members,
// and a triangle's where the shorter run has at most DSM_DFS_LANE_RUN entries (each searched in the other run),
// each triangle adding one or, with `weight`, its vertices' weights.
__device__ __forceinline__ bool lane_clique(const Ranked& g, int v0, int v1, int k, int o, const i64* weight,
                                            u64& found) {
    const i64 ra = (i64)v0 * g.L + o, rb = (i64)v1 * g.L + o;
    const i64 a0 = g.up[ra], a1 = g.ptr[ra + 1], b0 = g.up[rb], b1 = g.ptr[rb + 1];
    const i64 shorter = min(a1 - a0, b1 - b0);
    if (k > 3) return shorter < k - 2;
    if (shorter > DSM_DFS_LANE_RUN) return false;
    // N+(v0) holds v1 and the members below it; those miss N+(v1), which lies above v1
    const bool a_short = a1 - a0 <= b1 - b0;
    const i64 s0 = a_short ? a0 : b0, s1 = a_short ? a1 : b1, l0 = a_short ? b0 : a0, l1 = a_short ? b1 : a1;
    const u64 pair = weight == nullptr ? 0 : weight[v0] + weight[v1];
    for (i64 at = s0; at < s1; ++at) {
        const int x = g.nbr[at];
        if (x <= v1) continue;
        const i64 q = lower_bound(g.nbr, l0, l1, x);
        if (q < l1 && g.nbr[q] == x) found += weight == nullptr ? 1 : pair + weight[x];
    }
    return true;
}

// The weights of the triangles of one task: its set C_2 stored, each member's weight added to the pair's.
__device__ u64 weighed_triangles(const Ranked& g, const int* prog, WarpState& s, int* stored, i64 cap,
                                 const i64* weight, int lane) {
    const i64 c = build(g, prog + HEAD + 2 * LW, s, stored, cap, 2, stored, lane);
    u64 sum = 0;
    for (i64 q = lane; q < c; q += 32) sum += weight[stored[q]];
    return warp_sum(sum) + (u64)c * (weight[s.v[0]] + weight[s.v[1]]);
}

extern "C" __global__ void __launch_bounds__(DSM_DFS_BLOCK, DSM_DFS_MIN_BLOCKS) clique_count(
        DFS_COUNT_ARGS, unsigned* rows, int bmax, const i64* weight, i64* next, u64* result) {
    __shared__ int prog[HEAD + MAXK * LW];
    __shared__ WarpState states[WARPS];
    __shared__ unsigned srows[WARPS][32];
    for (int t = threadIdx.x; t < HEAD + MAXK * LW; t += blockDim.x) prog[t] = words[t];
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int k = prog[0], o = prog[3];
    WarpState& s = states[warp];
    const Ranked g{nbr, ptr, up, vlab, L};
    const i64 wid = (i64)blockIdx.x * WARPS + warp;
    int* stored = bufs + wid * (k > 2 ? k - 2 : 0) * cap;
    unsigned* mine = rows + wid * (i64)bmax * ((bmax + 31) >> 5);
    const auto by_lane = [&](int v0, int v1, u64& found) { return lane_clique(g, v0, v1, k, o, weight, found); };
    const u64 total = for_each_task(prog, g, verts, task_ptr, task_start, nv, ntasks, next, s, lane, by_lane,
                                    [&]() -> u64 {
        if (k == 3 && weight == nullptr) return build(g, prog + HEAD + 2 * LW, s, stored, cap, 2, nullptr, lane);
        if (k == 3) return weighed_triangles(g, prog, s, stored, cap, weight, lane);
        const i64 c = build(g, prog + HEAD + 2 * LW, s, stored, cap, 2, stored, lane);
        if (c < k - 2) return 0;
        if (c <= 32) return small_cliques(g, stored, (int)c, k, o, srows[warp], lane);
        if (c <= bmax && k <= 5) return bitmap_cliques(g, stored, (int)c, k, o, mine, lane);
        return search(g, prog, s, stored, cap, lane);
    });
    if (lane == 0 && total) atomicAdd(result, total);
}
