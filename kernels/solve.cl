// Iterative solvers' vector steps (the solve family: ConjugateGradient). Every array is contiguous and has n
// elements of T (real or complex); the solver's scalars live on the device in `scal` (R values, below) so that an
// iteration never waits for the host. Reductions leave one partial per work-group in `partials`; a one-group
// kernel sums them in a fixed order (so results do not depend on timing).
//
// Build options besides common.cl's: GROUP, the work-group size (a power of two).

#define RR 0     // the residual's squared norm |r|²
#define ALPHA 1  // the step along p
#define BETA 2   // the weight of the old direction
#define RR0 3    // |r₀|², for the relative residual
#define BB 4     // |b|², for the stopping test
#define DONE 5   // 1 once |r|² ≤ tol² |b|² (later iterations change nothing)
#define COUNT 6  // iterations run (the one that met the tolerance included)

#if IS_COMPLEX
#define RE_DOT(a, b) ((a).x * (b).x + (a).y * (b).y)
#else
#define RE_DOT(a, b) ((a) * (b))
#endif

// This work-group's sum of `value` over its work-items, stored at partials[group] (work-item 0 writes); `sums` is
// GROUP values of local memory, declared by the kernel (OpenCL allows local arrays only at a kernel's top).
inline void group_sum_to(R value, global R* partials, local R* sums) {
    const uint l = get_local_id(0);
    sums[l] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = GROUP / 2; s > 0; s /= 2) {
        if (l < s) sums[l] += sums[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partials[get_group_id(0)] = sums[0];
}

// The sum of `count` partials by one work-group, in a fixed order; every work-item gets it.
inline R sum_partials(global const R* partials, uint count, local R* sums) {
    const uint l = get_local_id(0);
    R acc = 0;
    for (uint g = l; g < count; g += GROUP) acc += partials[g];
    sums[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = GROUP / 2; s > 0; s /= 2) {
        if (l < s) sums[l] += sums[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return sums[0];
}

// Start: x = 0, r = p = b, partials of |b|².
kernel void cg_start(global const T* b, global T* x, global T* r, global T* p, global R* partials, IDX n) {
    local R sums[GROUP];
    R acc = 0;
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        T v = b[i];
        x[i] = ZERO;
        r[i] = v;
        p[i] = v;
        acc += RE_DOT(v, v);
    }
    group_sum_to(acc, partials, sums);
}

// A warm start from x: r = p = b − q (q = (M + λI) x, computed before), partials of |r|² and, after them, of |b|².
kernel void cg_start_warm(global const T* b, global const T* q, global T* r, global T* p, global R* partials,
                          IDX n) {
    local R sums[GROUP];
    R acc = 0, bb = 0;
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        const T bv = b[i];
        const T v = bv - q[i];
        r[i] = v;
        p[i] = v;
        acc += RE_DOT(v, v);
        bb += RE_DOT(bv, bv);
    }
    group_sum_to(acc, partials, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    group_sum_to(bb, partials + get_num_groups(0), sums);
}

// After cg_start (b_at = 0: r₀ = b) or cg_start_warm (b_at = count: |b|²'s partials follow |r₀|²'s): |r₀|² into
// RR and RR0, |b|² into BB, history[0] = |r₀|²; done at once when the tolerance is already met (a zero right-hand
// side).
kernel void cg_start_scalars(global const R* partials, uint count, uint b_at, global R* scal, global R* history) {
    local R sums[GROUP];
    R rr = sum_partials(partials, count, sums);
    barrier(CLK_LOCAL_MEM_FENCE);
    R bb = sum_partials(partials + b_at, count, sums);
    if (get_local_id(0) == 0) {
        scal[RR] = rr;
        scal[RR0] = rr;
        scal[BB] = bb;
        // As BART's conjgrad: the tolerance is tested after each step, never before the first one (a warm start
        // already within it still takes a step); only a residual of exactly 0 stops at once.
        scal[DONE] = (rr == 0) ? 1 : 0;
        scal[COUNT] = 0;
        history[0] = rr;
    }
}

// q = (the operator's output) + lambda · p, and partials of Re⟨p, q⟩.
kernel void cg_regularise(global const T* p, global T* q, R lambda, global R* partials, IDX n) {
    local R sums[GROUP];
    R acc = 0;
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        T pv = p[i];
        T qv = q[i] + lambda * pv;
        q[i] = qv;
        acc += RE_DOT(pv, qv);
    }
    group_sum_to(acc, partials, sums);
}

// alpha = |r|² / Re⟨p, q⟩ (0 once done or once Re⟨p, q⟩ is 0, so that a solved system stays solved).
kernel void cg_alpha(global const R* partials, uint count, global R* scal) {
    local R sums[GROUP];
    R pq = sum_partials(partials, count, sums);
    if (get_local_id(0) == 0) scal[ALPHA] = (pq > 0 && scal[DONE] == 0) ? scal[RR] / pq : 0;
}

// x += alpha p, r -= alpha q, partials of the new |r|².
kernel void cg_step(global T* x, global T* r, global const T* p, global const T* q, global const R* scal,
                    global R* partials, IDX n) {
    const R alpha = scal[ALPHA];
    local R sums[GROUP];
    R acc = 0;
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        x[i] += alpha * p[i];
        T rv = r[i] - alpha * q[i];
        r[i] = rv;
        acc += RE_DOT(rv, rv);
    }
    group_sum_to(acc, partials, sums);
}

