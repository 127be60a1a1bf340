// REDUCE state of SUM, AVERAGE, L1, L2, SUM_SQUARE and LOG_SUM on FLOAT32 / FLOAT16: a compensated float32 sum
// (see csum_add) of the terms TERM(v), finished by FINISH and rounded once to the output type.
// Placeholders: TERM (an expression of v), FINISH (a function of the state), OUT (the output type's name),
// RAW_OUT (its raw type), REDUCED (where the reduced element count N is stored in P).
alias State = vec2<f32>;

fn state_identity() -> State { return vec2<f32>(-0.0, 0.0); }

fn state_term(v: f32) -> f32 { return {TERM}; }

fn state_add(s: State, e: u32, r: u32) -> State { return csum_add(s, state_term(load_x(e))); }

fn state_combine(a: State, b: State) -> State { return csum_combine(a, b); }

fn state_finish(s: State) -> {RAW_OUT} { return to_raw_{OUT}({FINISH}); }
