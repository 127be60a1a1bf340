// MVN, the fused row pass's tensors (all FLOAT32): Input, Scale, Bias and Output with their loads and store, each
// binding's base element (P[binding]) read once per invocation into a private copy by the entry point (ROW_ENTRY),
// so that no element's access loads a parameter.
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> s: array<u32>;
@group(0) @binding(2) var<storage, read_write> b: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
var<private> x_base: u32;
var<private> s_base: u32;
var<private> b_base: u32;
var<private> out_base: u32;

fn load_x(e: u32) -> f32 { return bitcast<f32>(x[x_base + e]); }
fn load_s(e: u32) -> f32 { return bitcast<f32>(s[s_base + e]); }
fn load_b(e: u32) -> f32 { return bitcast<f32>(b[b_base + e]); }
fn store_raw_out(e: u32, v: u32) { out[out_base + e] = v; }