// beta = |r_new|² / |r|²; |r|² = |r_new|², recorded as history[iteration]; the iteration counted, and done once
// |r|² ≤ tol² |b|². Once done nothing changes.
kernel void cg_beta(global const R* partials, uint count, global R* scal, global R* history, uint iteration, R tol2) {
    local R sums[GROUP];
    R rr = sum_partials(partials, count, sums);
    if (get_local_id(0) == 0) {
        if (scal[DONE] == 0) {
            scal[BETA] = (scal[RR] > 0) ? rr / scal[RR] : 0;
            scal[RR] = rr;
            scal[COUNT] += 1;
            if (rr <= tol2 * scal[BB]) scal[DONE] = 1;
        }
        history[iteration] = scal[RR];
    }
}

// p = r + beta p.
kernel void cg_direction(global const T* r, global T* p, global const R* scal, IDX n) {
    const R beta = scal[BETA];
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = r[i] + beta * p[i];
}

// FISTA's start: x = z_prev = 0.
kernel void fista_start(global T* x, global T* z_prev, IDX n) {
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        x[i] = ZERO;
        z_prev[i] = ZERO;
    }
}

// FISTA's momentum: x = z + c · (z − z_prev), then z_prev = z.
kernel void fista_momentum(global const T* z, global T* z_prev, global T* x, R c, IDX n) {
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        const T zv = z[i];
        x[i] = zv + c * (zv - z_prev[i]);
        z_prev[i] = zv;
    }
}

// The gradient step of ½|A x − y|²: x = x + τ (b − AᴴA x), with b = Aᴴ y and nx = AᴴA x.
kernel void fista_gradient(global T* x, global const T* b, global const T* nx, R tau, IDX n) {
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) x[i] += tau * (b[i] - nx[i]);
}

// ---- Total variation for ADMM (TvAdmm): an image of up to three axes n0 × n1 × n2 (row-major, unused axes 1)
// and its gradient G x, three components per position stored [3, P] (a component along an axis of extent 1 is
// 0). G is BART's: the periodic backward difference (G x)_d[r] = x[r] − x[r − e_d]; its adjoint is
// (Gᴴ g)[r] = Σ_d g_d[r] − g_d[r + e_d]. `frames` images are stored one after the other, each its own gradient (none
// across frames): position g is frame g / cells at g % cells, its neighbours in the same frame.

