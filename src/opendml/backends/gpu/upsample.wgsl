// UPSAMPLE_2D: output element o (row-major over the output's sizes) is read from the image `image` = o / (OH * OW),
// row oy, column ox. The per-axis tables (worked out once on the host by ops/upsample.py, so every backend reads
// the same indices and weights) hold, per output row (column), the first tap's index, the second tap's index and the
// second tap's float32 weight as bits; NEAREST_NEIGHBOR uses only the first index.
// IMAGES: the input's layout block of the dimensions before height and width; ROWS, COLUMNS: the tables;
// OH, OW: where the output's height and width are stored; XR, XC: the input's row and column element strides.
fn value(o: u32) -> {RAW} {
    let out_width = P[{OW}u];
    let out_height = P[{OH}u];
    let ox = o % out_width;
    let oy = (o / out_width) % out_height;
    let base = offset_of({IMAGES}u, o / (out_width * out_height));
    let row = {ROWS}u + 3u * oy;
    let column = {COLUMNS}u + 3u * ox;
    let top = base + P[row] * P[{XR}u];
    let left = P[column] * P[{XC}u];
{BODY}
}
