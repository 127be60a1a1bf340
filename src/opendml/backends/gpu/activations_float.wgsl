// A standalone activation on FLOAT32 or FLOAT16: output element o is activation(input element o), in FLOAT32,
// rounded once to the output's type. IN: the input's layout block (its dimensions merged where its strides allow;
// a zero stride broadcasts).
fn value(o: u32) -> u32 {
    return to_raw_{TYPE}(activation(load_x(offset_of({IN}u, o))));
}