// The neighbour of position (i0, i1, i2) one step along axis d (step +1 or −1), periodic.
inline IDX tv_neighbour(IDX i0, IDX i1, IDX i2, IDX n0, IDX n1, IDX n2, int d, int step) {
    if (d == 0) i0 = (i0 + n0 + step) % n0;
    if (d == 1) i1 = (i1 + n1 + step) % n1;
    if (d == 2) i2 = (i2 + n2 + step) % n2;
    return (i0 * n1 + i1) * n2 + i2;
}

// ADMM's start: x = 0 and the gradient's z = u = 0 (three components per position).
kernel void tv_start(global T* x, global T* z, global T* u, IDX count) {
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        x[g] = ZERO;
        for (int d = 0; d < 3; d++) {
            z[d * count + g] = ZERO;
            u[d * count + g] = ZERO;
        }
    }
}

// out = b + rho · Gᴴ(z − u).
kernel void tv_rhs(global const T* b, global const T* z, global const T* u, global T* out, R rho, IDX n0, IDX n1,
                   IDX n2, IDX frames) {
    const IDX cells = n0 * n1 * n2, count = cells * frames;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const IDX h = g % cells, frame = g - h;
        const IDX i2 = h % n2, i1 = (h / n2) % n1, i0 = h / (n1 * n2);
        T acc = ZERO;
        for (int d = 0; d < 3; d++) {
            const IDX next = frame + tv_neighbour(i0, i1, i2, n0, n1, n2, d, 1);
            acc += (z[d * count + g] - u[d * count + g]) - (z[d * count + next] - u[d * count + next]);
        }
        out[g] = b[g] + rho * acc;
    }
}

// out += rho · GᴴG x = rho · Σ_d (2 x[r] − x[r − e_d] − x[r + e_d]) (0 along axes of extent 1).
kernel void tv_gram_add(global const T* x, global T* out, R rho, IDX n0, IDX n1, IDX n2, IDX frames) {
    const IDX cells = n0 * n1 * n2, count = cells * frames;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const IDX h = g % cells;
        global const T* xf = x + (g - h);
        const IDX i2 = h % n2, i1 = (h / n2) % n1, i0 = h / (n1 * n2);
        const T v = x[g];
        T acc = ZERO;
        for (int d = 0; d < 3; d++) {
            acc += (v - xf[tv_neighbour(i0, i1, i2, n0, n1, n2, d, -1)]) + (v - xf[tv_neighbour(i0, i1, i2, n0, n1, n2, d, 1)]);
        }
        out[g] += rho * acc;
    }
}

// The z- and u-updates: v = alpha · G x + (1 − alpha) · z + u; z = v shrunk jointly over its three components
// (v · max(|v| − theta, 0) / |v|, |v|² = Σ_d |v_d|²: isotropic TV); u = v − z.
kernel void tv_update(global const T* x, global T* z, global T* u, R alpha, R theta, IDX n0, IDX n1, IDX n2,
                      IDX frames) {
    const IDX cells = n0 * n1 * n2, count = cells * frames;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const IDX h = g % cells;
        global const T* xf = x + (g - h);
        const IDX i2 = h % n2, i1 = (h / n2) % n1, i0 = h / (n1 * n2);
        const T xv = x[g];
        T v[3];
        R norm2 = 0;
        for (int d = 0; d < 3; d++) {
            const T grad = xv - xf[tv_neighbour(i0, i1, i2, n0, n1, n2, d, -1)];
            v[d] = alpha * grad + ((R)1 - alpha) * z[d * count + g] + u[d * count + g];
            norm2 += RE_DOT(v[d], v[d]);
        }
        const R norm = sqrt(norm2);
        const R keep = (norm > theta) ? (norm - theta) / norm : (R)0;
        for (int d = 0; d < 3; d++) {
            const T zd = keep * v[d];
            z[d * count + g] = zd;
            u[d * count + g] = v[d] - zd;
        }
    }
}
