// The tiled matrix product shared by GEMM and CONVOLUTION (an implicit GEMM): out(m, n) = sum_k a(m, k) b(k, n) for
// every batch (GEMM's batch, CONVOLUTION's group), each of M x N x K specialized into this shader as constants.
// The operator supplies `start(batch)` (per-work-group offsets into private variables), `a_value(m, k)` and
// `b_value(k, n)` (called only inside the matrices), or `a_vec4(m, k)` and `b_vec4(k, n)`: four elements from
// there along the axis the tile loads walk first (A: K or M, B: N or K; its length a multiple of 4), which the
// tensor's memory holds in one aligned 16-byte word; and `store(m, n, value)` or `store_pair` (the epilogue: Alpha,
// Beta * C or Bias, the fused activation, the write).
//
// A work-group of 256 invocations computes a TM x 64 tile of the output (TM = 16 RM): invocation (tx, ty) the RM x 4
// outputs of rows ty RM.., columns 4 tx... K is walked TK at a time: the work-group loads a TM x TK tile of a and a
// TK x 64 tile of b into workgroup memory (LOAD_A, LOAD_B: in the order that walks the tensor's memory contiguously,
// four elements at a time where the operator supplies a_vec4 / b_vec4), then every invocation multiplies them from
// workgroup memory, four columns of b at a time (vec4). Each TK-term block is summed apart and added to the running sums: a blocked
// summation.
// Work-group w (numbered x + y * groups.x) takes the tile (w % TILES_N, (w / TILES_N) % TILES_M) of batch
// w / (TILES_N TILES_M).

var<workgroup> tile_a: array<f32, {TILE_A}>;          // [k][m]
var<workgroup> tile_b: array<vec4<f32>, {TILE_B}>;     // [k][n / 4]

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
    let w = wid.x + wid.y * groups.x;
    if (w >= {TILES}u) { return; }
    let rest = w / {TILES_N}u;
    let n0 = (w % {TILES_N}u) * 64u;
    let m0 = (rest % {TILES_M}u) * {TM}u;
    start(rest / {TILES_M}u);
    let tx = t % 16u;
    let ty = t / 16u;
    var acc: array<vec4<f32>, {RM}>;
    for (var k0 = 0u; k0 < {K}u; k0 += {TK}u) {
{LOAD_A}
{LOAD_B}
        workgroupBarrier();
        var part: array<vec4<f32>, {RM}>;
{ZEROS}
        for (var k = 0u; k < {TK}u; k++) {
            let b = tile_b[k * 16u + tx];
            let a = k * {TM}u + ty * {RM}u;
{PRODUCTS}
        }
{SUMS}
        workgroupBarrier();
    }
{EPILOGUE}
}
