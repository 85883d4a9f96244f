// The modified Shepp-Logan head phantom (Toft's higher-contrast intensities), prepended by common.cl.
// Each row: intensity, semi-axes a (x), b (y), c (z), centre x0, y0, and cos, sin of the rotation about z
// (-18 and 18 degrees for the two big inner ellipses; kept precomputed so no work-item evaluates a sine). All centres
// lie at z = 0, so a 2-D image (or the middle slice of a volume) is the classic 2-D phantom.
__constant float ELLIPSES[10][8] = {
    {1.0f, 0.69f, 0.92f, 0.81f, 0.0f, 0.0f, 1.0f, 0.0f},
    {-0.8f, 0.6624f, 0.874f, 0.78f, 0.0f, -0.0184f, 1.0f, 0.0f},
    {-0.2f, 0.11f, 0.31f, 0.22f, 0.22f, 0.0f, 0.9510565163f, -0.3090169944f},
    {-0.2f, 0.16f, 0.41f, 0.28f, -0.22f, 0.0f, 0.9510565163f, 0.3090169944f},
    {0.1f, 0.21f, 0.25f, 0.41f, 0.0f, 0.35f, 1.0f, 0.0f},
    {0.1f, 0.046f, 0.046f, 0.05f, 0.0f, 0.1f, 1.0f, 0.0f},
    {0.1f, 0.046f, 0.046f, 0.05f, 0.0f, -0.1f, 1.0f, 0.0f},
    {0.1f, 0.046f, 0.023f, 0.05f, -0.08f, -0.605f, 1.0f, 0.0f},
    {0.1f, 0.023f, 0.023f, 0.02f, 0.0f, -0.606f, 1.0f, 0.0f},
    {0.1f, 0.023f, 0.046f, 0.02f, 0.06f, -0.605f, 1.0f, 0.0f},
};

// out[k, i, j] over a depth x height x width grid mapped onto [-1, 1]^3 (y up: row 0 is the top of the image).
// `depth` is 1 for a 2-D image, whose single slice sits at z = 0. Dimension 0 walks j, dimension 1 walks the
// (k, i) pairs with the grid stride.
__kernel void shepp_logan(__global T* out, IDX off, IDX s_k, IDX s_i, IDX s_j, IDX depth, IDX height, IDX width)
{
    const IDX j = (IDX)get_global_id(0);
    if (j >= width) return;
    const R x = ((R)(2 * j + 1) - (R)width) / (R)width;
    for (IDX ki = (IDX)get_global_id(1); ki < depth * height; ki += (IDX)get_global_size(1)) {
        const IDX k = ki / height, i = ki - k * height;
        const R y = ((R)height - (R)(2 * i + 1)) / (R)height;
        const R z = depth > 1 ? ((R)(2 * k + 1) - (R)depth) / (R)depth : (R)0;
        R value = 0;
        for (int e = 0; e < 10; ++e) {
            const R c = (R)ELLIPSES[e][6], s = (R)ELLIPSES[e][7];
            const R dx = x - (R)ELLIPSES[e][4], dy = y - (R)ELLIPSES[e][5];
            const R u = (dx * c + dy * s) / (R)ELLIPSES[e][1];
            const R v = (dy * c - dx * s) / (R)ELLIPSES[e][2];
            const R w = z / (R)ELLIPSES[e][3];
            if (u * u + v * v + w * w <= (R)1) value += (R)ELLIPSES[e][0];
        }
        out[off + k * s_k + i * s_i + j * s_j] = FROM_REAL(value);
    }
}
